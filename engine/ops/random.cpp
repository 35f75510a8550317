#include "engine/ops/random.h"

#include "engine/ops/detail.h"

namespace rewy {
namespace {

const detail::RandomBackend& random_backend(const char* op, const Tensor& t, const Stream* s, Stream& st) {
  detail::check_floating(op, "t", t);
  detail::check_operand(op, "t", t, t.dtype(), t.device());
  st = detail::op_stream(op, t, s);
  return *detail::backend(t.device(), op).random;
}

}  // namespace

void fill_uniform(Tensor& t, uint64_t seed, uint64_t offset, double lo, double hi, const Stream* s) {
  Stream st;
  const auto& be = random_backend("fill_uniform", t, s, st);
  REWY_CHECK(lo <= hi, "fill_uniform: empty range [{}, {})", lo, hi);
  if (t.numel() > 0) be.fill(t, false, seed, offset, lo, hi, st);
}

void fill_normal(Tensor& t, uint64_t seed, uint64_t offset, double mean, double stddev, const Stream* s) {
  Stream st;
  const auto& be = random_backend("fill_normal", t, s, st);
  REWY_CHECK(stddev >= 0, "fill_normal: negative stddev {}", stddev);
  if (t.numel() > 0) be.fill(t, true, seed, offset, mean, stddev, st);
}

}  // namespace rewy
