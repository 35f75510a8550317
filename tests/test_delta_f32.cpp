// The chunk path in f32 against f64 on the same inputs: at the benchmark's gates, at KDA's safe-gate
// bound (every step at -5), near the limit of the §6 centred sub-chunk scheme (-10.6 per step), and
// beyond it where the pairwise fallback takes over. Then the bf16-rounding twin of a GPU pipeline.
#include <cstring>

#include "kernels/delta/cpu/local_gemm.h"
#include "test_delta_util.h"

using namespace rewy;
using namespace rewy::delta;
using namespace rewy::delta::test;

namespace {

// Measured worst relative L2 errors of f32 against f64 (docs/delta-cpu.md): forward <= 4e-6,
// gradients <= 3e-5 (dg at -30 per step; the f32 in-chunk cumsum G loses ~|G| 2^-24 in every
// exponent). The bars leave a factor >= 4 for other seeds; an exponent overflow or a dropped term
// is >= 1e-3.
constexpr double kForwardTol = 2e-5;
constexpr double kBackwardTol = 1e-4;

Problem to_f64(Problem p) {
  for (Tensor* t : {&p.in.q, &p.in.k, &p.in.v, &p.in.beta, &p.in.g, &p.in.b, &p.in.w, &p.in.h0, &p.dout, &p.dht})
    if (t->defined()) *t = t->to(DType::F64);
  return p;
}

bool finite(const ForwardResult& f, const Grads& g) {
  if (!all_finite(f.o) || !all_finite(f.ht)) return false;
  for (const auto& [n, t] : named(g))
    if (t.defined() && !all_finite(t)) return false;
  return true;
}

// Runs f32 and f64 on the same (f32-representable) inputs; returns the pairwise-block count of f32.
// `scaled_by_decay`: dg, dh0 and db act through the decayed state e^g S and vanish with it; at
// -100 per step they are ~e^-100 (f32 subnormals) and only their finiteness is checked.
int64_t check_f32(const Case& c, BackwardAlgo algo, bool skip_scaled_by_decay = false) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(fmt::format("{} {} seed={}", c.str(), name(algo), seed));
  const Problem p32 = make_problem(c, seed), p64 = to_f64(p32);
  const Config cfg = config(c.variant, Impl::Chunk, algo);
  const ForwardResult r64 = forward(cfg, p64.in);
  const Grads g64 = backward(cfg, p64.in, r64, p64.dout, p64.dht);
  cpu::GemmRecorder rec;
  const ForwardResult r32 = forward(cfg, p32.in);
  const Grads g32 = backward(cfg, p32.in, r32, p32.dout, p32.dht);
  EXPECT_TRUE(finite(r32, g32));
  EXPECT_LT(rel_err(r32.o, r64.o), kForwardTol);
  EXPECT_LT(rel_err(r32.ht, r64.ht), kForwardTol);
  const auto n32 = named(g32), n64 = named(g64);
  for (size_t i = 0; i < n32.size(); ++i) {
    const std::string n = n32[i].first;
    EXPECT_EQ(n32[i].second.defined(), n64[i].second.defined()) << n;
    if (!n64[i].second.defined() || !n32[i].second.defined() || (skip_scaled_by_decay && (n == "dg" || n == "dh0" || n == "db"))) continue;
    EXPECT_LT(rel_err(n32[i].second, n64[i].second), kBackwardTol) << "f32 vs f64: " << n;
  }
  return rec.pairwise_blocks();
}

Case f32_case(Variant v, Gates gates, double gate) {
  Case c;
  c.variant = v, c.T = 200, c.dtype = DType::F32, c.gates = gates, c.gate = gate;
  return c;
}

class DeltaF32 : public testing::TestWithParam<Variant> {};

// Up to a per-step log-decay of -10.6 every 16-row block has span/2 <= 79.5: centred, no fallback.
TEST_P(DeltaF32, WithinToleranceDownToTheCentredBound) {
  const std::pair<Gates, double> gates[] = {
      {Gates::Bench, 0.0}, {Gates::Uniform, -5.0}, {Gates::Constant, -5.0}, {Gates::Constant, -10.6}};
  for (const auto& [kind, gate] : gates)
    for (BackwardAlgo algo : {BackwardAlgo::ReWY, BackwardAlgo::Baseline})
      EXPECT_EQ(check_f32(f32_case(GetParam(), kind, gate), algo), 0);
}

// Beyond it, channel gates evaluate the affected diagonal blocks pair by pair (every factor
// e^{G_i − G_j} <= 1); scalar gates need no fallback (e^{G_i − G_j} is only formed for i >= j).
TEST_P(DeltaF32, BeyondTheBoundFallsBackPairwise) {
  for (const auto& [kind, gate] : {std::pair{Gates::Uniform, -30.0}, std::pair{Gates::Constant, -100.0}}) {
    const int64_t pairwise =
        check_f32(f32_case(GetParam(), kind, gate), BackwardAlgo::ReWY, kind == Gates::Constant);
    if (channel_gate(GetParam())) {
      EXPECT_GT(pairwise, 0);
    } else {
      EXPECT_EQ(pairwise, 0);
    }
  }
}

