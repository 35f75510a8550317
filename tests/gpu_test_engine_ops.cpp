// Every CUDA elementwise, reduction, copy and random op against its CPU twin, on a stream of
// its own, with outputs poisoned (NaN) before each run. Skipped without a device.
#include <gtest/gtest.h>

#include "engine/ops/copy_ops.h"
#include "engine/ops/elementwise.h"
#include "engine/ops/random.h"
#include "engine/ops/reduce.h"
#include "test_engine_util.h"

using namespace rewy;
using namespace rewy::test;

namespace {

const DType kDtypes[] = {DType::F32, DType::BF16, DType::F64};

struct Domain {
  Unary op;
  double lo, hi;
};
const Domain kDomains[] = {{Unary::Exp, -4, 4},      {Unary::Log, 0.1, 4},        {Unary::Sigmoid, -8, 8},
                           {Unary::Silu, -8, 8},     {Unary::Softplus, -8, 8},    {Unary::LogSigmoid, -8, 8},
                           {Unary::Tanh, -4, 4},     {Unary::Square, -3, 3},      {Unary::Sqrt, 0.1, 4},
                           {Unary::Rsqrt, 0.1, 4}};

// Twins evaluate the same formula with different libm implementations (CUDA's are within 2
// ulp) and FMA contraction: each within ~10 units of roundoff of the compute type of the true
// value, so within 32 of each other. bf16 results may then round to neighbours: one bf16 ulp.
double twin_atol(DType dt) { return 32 * unit_roundoff(dt == DType::BF16 ? DType::F32 : dt); }
double twin_rtol(DType dt) { return (dt == DType::BF16 ? 2 * unit_roundoff(DType::BF16) : 0.0) + twin_atol(dt); }

// Multiples of 1/64 in [-2, 2]: exact in bf16, and every partial sum (or sum of pairwise
// products) of the sizes below is exact in f32, whatever the order. GPU and CPU sums must then
// agree to the bit: a dropped or doubled element cannot hide in a rounding tolerance.
Tensor summable(const Shape& shape, DType dt, uint64_t seed, uint64_t offset) {
  std::vector<double> v = uniform(shape, DType::F64, seed, offset).to_vector();
  for (double& x : v) x = std::round(x * 64) / 64;
  return Tensor::from_vector(v, shape, dt);
}

using GpuOps = GpuStreamTest;

TEST_F(GpuOps, UnaryForwardAndBackwardMatchCpu) {
  REWY_TEST_SEED(seed);
  const Shape shape{37, 129};  // not a multiple of the block
  for (const Domain& d : kDomains)
    for (DType dt : kDtypes) {
      SCOPED_TRACE(fmt::format("{} {}", unary_name(d.op), dtype_name(dt)));
      const Tensor x = uniform(shape, dt, seed, 0, d.lo, d.hi), dy = uniform(shape, dt, seed, 1);
      const Tensor y = unary(d.op, x);
      Tensor dx = Tensor::empty(shape, dt);
      unary_backward(d.op, dx, dy, x, y);

      const Tensor xg = gpu(x), yg_in = gpu(y), dyg = gpu(dy);
      Tensor yg = nan(shape, dt), dxg = nan(shape, dt);
      unary_forward(d.op, yg, xg, &s());
      // The backward gets the CPU's y, so that it is compared on identical inputs.
      unary_backward(d.op, dxg, dyg, xg, yg_in, &s());
      EXPECT_TRUE(all_close(host(yg), y.to_vector(), twin_rtol(dt), twin_atol(dt)));
      const std::vector<double> dxv = dx.to_vector();
      EXPECT_TRUE(all_close(host(dxg), dxv, twin_rtol(dt), twin_atol(dt) * std::max(1.0, max_abs(dxv))));
    }
}

TEST_F(GpuOps, BinaryAndAxpbyMatchCpu) {
  REWY_TEST_SEED(seed);
  const Shape a_shape{9, 33, 65};
  for (Binary op : kAllBinary)
    for (const Shape& b_shape : {Shape{9, 33, 65}, Shape{33, 65}, Shape{65}})
      for (DType dt : kDtypes) {
        SCOPED_TRACE(fmt::format("{} b{} {}", binary_name(op), shape_str(b_shape), dtype_name(dt)));
        // db sums up to 297 products k/4096 (|k| <= 2^14): below 2^11 in steps of 2^-12, exact.
        const Tensor a = summable(a_shape, dt, seed, 0), b = summable(b_shape, dt, seed, 1);
        const Tensor g = summable(a_shape, dt, seed, 2), db0 = summable(b_shape, dt, seed, 3);
        const Tensor out = binary(op, a, b);
        Tensor da = Tensor::empty(a_shape, dt), db = db0.clone();
        binary_backward(op, da, db, g, a, b, /*accumulate_db=*/true);

        Tensor outg = nan(a_shape, dt), dag = nan(a_shape, dt), dbg = gpu(db0);
        binary_forward(op, outg, gpu(a), gpu(b), &s());
        binary_backward(op, dag, dbg, gpu(g), gpu(a), gpu(b), true, &s());
        // One correctly rounded operation per element, and exact sums: identical on both sides.
        EXPECT_EQ(host(outg), out.to_vector());
        EXPECT_EQ(host(dag), da.to_vector());
        EXPECT_EQ(host(dbg), db.to_vector());
      }
  for (DType dt : kDtypes) {
    SCOPED_TRACE(dtype_name(dt));
    const Tensor x = uniform({1000}, dt, seed, 4), y0 = uniform({1000}, dt, seed, 5);
    Tensor y = y0.clone(), yg = gpu(y0), zg = nan({1000}, dt), z = Tensor::empty({1000}, dt);
    axpby(y, 0.5, x, -1.5);
    axpby(yg, 0.5, gpu(x), -1.5, &s());
    scale_forward(z, x, 3.0);
    scale_forward(zg, gpu(x), 3.0, &s());  // beta 0: the NaN in zg is never read
    EXPECT_TRUE(all_close(host(yg), y.to_vector(), twin_rtol(dt), twin_atol(dt)));
    EXPECT_EQ(host(zg), z.to_vector());
  }
}

TEST_F(GpuOps, ReductionsMatchCpu) {
  REWY_TEST_SEED(seed);
  // Row sums below 2^16 and totals below 2^17 in steps of 1/64: exact in f32.
  for (const Shape& shape : {Shape{7, 1000}, Shape{300, 3}, Shape{1}, Shape{3, 20000}})
    for (DType dt : kDtypes) {
      SCOPED_TRACE(fmt::format("{} {}", shape_str(shape), dtype_name(dt)));
      const Tensor x = summable(shape, dt, seed, 0);
      const Shape rs(shape.begin(), shape.end() - 1);
      // A mean divides the exact sum once: the GPU in the compute type, the CPU in f64 and
      // then rounding to the dtype (through f32 for bf16): neighbours at most.
      const double mean_rtol = 2 * unit_roundoff(dt);

      Tensor sum_g = nan(rs, dt), mean_g = nan(rs, dt), max_g = nan(rs, dt);
      Tensor idx_g = Tensor::full(rs, -1, DType::I64, cuda(0), &s());
      const Tensor xg = gpu(x);
      sum_last_forward(sum_g, xg, &s());
      mean_last_forward(mean_g, xg, &s());
      max_last_forward(max_g, idx_g, xg, &s());
      Tensor mx = Tensor::empty(rs, dt), idx = Tensor::empty(rs, DType::I64);
      max_last_forward(mx, idx, x);
      EXPECT_EQ(host(sum_g), sum_last(x).to_vector());
      EXPECT_TRUE(all_close(host(mean_g), mean_last(x).to_vector(), mean_rtol, 0.0));
      EXPECT_EQ(host(max_g), mx.to_vector());
      EXPECT_EQ(host(idx_g), idx.to_vector());  // ties (many, on this grid) go to the first index

      Tensor all_g = nan({}, dt), mall_g = nan({1}, dt);
      sum_all_forward(all_g, xg, &s());
      mean_all_forward(mall_g, xg, &s());
      EXPECT_EQ(host(all_g), sum_all(x).to_vector());
      EXPECT_TRUE(all_close(host(mall_g), mean_all(x).to_vector(), mean_rtol, 0.0));

      // Backward: broadcasts of dout (mean: one division): identical on both sides.
      const Tensor g = uniform(rs, dt, seed, 1), g1 = uniform({1}, dt, seed, 2);
      Tensor d = Tensor::empty(shape, dt), dg = nan(shape, dt);
      using Bwd = void (*)(Tensor&, const Tensor&, const Stream*);
      for (Bwd bwd : {Bwd(sum_last_backward), Bwd(mean_last_backward)}) {
        bwd(d, g, nullptr);
        bwd(dg, gpu(g), &s());
        EXPECT_EQ(host(dg), d.to_vector());
      }
      max_last_backward(d, g, idx);
      max_last_backward(dg, gpu(g), gpu(idx), &s());
      EXPECT_EQ(host(dg), d.to_vector());
      for (Bwd bwd : {Bwd(sum_all_backward), Bwd(mean_all_backward)}) {
        bwd(d, g1, nullptr);
        bwd(dg, gpu(g1), &s());
        EXPECT_EQ(host(dg), d.to_vector());
      }
    }
}

TEST_F(GpuOps, CopyOpsMatchCpu) {
  REWY_TEST_SEED(seed);
  const Tensor x = uniform({4, 6, 5, 3}, DType::F32, seed, 0);
  const std::vector<int> dims{3, 1, 0, 2};
  const Tensor ref = permute(x.slice(1, 1, 5), dims);  // a strided view, permuted
  Tensor out = nan(ref.shape(), DType::F32);
  permute_forward(out, gpu(x).slice(1, 1, 5), dims, &s());
  EXPECT_EQ(host(out), ref.to_vector());
  Tensor back = nan({4, 4, 5, 3}, DType::F32);
  permute_backward(back, out, dims, &s());
  EXPECT_EQ(host(back), x.slice(1, 1, 5).contiguous().to_vector());
  Tensor tg = nan({3, 6, 5, 4}, DType::F32);
  transpose_forward(tg, gpu(x), 0, 3, &s());
  EXPECT_EQ(host(tg), transpose(x, 0, 3).to_vector());
  for (DType dt : {DType::BF16, DType::F64}) {  // casts round the same way on both sides
    Tensor c = nan(x.shape(), dt);
    cast_forward(c, gpu(x), &s());
    EXPECT_EQ(host(c), cast(x, dt).to_vector());
  }
}

TEST_F(GpuOps, RandomFillsMatchCpu) {
  REWY_TEST_SEED(seed);
  for (DType dt : kDtypes) {
    SCOPED_TRACE(dtype_name(dt));
    const Shape shape{1000, 37};
    Tensor u = Tensor::empty(shape, dt), ug = nan(shape, dt);
    fill_uniform(u, seed, 5, -3.0, 2.0);
    fill_uniform(ug, seed, 5, -3.0, 2.0, &s());
    EXPECT_EQ(host(ug), u.to_vector());  // bit-identical: the same integer and fma arithmetic
    Tensor z = Tensor::empty(shape, dt), zg = nan(shape, dt);
    fill_normal(z, seed, 6, 0.5, 2.0);
    fill_normal(zg, seed, 6, 0.5, 2.0, &s());
    // The GPU's f64 log/sin/cos differ from glibc's in the last bits: the rounded values are
    // equal or neighbours (one ulp of the dtype; an f64 ulp of z is far below).
    const double ulp = dt == DType::F64 ? 1e-13 : 2 * unit_roundoff(dt);
    EXPECT_TRUE(all_close(host(zg), z.to_vector(), ulp, ulp));
  }
}

}  // namespace
