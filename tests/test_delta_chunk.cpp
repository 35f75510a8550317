// The chunk path (f64) against the naive recurrence: forward, both backward algorithms, both
// saving policies, over the sequence lengths, layouts and options of the CPU operator issue.
#include "test_delta_util.h"

using namespace rewy;
using namespace rewy::delta;
using namespace rewy::delta::test;

namespace {

// f64 throughout. The chunk form is an exact rewrite of the recurrence, so what is left is
// rounding: sums of O(C + K + V) products of O(1) values through a 𝒯 that stays O(1) for
// l2-normalised keys and β < 2. Measured <= 2e-15 (T up to 1000, gates down to -5 per step), so
// 1e-12 keeps a factor 500 and is 100x inside the bars (1e-10 forward, 1e-9 backward);
// a wrong term or mask is >= 1e-3.
constexpr double kForwardTol = 1e-12;
constexpr double kBackwardTol = 1e-12;

const int64_t kLengths[] = {1, 63, 64, 65, 150, 1000};

// Save must replay nothing: it keeps what Recompute rebuilds with the same code, so the
// gradients are the same bits.
void expect_bit_equal(const Grads& a, const Grads& b, const std::string& what) {
  const auto na = named(a), nb = named(b);
  for (size_t i = 0; i < na.size(); ++i) {
    ASSERT_EQ(na[i].second.defined(), nb[i].second.defined()) << what << ": " << na[i].first;
    if (na[i].second.defined()) {
      EXPECT_EQ(na[i].second.to_vector(), nb[i].second.to_vector()) << what << ": " << na[i].first;
    }
  }
}

// Forward and every backward variant of the chunk path against the naive recurrence.
void check_against_naive(const Case& c, int chunk, double scale = 0.0) {
  const uint64_t seed = fresh_seed();
  SCOPED_TRACE(fmt::format("{} chunk={} scale={} seed={}", c.str(), chunk, scale, seed));
  const Problem p = make_problem(c, seed);
  Config ncfg = config(c.variant, Impl::Naive);
  ncfg.scale = scale;
  const ForwardResult ref = forward(ncfg, p.in);
  const Grads gref = backward(ncfg, p.in, ref, p.dout, p.dht);

  Grads rewy_grads;
  for (BackwardAlgo algo : {BackwardAlgo::ReWY, BackwardAlgo::Baseline}) {
    Grads by_policy[2];
    for (Policy pol : {Policy::Recompute, Policy::Save}) {
      Config cfg = config(c.variant, Impl::Chunk, algo, pol, chunk);
      cfg.scale = scale;
      const ForwardResult f = forward(cfg, p.in);
      const std::string what = fmt::format("{} {}", name(algo), name(pol));
      EXPECT_LT(rel_err(f.o, ref.o), kForwardTol) << what << ": o";
      EXPECT_LT(rel_err(f.ht, ref.ht), kForwardTol) << what << ": ht";
      by_policy[int(pol)] = backward(cfg, p.in, f, p.dout, p.dht);
      expect_grads_close(by_policy[int(pol)], gref, kBackwardTol, what + " vs naive");
    }
    expect_bit_equal(by_policy[1], by_policy[0], fmt::format("{} save vs recompute", name(algo)));
    if (algo == BackwardAlgo::ReWY)
      rewy_grads = by_policy[0];
    else
      expect_grads_close(by_policy[0], rewy_grads, kBackwardTol, "baseline vs rewy");
  }
}

class DeltaChunk : public testing::TestWithParam<Variant> {};

TEST_P(DeltaChunk, ForwardMatchesRecurrence) {
  for (int64_t T : kLengths)
    for (bool h0 : {false, true}) {
      Case c;
      c.variant = GetParam(), c.T = T, c.h0 = h0;
      const uint64_t seed = fresh_seed();
      SCOPED_TRACE(fmt::format("{} seed={}", c.str(), seed));
      const Problem p = make_problem(c, seed);
      const ForwardResult ref = forward(config(c.variant, Impl::Naive), p.in);
      const ForwardResult got = forward(config(c.variant, Impl::Chunk), p.in);
      EXPECT_LT(rel_err(got.o, ref.o), kForwardTol);
      EXPECT_LT(rel_err(got.ht, ref.ht), kForwardTol);
    }
}

TEST_P(DeltaChunk, BackwardMatchesRecurrence) {
  for (int64_t T : kLengths)
    for (bool with_state : {true, false}) {  // h0 and dht both given, or neither
      Case c;
      c.variant = GetParam(), c.T = T, c.h0 = with_state, c.dht = with_state;
      check_against_naive(c, 64);
    }
}

TEST_P(DeltaChunk, StateWithoutItsCotangentAndBack) {
  Case c;
  c.variant = GetParam(), c.T = 150;
  c.h0 = true, c.dht = false;
  check_against_naive(c, 64);
  c.h0 = false, c.dht = true;
  check_against_naive(c, 64);
}

TEST_P(DeltaChunk, Varlen) {
  Case c;
  c.variant = GetParam(), c.seqlens = {37, 150, 77}, c.T = 264;  // 37 < C: a sequence inside one chunk
  check_against_naive(c, 64);
  c.cu_i32 = true;
  check_against_naive(c, 16);
  c.seqlens = {20, 0, 45}, c.T = 65;  // an empty sequence: ht = h0, dh0 = dht
  check_against_naive(c, 16);
}

TEST_P(DeltaChunk, BatchWithoutVarlen) {
  Case c;
  c.variant = GetParam(), c.B = 3, c.T = 70;
  check_against_naive(c, 64);
  check_against_naive(c, 16);
}

TEST_P(DeltaChunk, ScaleGatesAndBeta) {
  Case c;
  c.variant = GetParam(), c.T = 150;
  check_against_naive(c, 64, 0.3);  // non-default scale
  c.wide_beta = true;               // β in (0, 2): negative eigenvalues of the transition
  check_against_naive(c, 64);
  c.wide_beta = false, c.gates = Gates::Uniform, c.gate = -5.0;  // KDA's safe-gate bound
  check_against_naive(c, 64);
  c.gate = -30.0;  // beyond the centred bound: channel gates take the pairwise fallback (§6)
  check_against_naive(c, 64);
  c.K = 24, c.V = 8;  // V < K
  check_against_naive(c, 16);
}

INSTANTIATE_TEST_SUITE_P(AllOps, DeltaChunk, testing::ValuesIn(all_variants()), variant_name);

}  // namespace
