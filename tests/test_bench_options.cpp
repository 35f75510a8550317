// bench_delta's command line (bench/delta_options.h): defaults, every flag read, Google
// Benchmark's flags passed on, and a clear error for each malformed value (bench_delta exits 2 with
// it before anything runs; an unchecked shape index used to read past kShapes).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "bench/delta_options.h"

namespace {

using rewy::bench::DeltaOptions;
using rewy::bench::parse_delta_options;

struct Argv {
  std::vector<std::string> words;
  std::vector<char*> ptrs;
  explicit Argv(std::vector<std::string> w) : words(std::move(w)) {
    words.insert(words.begin(), "bench_delta");
    for (auto& s : words) ptrs.push_back(s.data());
  }
  int argc() const { return int(ptrs.size()); }
  char** argv() { return ptrs.data(); }
};

DeltaOptions parse(std::vector<std::string> words, std::vector<std::string>* rest_out = nullptr) {
  Argv a(std::move(words));
  std::vector<char*> rest;
  DeltaOptions o = parse_delta_options(a.argc(), a.argv(), rest);
  if (rest_out) {
    rest_out->clear();
    for (char* r : rest) rest_out->push_back(r);
  }
  return o;
}

std::string error_of(std::vector<std::string> words) {
  try {
    parse(std::move(words));
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(BenchOptions, DefaultsAndEveryFlag) {
  std::vector<std::string> rest;
  const DeltaOptions d = parse({}, &rest);
  EXPECT_EQ(d.shapes, (std::vector<int>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(d.samples, 30);
  EXPECT_EQ(d.flush_mb, 256);
  EXPECT_EQ(d.scan_segments, 0);
  EXPECT_FALSE(d.two_pass_segments);
  EXPECT_FALSE(d.decay_cut);
  EXPECT_EQ(d.cut_fallback, 0);
  EXPECT_EQ(d.backward_cut, 0);
  EXPECT_EQ(rest, (std::vector<std::string>{"bench_delta"}));

  const DeltaOptions o =
      parse({"--ops", "kda,gdn2", "--shapes", "0,5", "--policies", "save", "--backward", "baseline", "--gates",
             "realistic", "--samples", "7", "--csv", "out.csv", "--state-slice", "32", "--bwd-slice", "64",
             "--grad-warps", "8", "--prep-warps", "16", "--replay-warps", "16", "--prep-overlap",
             "--serial-state-passes", "--serial-grad", "--serial-forward", "--multicast", "--unfused-kda-forward",
             "--scan-segments", "8", "--two-pass-segments", "--decay-cut", "--cut-fallback", "3", "--backward-cut", "4",
             "--flush-mb", "512",
             "--benchmark_filter=kda"},
            &rest);
  EXPECT_EQ(o.ops, (std::vector<std::string>{"kda", "gdn2"}));
  EXPECT_EQ(o.shapes, (std::vector<int>{0, 5}));
  EXPECT_EQ(o.policies, (std::vector<std::string>{"save"}));
  EXPECT_EQ(o.backward, (std::vector<std::string>{"baseline"}));
  EXPECT_EQ(o.gates, (std::vector<std::string>{"realistic"}));
  EXPECT_EQ(o.samples, 7);
  EXPECT_EQ(o.csv, "out.csv");
  EXPECT_EQ(o.state_slice, 32);
  EXPECT_EQ(o.state_bwd_slice, 64);
  EXPECT_EQ(o.grad_warps, 8);
  EXPECT_EQ(o.prep_warps, 16);
  EXPECT_EQ(o.replay_warps, 16);
  EXPECT_TRUE(o.prep_overlap && o.serial_state_passes && o.serial_grad && o.serial_forward && o.multicast &&
              o.unfused_kda_forward);
  EXPECT_EQ(o.scan_segments, 8);
  EXPECT_TRUE(o.two_pass_segments && o.decay_cut);
  EXPECT_EQ(o.cut_fallback, 3);
  EXPECT_EQ(o.backward_cut, 4);
  EXPECT_EQ(o.flush_mb, 512);
  EXPECT_EQ(rest, (std::vector<std::string>{"bench_delta", "--benchmark_filter=kda"}));
}

TEST(BenchOptions, MalformedValuesNameTheFlag) {
  EXPECT_EQ(error_of({"--shapes", "0,6"}), "--shapes: shape 6 does not exist (0 to 5)");
  EXPECT_EQ(error_of({"--shapes", "-1"}), "--shapes: shape -1 does not exist (0 to 5)");
  EXPECT_EQ(error_of({"--shapes", ","}), "--shapes needs at least one shape index, got ','");
  EXPECT_EQ(error_of({"--samples", "0"}), "--samples needs at least 1, got 0");
  EXPECT_EQ(error_of({"--samples", "3x"}), "--samples needs an integer, got '3x'");
  EXPECT_EQ(error_of({"--samples", ""}), "--samples needs an integer, got ''");
  EXPECT_EQ(error_of({"--flush-mb", "0"}), "--flush-mb needs at least 1 (MB), got 0");
  EXPECT_EQ(error_of({"--scan-segments", "-2"}), "--scan-segments needs at least 0, got -2");
  EXPECT_EQ(error_of({"--backward-cut", "x"}), "--backward-cut needs an integer, got 'x'");
  EXPECT_EQ(error_of({"--ops", "kda,mamba"}), "--ops: unknown 'mamba', expected deltanet, gdn, kda or gdn2");
  EXPECT_EQ(error_of({"--gates", "realstic"}), "--gates: unknown 'realstic', expected bench, realistic or weak");
  EXPECT_EQ(error_of({"--policies", "keep"}), "--policies: unknown 'keep', expected recompute or save");
  EXPECT_EQ(error_of({"--backward", "fla"}), "--backward: unknown 'fla', expected rewy or baseline");
  EXPECT_EQ(error_of({"--backward", ""}), "--backward needs at least one of rewy or baseline");
  EXPECT_EQ(error_of({"--state-slice", "48"}), "--state-slice takes 0 (automatic), 16, 32, 64 or 128, got 48");
  EXPECT_EQ(error_of({"--grad-warps", "4"}), "--grad-warps takes 0 (automatic), 8 or 16, got 4");
  EXPECT_EQ(error_of({"--csv"}), "--csv needs a value");
}

}  // namespace

namespace {

TEST(BenchArgs, CheckedValues) {
  using namespace rewy::bench;
  EXPECT_EQ(parse_int<uint64_t>("--seed", "18446744073709551615"), 18446744073709551615ull);
  EXPECT_THROW(parse_int<uint64_t>("--seed", "-1"), std::invalid_argument);
  EXPECT_THROW(parse_int("--T", "99999999999"), std::invalid_argument);  // past int: not wrapped
  EXPECT_EQ(shape_indices("--shapes", "5,0,,3"), (std::vector<int>{5, 0, 3}));
  EXPECT_EQ(int_in("--slices", "32", {16, 32, 64}, "16, 32 or 64"), 32);
  EXPECT_EQ(int_at_least("--T", "1", 1, " (tokens)"), 1);
  try {
    int_at_least("--H", "-2", 1, " (heads)");
    ADD_FAILURE() << "no error for --H -2";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "--H needs at least 1 (heads), got -2");
  }
}

}  // namespace
