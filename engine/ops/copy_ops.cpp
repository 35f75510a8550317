#include "engine/ops/copy_ops.h"

#include <fmt/ranges.h>

#include "engine/copy.h"
#include "engine/ops/detail.h"

namespace rewy {
namespace {

// dst = src (a view of the op's input), after the checks every copy op shares.
void move(const char* op, const char* dst_name, Tensor& dst, const char* src_name, const Tensor& src, bool same_dtype,
          const Stream* s) {
  detail::check_floating(op, src_name, src);
  detail::check_floating(op, dst_name, dst);
  REWY_CHECK(dst.device() == src.device(), "{}: {} is on {} but {} is on {}", op, dst_name, dst.device().str(),
             src_name, src.device().str());
  REWY_CHECK(!same_dtype || dst.dtype() == src.dtype(), "{}: {} is {} but {} is {}; use cast_forward to convert", op,
             dst_name, dst.str(), src_name, src.str());
  detail::check_shape(op, dst_name, dst, src.shape(), src_name);
  const Stream st = detail::op_stream(op, dst, s);
  copy_cast(dst, src, &st);
}

void check_permutation(const char* op, const std::vector<int>& dims, int ndim) {
  std::vector<bool> seen(dims.size(), false);
  bool ok = int(dims.size()) == ndim;
  for (int d : dims) {
    ok = ok && d >= 0 && d < int(dims.size()) && !seen[size_t(d)];
    if (ok) seen[size_t(d)] = true;
  }
  REWY_CHECK(ok, "{}: dims [{}] are not a permutation of the {} dims", op, fmt::join(dims, ", "), ndim);
}

int normalize_dim(const char* op, int d, const Tensor& t) {
  const int n = t.dim();
  REWY_CHECK(d >= -n && d < n, "{}: dim {} out of range for {}", op, d, t.str());
  return d < 0 ? d + n : d;
}

}  // namespace

std::vector<int> inverse_permutation(const std::vector<int>& dims) {
  check_permutation("inverse_permutation", dims, int(dims.size()));
  std::vector<int> inv(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) inv[size_t(dims[i])] = int(i);
  return inv;
}

void permute_forward(Tensor& out, const Tensor& in, const std::vector<int>& dims, const Stream* s) {
  detail::check_defined("permute_forward", "in", in);
  check_permutation("permute_forward", dims, in.dim());
  detail::check_defined("permute_forward", "out", out);
  REWY_CHECK(out.is_contiguous(), "permute_forward: out {} is not contiguous", out.str());
  move("permute_forward", "out", out, "in permuted", in.permute(dims), true, s);
}

void permute_backward(Tensor& din, const Tensor& dout, const std::vector<int>& dims, const Stream* s) {
  detail::check_defined("permute_backward", "dout", dout);
  check_permutation("permute_backward", dims, dout.dim());
  move("permute_backward", "din", din, "dout inversely permuted", dout.permute(inverse_permutation(dims)), true, s);
}

void transpose_forward(Tensor& out, const Tensor& in, int d0, int d1, const Stream* s) {
  detail::check_defined("transpose_forward", "in", in);
  detail::check_defined("transpose_forward", "out", out);
  REWY_CHECK(out.is_contiguous(), "transpose_forward: out {} is not contiguous", out.str());
  const Tensor t = in.transpose(normalize_dim("transpose_forward", d0, in), normalize_dim("transpose_forward", d1, in));
  move("transpose_forward", "out", out, "in transposed", t, true, s);
}

void transpose_backward(Tensor& din, const Tensor& dout, int d0, int d1, const Stream* s) {
  detail::check_defined("transpose_backward", "dout", dout);
  const Tensor t =
      dout.transpose(normalize_dim("transpose_backward", d0, dout), normalize_dim("transpose_backward", d1, dout));
  move("transpose_backward", "din", din, "dout transposed", t, true, s);
}

void cast_forward(Tensor& out, const Tensor& in, const Stream* s) { move("cast_forward", "out", out, "in", in, false, s); }
void cast_backward(Tensor& din, const Tensor& dout, const Stream* s) {
  move("cast_backward", "din", din, "dout", dout, false, s);
}

void copy_forward(Tensor& out, const Tensor& in, const Stream* s) { move("copy_forward", "out", out, "in", in, true, s); }
void copy_backward(Tensor& din, const Tensor& dout, const Stream* s) {
  move("copy_backward", "din", din, "dout", dout, true, s);
}

Tensor permute(const Tensor& in, const std::vector<int>& dims, const Stream* s) {
  detail::check_defined("permute", "in", in);
  check_permutation("permute", dims, in.dim());
  Tensor out = Tensor::empty(in.permute(dims).shape(), in.dtype(), in.device(), s);
  permute_forward(out, in, dims, s);
  return out;
}

Tensor transpose(const Tensor& in, int d0, int d1, const Stream* s) {
  detail::check_defined("transpose", "in", in);
  const Tensor t = in.transpose(normalize_dim("transpose", d0, in), normalize_dim("transpose", d1, in));
  Tensor out = Tensor::empty(t.shape(), in.dtype(), in.device(), s);
  transpose_forward(out, in, d0, d1, s);
  return out;
}

Tensor cast(const Tensor& in, DType dt, const Stream* s) {
  detail::check_defined("cast", "in", in);
  Tensor out = Tensor::empty(in.shape(), dt, in.device(), s);
  cast_forward(out, in, s);
  return out;
}

}  // namespace rewy
