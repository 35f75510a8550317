// The V-slice widths of the sequential state kernels (one CTA per sequence, head and slice): the
// rule the CUDA launches follow, host-only so that a CPU test pins its measured choices.
#pragma once
#include <cstdint>

#include "kernels/delta/delta.h"

namespace rewy::delta::cuda_impl {

// The H200's SMs, where the widths below were measured (the CPU tests pin the rule at this count).
// The launches pass the device's own count (cuda_sm_count): the rule counts CTAs against it.
inline constexpr int64_t kH200SMs = 132;

// Whether the Recompute backward's two state passes run side by side: the CTAs of both (one per
// pair and V-slice each) fit the device's sms SMs at once. The slice rule picks widths by it and
// the backward's launch (delta_cuda.cu) decides by it from the widths it got.
inline bool passes_fit_together(int64_t pairs, int64_t replay_slices, int64_t bwd_slices, int64_t sms) {
  return pairs * (replay_slices + bwd_slices) <= sms;
}

struct StateSlices {
  int bv = 64;      // the forward's state pass, or the backward's replay of it
  int bwd_bv = 64;  // state_bwd
};

// pairs: (sequence, head) pairs; V: the value head dim; backward: the backward pass (replay and
// state_bwd), else the forward. Reads cfg.policy (for the backward: the policy its forward ran
// under), cfg.state_slice and cfg.state_bwd_slice (0: by this rule), cfg.concurrent_state_passes
// and cfg.overlap_grad (the Save backward's state_bwd). Widths above V are V's (the launchers cap
// them). sms: the device's SMs (kH200SMs where the thresholds were measured; the other counts in
// the rule, 64 and 128 CTAs, are the H200's measured break-even points and stay as they are).
StateSlices state_slices(const Config& cfg, int64_t pairs, int64_t V, bool backward, int64_t sms);

// How many segments a sequence the segmented passes whose CTAs run one an SM cut it into (the
// two-pass form's planes, the decay cut's passes: delta_cuda.cu's scan_segment_choice and
// backward_cut_choice): segment-head pairs near `target` (ceil(target / pairs): 64 for the planes,
// 128 for the cut, the measured counts at 16 and 32 pairs), fewer where the grid would pass the
// device's sms SMs (a second wave of a few CTAs would double the chain), at least 8 chunks a
// segment (longest: the longest sequence's chunks). ctas_per_segment: 2 for the planes (a
// sequence's first segment runs one: its map is not formed), 1 for the cut. 1: no segments.
int64_t segment_count(int64_t pairs, int64_t longest, int ctas_per_segment, int64_t target, int64_t sms);

}  // namespace rewy::delta::cuda_impl
