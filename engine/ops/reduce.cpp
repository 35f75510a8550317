#include "engine/ops/reduce.h"

#include "engine/copy.h"
#include "engine/ops/detail.h"

namespace rewy {
namespace {

using detail::check_operand;
using detail::Reduce;

Shape drop_last(const Shape& s) { return Shape(s.begin(), s.end() - 1); }

// `t` is `full` reduced over its last dim: that dim dropped, or kept as 1.
void check_reduced(const char* op, const char* name, const Tensor& t, const Tensor& full, const char* full_name) {
  REWY_CHECK(full.dim() >= 1, "{}: {} is {}, expected at least one dim", op, full_name, full.str());
  Shape keep = full.shape();
  keep.back() = 1;
  REWY_CHECK(t.shape() == drop_last(full.shape()) || t.shape() == keep,
             "{}: {} has shape {}, expected {} or {} ({} {} reduced over its last dim)", op, name,
             shape_str(t.shape()), shape_str(drop_last(full.shape())), shape_str(keep), full_name,
             shape_str(full.shape()));
}

void check_argmax(const char* op, const Tensor& argmax, const Tensor& full, const char* full_name) {
  check_operand(op, "argmax", argmax, DType::I64, full.device());
  check_reduced(op, "argmax", argmax, full, full_name);
}

void last_forward(const char* op, Reduce r, Tensor& out, const Tensor* argmax, const Tensor& in, const Stream* s) {
  detail::check_floating(op, "in", in);
  check_operand(op, "in", in, in.dtype(), in.device());
  check_operand(op, "out", out, in.dtype(), in.device());
  check_reduced(op, "out", out, in, "in");
  REWY_CHECK(in.size(-1) >= 1, "{}: in {} has an empty last dim", op, in.str());
  if (argmax) check_argmax(op, *argmax, in, "in");
  const Stream st = detail::op_stream(op, in, s);
  if (in.numel() == 0) return;
  detail::backend(in.device(), op).reduce->last(r, out, argmax ? *argmax : Tensor{}, in, st);
}

void last_backward(const char* op, Reduce r, Tensor& din, const Tensor& dout, const Tensor* argmax, const Stream* s) {
  detail::check_floating(op, "dout", dout);
  check_operand(op, "dout", dout, dout.dtype(), dout.device());
  check_operand(op, "din", din, dout.dtype(), dout.device());
  check_reduced(op, "dout", dout, din, "din");
  REWY_CHECK(din.size(-1) >= 1, "{}: din {} has an empty last dim", op, din.str());
  if (argmax) check_argmax(op, *argmax, din, "din");
  const Stream st = detail::op_stream(op, dout, s);
  if (din.numel() == 0) return;
  detail::backend(din.device(), op).reduce->last_backward(r, din, dout, argmax ? *argmax : Tensor{}, st);
}

void all_forward(const char* op, Reduce r, Tensor& out, const Tensor& in, const Stream* s) {
  detail::check_floating(op, "in", in);
  check_operand(op, "in", in, in.dtype(), in.device());
  check_operand(op, "out", out, in.dtype(), in.device());
  REWY_CHECK(out.numel() == 1, "{}: out has shape {}, expected one element ([] or [1])", op, shape_str(out.shape()));
  REWY_CHECK(r != Reduce::Mean || in.numel() > 0, "{}: mean of the empty tensor {}", op, in.str());
  const Stream st = detail::op_stream(op, in, s);
  if (in.numel() == 0) return fill(out, 0.0, &st);
  detail::backend(in.device(), op).reduce->all(r, out, in, st);
}

void all_backward(const char* op, Reduce r, Tensor& din, const Tensor& dout, const Stream* s) {
  detail::check_floating(op, "dout", dout);
  check_operand(op, "dout", dout, dout.dtype(), dout.device());
  check_operand(op, "din", din, dout.dtype(), dout.device());
  REWY_CHECK(dout.numel() == 1, "{}: dout has shape {}, expected one element ([] or [1])", op,
             shape_str(dout.shape()));
  const Stream st = detail::op_stream(op, dout, s);
  if (din.numel() == 0) return;
  detail::backend(din.device(), op).reduce->all_backward(r, din, dout, st);
}

Tensor allocate_reduced(const Tensor& in, const Shape& shape, const Stream* s) {
  return Tensor::empty(shape, in.dtype(), in.device(), s);
}

}  // namespace

void sum_last_forward(Tensor& out, const Tensor& in, const Stream* s) {
  last_forward("sum_last_forward", Reduce::Sum, out, nullptr, in, s);
}
void sum_last_backward(Tensor& din, const Tensor& dout, const Stream* s) {
  last_backward("sum_last_backward", Reduce::Sum, din, dout, nullptr, s);
}
void mean_last_forward(Tensor& out, const Tensor& in, const Stream* s) {
  last_forward("mean_last_forward", Reduce::Mean, out, nullptr, in, s);
}
void mean_last_backward(Tensor& din, const Tensor& dout, const Stream* s) {
  last_backward("mean_last_backward", Reduce::Mean, din, dout, nullptr, s);
}
void max_last_forward(Tensor& out, Tensor& argmax, const Tensor& in, const Stream* s) {
  last_forward("max_last_forward", Reduce::Max, out, &argmax, in, s);
}
void max_last_backward(Tensor& din, const Tensor& dout, const Tensor& argmax, const Stream* s) {
  last_backward("max_last_backward", Reduce::Max, din, dout, &argmax, s);
}
void sum_all_forward(Tensor& out, const Tensor& in, const Stream* s) {
  all_forward("sum_all_forward", Reduce::Sum, out, in, s);
}
void sum_all_backward(Tensor& din, const Tensor& dout, const Stream* s) {
  all_backward("sum_all_backward", Reduce::Sum, din, dout, s);
}
void mean_all_forward(Tensor& out, const Tensor& in, const Stream* s) {
  all_forward("mean_all_forward", Reduce::Mean, out, in, s);
}
void mean_all_backward(Tensor& din, const Tensor& dout, const Stream* s) {
  all_backward("mean_all_backward", Reduce::Mean, din, dout, s);
}

Tensor sum_last(const Tensor& in, const Stream* s) {
  Tensor out = allocate_reduced(in, in.dim() ? drop_last(in.shape()) : Shape{}, s);
  sum_last_forward(out, in, s);
  return out;
}
Tensor mean_last(const Tensor& in, const Stream* s) {
  Tensor out = allocate_reduced(in, in.dim() ? drop_last(in.shape()) : Shape{}, s);
  mean_last_forward(out, in, s);
  return out;
}
Tensor sum_all(const Tensor& in, const Stream* s) {
  Tensor out = allocate_reduced(in, {}, s);
  sum_all_forward(out, in, s);
  return out;
}
Tensor mean_all(const Tensor& in, const Stream* s) {
  Tensor out = allocate_reduced(in, {}, s);
  mean_all_forward(out, in, s);
  return out;
}

}  // namespace rewy