bool bf16_exact(const Tensor& t) {
  for (double x : t.to_vector())
    if (double(round_bf16(float(x))) != x) return false;
  return true;
}

Problem bf16_inputs(Problem p) {  // q k v beta b w dout rounded; g h0 dht stay f32
  for (Tensor* t : {&p.in.q, &p.in.k, &p.in.v, &p.in.beta, &p.in.b, &p.in.w, &p.dout})
    if (t->defined()) *t = t->to(DType::BF16).to(DType::F32);
  return p;
}

bool same_bits(const Tensor& a, const Tensor& b) {
  if (a.defined() != b.defined()) return false;
  return !a.defined() || (a.numel() == b.numel() && std::memcmp(a.data_ptr(), b.data_ptr(), a.nbytes()) == 0);
}

// round_to_bf16: what a bf16 GPU pipeline stores, computed with f32 arithmetic.
TEST_P(DeltaF32, Bf16TwinRoundsInputsIntermediatesAndOutputs) {
  Case c = f32_case(GetParam(), Gates::Uniform, -5.0);
  c.T = 150;
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(fmt::format("{} seed={}", c.str(), seed));
  const Problem raw = make_problem(c, seed), pre = bf16_inputs(raw), ref = to_f64(pre);
  Config cfg = config(c.variant, Impl::Chunk);
  const ForwardResult r64 = forward(cfg, ref.in);
  const Grads g64 = backward(cfg, ref.in, r64, ref.dout, ref.dht);
  const ForwardResult r32 = forward(cfg, pre.in);
  const Grads g32 = backward(cfg, pre.in, r32, pre.dout, pre.dht);
  cfg.round_to_bf16 = true;
  const ForwardResult rb = forward(cfg, raw.in);
  const Grads gb = backward(cfg, raw.in, rb, raw.dout, raw.dht);

  // Inputs are rounded inside: pre-rounded inputs give the same bits.
  const ForwardResult rb_pre = forward(cfg, pre.in);
  const Grads gb_pre = backward(cfg, pre.in, rb_pre, pre.dout, pre.dht);
  EXPECT_TRUE(same_bits(rb.o, rb_pre.o));
  for (size_t i = 0; i < named(gb).size(); ++i)
    EXPECT_TRUE(same_bits(named(gb)[i].second, named(gb_pre)[i].second)) << named(gb)[i].first;

  // o, dq, dk, dv, dbeta, db, dw are bf16 values; ht, dg, dh0 stay f32.
  for (const Tensor& t : {rb.o, gb.dq, gb.dk, gb.dv, gb.dbeta, gb.db, gb.dw}) {
    if (t.defined()) {
      EXPECT_TRUE(bf16_exact(t));
    }
  }
  for (const Tensor& t : {rb.ht, gb.dg, gb.dh0}) {
    if (t.defined()) {
      EXPECT_FALSE(bf16_exact(t));
    }
  }

  // The rounded intermediates show: relative errors at the bf16 level (2^-8 = 3.9e-3 per rounding,
  // several roundings deep, averaged by the L2 norm): measured 2.7e-3 .. 8.7e-3 over 20 seeds per
  // variant, FLA's bf16 kernels 1.9e-3 .. 5.8e-3 (bench/README.md). The bars are 2.5x either side;
  // plain f32 is < 1e-4, a broken pipeline O(1).
  EXPECT_TRUE(finite(rb, gb));
  const double fwd_err = rel_err(rb.o, r64.o), bwd_err = max_grad_err(gb, g64);
  EXPECT_GT(fwd_err, 1e-3);
  EXPECT_LT(fwd_err, 2e-2);
  EXPECT_GT(bwd_err, 1e-3);
  EXPECT_LT(bwd_err, 2.5e-2);
  EXPECT_GT(fwd_err, 30 * rel_err(r32.o, r64.o));
  EXPECT_GT(bwd_err, 30 * max_grad_err(g32, g64));
}

INSTANTIATE_TEST_SUITE_P(AllOps, DeltaF32, testing::ValuesIn(all_variants()), variant_name);

TEST(DeltaF32, Bf16TwinNeedsTheF32ChunkPath) {
  Case c;
  c.variant = Variant::KDA;
  const Problem p64 = make_problem(c, fresh_seed());
  Config cfg = config(c.variant, Impl::Chunk);
  cfg.round_to_bf16 = true;
  EXPECT_THROW(forward(cfg, p64.in), Error);  // f64 inputs
  c.dtype = DType::F32;
  const Problem p32 = make_problem(c, fresh_seed());
  cfg.impl = Impl::Naive;
  EXPECT_THROW(forward(cfg, p32.in), Error);
}

}  // namespace
