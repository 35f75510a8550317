// The WY products of one chunk's backward, as the counting GEMM wrapper records them: ReWY's three
// (§5) and the FLA baseline's six, seven for GDN with its key Gram (§4). K = 32, V = 48, C = 64 keep
// every dimension distinguishable, so a product that changes shape or order fails here.
#include "kernels/delta/cpu/local_gemm.h"
#include "test_delta_util.h"

using namespace rewy;
using namespace rewy::delta;
using namespace rewy::delta::test;
using cpu::GemmCall;
using cpu::GemmRecorder;

namespace {

constexpr int64_t K = 32, V = 48, C = 64;

std::string str(const std::vector<GemmCall>& calls) {
  std::string s;
  for (const auto& c : calls) s += fmt::format("{}:{}({}, {}, {}) ", c.stage, c.tag, c.m, c.n, c.k);
  return s;
}

// (m, n, k): output m×n, inner k, for a chunk of n rows.
std::vector<GemmCall> expected_wy(Variant v, BackwardAlgo algo, int64_t n) {
  if (algo == BackwardAlgo::ReWY)
    return {{"wy", "R1", n, K + V, n}, {"wy", "R2", n, n, K + V}, {"wy", "R3", 2 * n, K, n}};
  std::vector<GemmCall> r{{"wy", "B1", n, n, K + V}, {"wy", "B2", n, K + V, n}, {"wy", "B3", n, n, n},
                          {"wy", "B4", n, n, n}};
  if (v == Variant::GDN) r.push_back({"wy", "B5", n, n, K});
  r.push_back({"wy", "B6", n, K, n});
  r.push_back({"wy", "B7", n, K, n});
  return r;
}

struct Recorded {
  std::vector<GemmCall> fwd, bwd;
};

Recorded record(Variant v, BackwardAlgo algo, Policy pol, int64_t T) {
  Case c;
  c.variant = v, c.T = T, c.H = 1, c.K = K, c.V = V;
  const uint64_t seed = fresh_seed();
  const Problem p = make_problem(c, seed);
  const Config cfg = config(v, Impl::Chunk, algo, pol, int(C));
  Recorded r;
  ForwardResult f;
  {
    GemmRecorder rec;
    f = forward(cfg, p.in);
    r.fwd = rec.calls();
  }
  GemmRecorder rec;
  backward(cfg, p.in, f, p.dout, p.dht);
  r.bwd = rec.calls();
  return r;
}

std::vector<GemmCall> only(const std::vector<GemmCall>& calls, const std::string& stage) {
  std::vector<GemmCall> r;
  for (const auto& c : calls)
    if (c.stage == stage) r.push_back(c);
  return r;
}

void expect_calls(const std::vector<GemmCall>& got, const std::vector<GemmCall>& want) {
  EXPECT_EQ(str(got), str(want));
}

class DeltaGemmCount : public testing::TestWithParam<Variant> {};

TEST_P(DeltaGemmCount, ReWYHasThreeProductsAndNoCubicOne) {
  for (Policy pol : {Policy::Recompute, Policy::Save}) {
    SCOPED_TRACE(name(pol));
    const Recorded r = record(GetParam(), BackwardAlgo::ReWY, pol, C);
    const std::vector<GemmCall> wy = only(r.bwd, "wy");
    expect_calls(wy, expected_wy(GetParam(), BackwardAlgo::ReWY, C));
    for (const auto& c : wy) EXPECT_FALSE(c.m == C && c.n == C && c.k == C) << "C×C×C product " << c.tag;
  }
}

TEST_P(DeltaGemmCount, BaselineHasSixOrSevenProducts) {
  const Recorded r = record(GetParam(), BackwardAlgo::Baseline, Policy::Recompute, C);
  const std::vector<GemmCall> wy = only(r.bwd, "wy");
  expect_calls(wy, expected_wy(GetParam(), BackwardAlgo::Baseline, C));
  EXPECT_EQ(wy.size(), GetParam() == Variant::GDN ? 7u : 6u);
}

// Per chunk, in reverse chunk order; the ragged last chunk (2 rows) comes first.
TEST_P(DeltaGemmCount, EveryChunkOnceRaggedTailFirst) {
  for (BackwardAlgo algo : {BackwardAlgo::ReWY, BackwardAlgo::Baseline}) {
    const Recorded r = record(GetParam(), algo, Policy::Recompute, 2 * C + 2);
    std::vector<GemmCall> want;
    for (int64_t n : {int64_t(2), C, C})
      for (const auto& c : expected_wy(GetParam(), algo, n)) want.push_back(c);
    expect_calls(only(r.bwd, "wy"), want);
  }
}

// Save keeps W, U, E, P and the states: its backward rebuilds none of them. Recompute replays X,
// the state pass and P, but never A (𝒯 is saved by both policies).
TEST_P(DeltaGemmCount, SaveReplaysNothingRecomputeNeverA) {
  const Recorded save = record(GetParam(), BackwardAlgo::ReWY, Policy::Save, C);
  EXPECT_EQ(str(only(save.bwd, "replay")), "");
  const Recorded rec = record(GetParam(), BackwardAlgo::ReWY, Policy::Recompute, C);
  expect_calls(only(rec.bwd, "replay"), {{"replay", "X", C, K + V, C},
                                         {"replay", "WH", C, V, K},
                                         {"replay", "P", C, C, K},
                                         {"replay", "KE", K, V, C}});
  expect_calls(only(rec.fwd, "fwd"), {{"fwd", "A", C, C, K},
                                      {"fwd", "X", C, K + V, C},
                                      {"fwd", "WH", C, V, K},
                                      {"fwd", "P", C, C, K},
                                      {"fwd", "QH", C, V, K},
                                      {"fwd", "PE", C, V, C},
                                      {"fwd", "KE", K, V, C}});
}

INSTANTIATE_TEST_SUITE_P(AllOps, DeltaGemmCount, testing::ValuesIn(all_variants()), variant_name);

}  // namespace
