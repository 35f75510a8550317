// The V-slice rule of the CUDA state kernels (kernels/delta/cuda/state_slices.h) at the benchmark
// shapes' pair counts (V = 128): the widths the H200 measurements chose, so that a change to the
// rule shows here before it reaches a device.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "kernels/delta/cuda/state_slices.h"

namespace rewy::delta::cuda_impl {
namespace {

Config config(Policy policy, bool concurrent = true, int state_slice = 0) {
  Config cfg;
  cfg.policy = policy;
  cfg.concurrent_state_passes = concurrent;
  cfg.state_slice = state_slice;
  return cfg;
}

// bwd_bv (state_bwd's width) is checked for the backward only: the forward has no state_bwd.
void expect(const Config& cfg, int64_t pairs, int64_t V, bool backward, int bv, int bwd_bv = 0, int64_t sms = kH200SMs) {
  const StateSlices s = state_slices(cfg, pairs, V, backward, sms);
  const std::string what = std::to_string(pairs) + " pairs, V = " + std::to_string(V) +
                           (backward ? ", backward" : ", forward") + ", " + std::to_string(sms) + " SMs";
  EXPECT_EQ(s.bv, bv) << what;
  if (backward) {
    EXPECT_EQ(s.bwd_bv, bwd_bv) << what;
  }
}

TEST(StateSlices, RecomputeForward) {
  const Config cfg = config(Policy::Recompute);
  expect(cfg, 128, 128, false, 128);  // (8, 2048, 16): one wave of 128-wide slices
  expect(cfg, 256, 128, false, 128);  // (8, 4096, 32)
  expect(cfg, 64, 128, false, 64);    // (4, 4096, 16): 128 CTAs of 64
  expect(cfg, 32, 128, false, 32);    // (2, 8192, 16), (1, 32768, 32)
  expect(cfg, 16, 128, false, 16);    // (1, 16384, 16)
}

TEST(StateSlices, RecomputeBackwardSideBySide) {
  const Config cfg = config(Policy::Recompute);
  expect(cfg, 16, 128, true, 64, 64);    // 2 x 32 (the narrowest that fits, 32, widened beside grad_chunk)
  expect(cfg, 32, 128, true, 64, 64);    // 2 x 64
  expect(cfg, 64, 128, true, 128, 128);  // 2 x 64
  expect(cfg, 128, 128, true, 64, 128);  // none fits: the one-pass rule
  expect(cfg, 256, 128, true, 64, 128);
  expect(cfg, 8, 64, true, 16, 16);      // 2 x 32 CTAs at V = 64
  Config alone = cfg;  // grad_chunk after state_bwd: the narrowest width at which both fit
  alone.overlap_grad = false;
  expect(alone, 16, 128, true, 32, 64);  // 64 + 32 CTAs (state_bwd on wgmma)
  expect(alone, 32, 128, true, 64, 64);
}

// The launch decides "side by side" from the widths the rule gave (passes_fit_together): where the
// rule chose a width for both passes together, the launch must see them fit; where it fell back to
// the one-pass rule, they must not.
TEST(StateSlices, SideBySideWhereTheRuleFitBothPasses) {
  EXPECT_TRUE(passes_fit_together(16, 4, 4, kH200SMs));    // 128 CTAs
  EXPECT_TRUE(passes_fit_together(66, 1, 1, kH200SMs));    // 132: every SM
  EXPECT_FALSE(passes_fit_together(67, 1, 1, kH200SMs));   // 134
  EXPECT_FALSE(passes_fit_together(128, 2, 1, kH200SMs));  // 384
  EXPECT_FALSE(passes_fit_together(64, 1, 1, 114));        // 128 CTAs on a 114-SM device
  const Config cfg = config(Policy::Recompute);
  for (int64_t sms : {kH200SMs, int64_t(114), int64_t(78)})
    for (int64_t V : {64, 128})
      for (int64_t pairs : {1, 2, 8, 16, 32, 33, 57, 64, 66, 67, 128, 256}) {
        const StateSlices s = state_slices(cfg, pairs, V, true, sms);
        const int64_t replay = V / std::min<int64_t>(s.bv, V), bwd = V / std::min<int64_t>(s.bwd_bv, V);
        const bool by_rule = 2 * pairs * (V / std::min<int64_t>(128, V)) <= sms;  // some width fits both
        EXPECT_EQ(passes_fit_together(pairs, replay, bwd, sms), by_rule) << pairs << " pairs, V = " << V << ", " << sms << " SMs";
      }
}

// The rule counts CTAs against the device's SMs, not the H200's: on a 114-SM device (an H100
// PCIe) 64 pairs no longer fit both passes at 128 (128 CTAs), so the one-pass rule holds there,
// and 8 pairs at V = 128 take 16-wide slices only while 8 x 8 CTAs fit.
TEST(StateSlices, CountsTheDevicesSMs) {
  const Config cfg = config(Policy::Recompute);
  expect(cfg, 64, 128, true, 128, 128);            // H200: 2 x 64 side by side
  expect(cfg, 64, 128, true, 64, 64, 114);         // 114 SMs: none fits, the one-pass rule
  const Config serial = config(Policy::Recompute, false);
  expect(serial, 8, 128, true, 16, 16);            // 8 x 8 = 64 CTAs <= 132
  expect(serial, 8, 128, true, 32, 32, 60);        // 64 > 60: 32 (8 x 2 = 16 < 60)
  expect(serial, 8, 128, true, 64, 64, 16);        // 8 x 2 = 16, not < 16: 64
}

TEST(StateSlices, OnePassBackwardAndSave) {
  Config serial_save = config(Policy::Save);
  serial_save.overlap_grad = false;
  for (const Config& cfg : {config(Policy::Recompute, false), serial_save}) {
    expect(cfg, 16, 128, true, 16, 16);
    expect(cfg, 32, 128, true, 64, 64);
    expect(cfg, 64, 128, true, 64, 64);
    expect(cfg, 128, 128, true, 64, 128);
  }
  // With grad_chunk beside state_bwd (the default), the Save backward's state_bwd takes the widest
  // slice that gives 32 CTAs (the replay's width is unused there).
  const Config save = config(Policy::Save);
  expect(save, 16, 128, true, 16, 64);
  expect(save, 32, 128, true, 64, 128);
  expect(save, 64, 128, true, 64, 128);
  expect(save, 128, 128, true, 64, 128);
  expect(save, 256, 128, true, 64, 128);
  expect(save, 8, 128, true, 16, 32);
  expect(save, 16, 64, true, 16, 32);  // V = 64: 16 x 2 slices of 32
  expect(save, 4, 64, true, 16, 16);   // none gives 32 CTAs: the narrowest, 16
  // The Save forward stores E and the states
  expect(save, 16, 128, false, 16);
  expect(save, 32, 128, false, 32);
  expect(save, 64, 128, false, 64);  // 128 CTAs of 64, as the Recompute forward's
  expect(save, 128, 128, false, 64);
}

TEST(StateSlices, AnExplicitWidthWinsEverywhere) {
  for (bool backward : {false, true})
    for (int64_t pairs : {16, 128}) expect(config(Policy::Recompute, true, 32), pairs, 128, backward, 32, 32);
  Config cfg = config(Policy::Recompute);
  cfg.state_bwd_slice = 16;  // state_bwd's alone: the replay keeps the rule's (or state_slice's)
  expect(cfg, 16, 128, true, 64, 16);
  cfg.state_slice = 64;
  expect(cfg, 16, 128, true, 64, 16);
}

}  // namespace
}  // namespace rewy::delta::cuda_impl

