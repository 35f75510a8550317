#include "engine/ops/elementwise.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "engine/copy.h"
#include "engine/ops/detail.h"

namespace rewy {
namespace {

using detail::backend;
using detail::check_operand;
using detail::check_shape;

// b's shape is a's or a trailing part of it.
bool is_trailing_shape(const Shape& b, const Shape& a) {
  return b.size() <= a.size() && std::equal(b.begin(), b.end(), a.end() - std::ptrdiff_t(b.size()));
}

void check_trailing(const char* op, const char* name, const Tensor& t, const Shape& full, const char* of) {
  REWY_CHECK(is_trailing_shape(t.shape(), full), "{}: {} has shape {}, expected {} or a trailing part of it ({})",
             op, name, shape_str(t.shape()), shape_str(full), of);
}

}  // namespace

const char* unary_name(Unary op) {
  switch (op) {
    case Unary::Exp: return "exp";
    case Unary::Log: return "log";
    case Unary::Sigmoid: return "sigmoid";
    case Unary::Silu: return "silu";
    case Unary::Softplus: return "softplus";
    case Unary::LogSigmoid: return "logsigmoid";
    case Unary::Tanh: return "tanh";
    case Unary::Square: return "square";
    case Unary::Sqrt: return "sqrt";
    case Unary::Rsqrt: return "rsqrt";
  }
  return "?";
}

bool unary_backward_reads_x(Unary op) {
  return op == Unary::Log || op == Unary::Silu || op == Unary::Softplus || op == Unary::LogSigmoid ||
         op == Unary::Square;
}
bool unary_backward_reads_y(Unary op) { return !unary_backward_reads_x(op); }

const char* binary_name(Binary op) {
  switch (op) {
    case Binary::Add: return "add";
    case Binary::Sub: return "sub";
    case Binary::Mul: return "mul";
  }
  return "?";
}

void unary_forward(Unary op, Tensor& y, const Tensor& x, const Stream* s) {
  const std::string name = fmt::format("unary_forward({})", unary_name(op));
  detail::check_floating(name.c_str(), "x", x);
  check_operand(name.c_str(), "x", x, x.dtype(), x.device());
  check_operand(name.c_str(), "y", y, x.dtype(), x.device());
  check_shape(name.c_str(), "y", y, x.shape(), "the shape of x");
  const Stream st = detail::op_stream(name.c_str(), x, s);
  if (x.numel() == 0) return;
  backend(x.device(), name.c_str()).elementwise->unary_forward(op, y, x, st);
}

void unary_backward(Unary op, Tensor& dx, const Tensor& dy, const Tensor& x, const Tensor& y, const Stream* s) {
  const std::string name = fmt::format("unary_backward({})", unary_name(op));
  const char* n = name.c_str();
  detail::check_floating(n, "dy", dy);
  check_operand(n, "dy", dy, dy.dtype(), dy.device());
  check_operand(n, "dx", dx, dy.dtype(), dy.device());
  check_shape(n, "dx", dx, dy.shape(), "the shape of dy");
  const bool reads_x = unary_backward_reads_x(op);
  const Tensor& saved = reads_x ? x : y;
  REWY_CHECK(saved.defined(), "{}: needs {} ({})", n, reads_x ? "x" : "y",
             reads_x ? "the forward's input" : "the forward's output");
  check_operand(n, reads_x ? "x" : "y", saved, dy.dtype(), dy.device());
  check_shape(n, reads_x ? "x" : "y", saved, dy.shape(), "the shape of dy");
  const Stream st = detail::op_stream(n, dy, s);
  if (dy.numel() == 0) return;
  backend(dy.device(), n).elementwise->unary_backward(op, dx, dy, reads_x ? x : Tensor{}, reads_x ? Tensor{} : y, st);
}

Tensor unary(Unary op, const Tensor& x, const Stream* s) {
  Tensor y = Tensor::empty(x.shape(), x.dtype(), x.device(), s);
  unary_forward(op, y, x, s);
  return y;
}

void binary_forward(Binary op, Tensor& out, const Tensor& a, const Tensor& b, const Stream* s) {
  const std::string name = fmt::format("binary_forward({})", binary_name(op));
  const char* n = name.c_str();
  detail::check_floating(n, "a", a);
  check_operand(n, "a", a, a.dtype(), a.device());
  check_operand(n, "b", b, a.dtype(), a.device());
  check_operand(n, "out", out, a.dtype(), a.device());
  check_trailing(n, "b", b, a.shape(), "the shape of a");
  check_shape(n, "out", out, a.shape(), "the shape of a");
  const Stream st = detail::op_stream(n, a, s);
  if (a.numel() == 0) return;
  backend(a.device(), n).elementwise->binary_forward(op, out, a, b, st);
}

void binary_backward(Binary op, Tensor& da, Tensor& db, const Tensor& dout, const Tensor& a, const Tensor& b,
                     bool accumulate_db, const Stream* s) {
  const std::string name = fmt::format("binary_backward({})", binary_name(op));
  const char* n = name.c_str();
  detail::check_floating(n, "dout", dout);
  const DType dt = dout.dtype();
  const Device dev = dout.device();
  check_operand(n, "dout", dout, dt, dev);
  const bool mul = op == Binary::Mul;
  if (da.defined()) {
    check_operand(n, "da", da, dt, dev);
    check_shape(n, "da", da, dout.shape(), "the shape of dout");
    if (mul) {
      check_operand(n, "b", b, dt, dev);
      check_trailing(n, "b", b, dout.shape(), "the shape of dout");
    }
  }
  if (db.defined()) {
    check_operand(n, "db", db, dt, dev);
    check_trailing(n, "db", db, dout.shape(), "the shape of dout");
    if (b.defined()) check_shape(n, "db", db, b.shape(), "the shape of b");
    if (mul) {
      check_operand(n, "a", a, dt, dev);
      check_shape(n, "a", a, dout.shape(), "the shape of dout");
    }
  }
  const Stream st = detail::op_stream(n, dout, s);
  if (dout.numel() == 0) {  // db sums over no rows
    if (db.defined() && !accumulate_db) fill(db, 0.0, &st);
    return;
  }
  const detail::ElementwiseBackend& be = *backend(dev, n).elementwise;
  // db first: da may alias dout.
  if (db.defined()) be.binary_backward_b(op, db, dout, mul ? a : Tensor{}, accumulate_db, st);
  if (da.defined()) be.binary_backward_a(op, da, dout, mul ? b : Tensor{}, st);
}

Tensor binary(Binary op, const Tensor& a, const Tensor& b, const Stream* s) {
  Tensor out = Tensor::empty(a.shape(), a.dtype(), a.device(), s);
  binary_forward(op, out, a, b, s);
  return out;
}

namespace {
void axpby_named(const char* n, Tensor& y, double alpha, const Tensor& x, double beta, const Stream* s) {
  detail::check_floating(n, "x", x);
  check_operand(n, "x", x, x.dtype(), x.device());
  check_operand(n, "y", y, x.dtype(), x.device());
  check_shape(n, "y", y, x.shape(), "the shape of x");
  const Stream st = detail::op_stream(n, x, s);
  if (x.numel() == 0) return;
  backend(x.device(), n).elementwise->axpby(y, alpha, x, beta, st);
}
}  // namespace

void axpby(Tensor& y, double alpha, const Tensor& x, double beta, const Stream* s) {
  axpby_named("axpby", y, alpha, x, beta, s);
}
void scale_forward(Tensor& out, const Tensor& x, double alpha, const Stream* s) {
  axpby_named("scale_forward", out, alpha, x, 0.0, s);
}
void scale_backward(Tensor& dx, const Tensor& dout, double alpha, const Stream* s) {
  axpby_named("scale_backward", dx, alpha, dout, 0.0, s);
}

}  // namespace rewy
