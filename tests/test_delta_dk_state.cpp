// The bf16 twin of DeltaNet's ∂K̄ state term from state_bwd (Config::dk_state_term: s E (∂H⁺/s)ᵀ,
// rounded to bf16, as the CUDA kernels form it): it changes the twin's dk alone (the term feeds
// nothing else without gates), leaves the exact reference as it is, and keeps dk's error near the
// default twin's (the GPU test's bar is twice the twin's error), over fresh seeds.
#include <gtest/gtest.h>

#include "kernels/delta/random_inputs.h"
#include "test_delta_util.h"

using namespace rewy;
using namespace rewy::delta;

TEST(DeltaDkState, TwinRoundsTheStateTermAlone) {
  const uint64_t seed0 = test::fresh_seed();
  for (uint64_t i = 0; i < 3; ++i) {
    RandomSpec sp;  // two sequences, 3 and 2 chunks, the last ragged
    sp.variant = Variant::DeltaNet;
    sp.T = 200, sp.H = 2, sp.K = 128, sp.V = 128;
    sp.seqlens = {130, 70};
    sp.h0 = true;
    sp.seed = seed0 + i;
    SCOPED_TRACE(::testing::Message() << "seed " << sp.seed << " (replay: REWY_TEST_SEED=" << seed0 << ")");
    const RandomCase c = make_random_case(sp);
    Config base;
    base.variant = Variant::DeltaNet;
    Config dks = base;
    dks.dk_state_term = DkStateTerm::On;
    const CpuReference a = cpu_reference_with(base, c), b = cpu_reference_with(dks, c);
    ASSERT_EQ(a.twin.size(), b.twin.size());
    for (const auto& [key, t] : a.exact) EXPECT_EQ(relative_error(b.exact.at(key), t), 0.0) << key;
    for (const auto& [key, t] : a.twin) {
      const double diff = relative_error(b.twin.at(key), t);
      if (key == "dk") EXPECT_GT(diff, 0.0) << "the twin's dk did not change";
      else EXPECT_EQ(diff, 0.0) << key << " changed";
    }
    const double ea = relative_error(a.twin.at("dk"), a.exact.at("dk"));
    const double eb = relative_error(b.twin.at("dk"), b.exact.at("dk"));
    EXPECT_LE(eb, 1.5 * ea) << "dk: the state term's twin " << eb << ", the default twin " << ea;
    fmt::print("seed {}: dk twin error {:.3e} (default {:.3e})\n", sp.seed, eb, ea);
  }
}