namespace rewy::delta::cuda_impl {
namespace {

// The segment count of the passes that run one CTA an SM (segment_count): the measured counts at
// the benchmark's 16 and 32 pairs (the two-pass form's planes near 64 CTAs: 4 segments at 16 pairs,
// 112 CTAs; the decay cut near 128: 8 at 16 pairs, 4 at 32), and elsewhere no grid past the
// device's SMs (9 pairs would have taken 8 segments, 135 plane CTAs on 132 SMs: a second wave of
// 3), at least 8 chunks a segment.
TEST(SegmentCount, MeasuredCountsAndOneWave) {
  EXPECT_EQ(segment_count(16, 256, 2, 64, kH200SMs), 4);
  EXPECT_EQ(segment_count(8, 256, 2, 64, kH200SMs), 8);   // 120 CTAs
  EXPECT_EQ(segment_count(12, 256, 2, 64, kH200SMs), 6);  // 132: every SM
  EXPECT_EQ(segment_count(9, 256, 2, 64, kH200SMs), 7);   // 117 (8: 135)
  EXPECT_EQ(segment_count(16, 256, 1, 128, kH200SMs), 8);
  EXPECT_EQ(segment_count(32, 128, 1, 128, kH200SMs), 4);
  EXPECT_EQ(segment_count(24, 128, 1, 128, kH200SMs), 5);  // 120 (6: 144)
  EXPECT_EQ(segment_count(17, 128, 1, 128, kH200SMs), 7);  // 119 (8: 136)
  EXPECT_EQ(segment_count(16, 20, 1, 128, kH200SMs), 2);   // at least 8 chunks a segment
  EXPECT_EQ(segment_count(16, 15, 1, 128, kH200SMs), 1);   // none
  EXPECT_EQ(segment_count(0, 256, 1, 128, kH200SMs), 1);
  for (int64_t sms : {kH200SMs, int64_t(114), int64_t(78)})
    for (int per : {1, 2})
      for (int64_t pairs = 1; pairs <= 40; ++pairs) {
        const int64_t s = segment_count(pairs, 1024, per, per == 2 ? 64 : 128, sms);
        EXPECT_TRUE(s == 1 || (s >= 2 && pairs * (per * s - (per - 1)) <= sms))
            << pairs << " pairs, " << per << " CTAs a segment, " << sms << " SMs: " << s << " segments";
      }
}

}  // namespace
}  // namespace rewy::delta::cuda_impl
