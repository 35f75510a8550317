// Host-side launchers of the delta-rule kernel family, one explicit specialisation per variant
// (kernels/delta/cuda/variant_*.cu) so that the four variants compile in parallel.
#pragma once
#include <cuda_runtime.h>

#include "kernels/delta/cuda/common.cuh"
#include "kernels/delta/cuda/experiments.h"

namespace rewy::delta::cuda_impl {

namespace tma {
struct StateMaps;
}

struct LaunchInfo {
  cudaStream_t stream = nullptr;
  int K = 0, V = 0;
  int bv = 64;      // V-slice of the sequential state kernels (16, 32, 64 or 128)
  int bwd_bv = 64;  // state_bwd's
  // Warps of grad_chunk, the forward's wy_prep and the backward's wy_replay, 8 or 16: Config's
  // value, else these defaults (launch_info gives KDA's wy_prep 16).
  int grad_warps = 16, prep_warps = 8, replay_warps = 8;
  bool prep_overlap = false;  // Config::prep_overlap
  // Recompute backward: p.Tbeta, e^γ and GDN's row gates are the forward's (Saved::Tbeta, gexp,
  // gate_rows), so wy_replay does not run.
  bool tbeta_saved = false;
  bool prep_split = false;    // channel gates: wy_prep_split_kernel (Config::prep_warps 0)
  bool store_state = false;  // forward: also store E and the state snapshots (Save policy)
  // Recompute backward with Config::concurrent_state_passes: state_bwd is launched as a
  // programmatic dependent of the replay's state pass (it reads only wy_replay's outputs), so the
  // two run side by side where their CTAs fit together.
  bool overlap_passes = false;
  // Backward with Config::overlap_grad: grad_chunk is launched as a programmatic dependent of
  // state_bwd and starts each chunk once both passes have counted it done (DeltaParams::pass_done).
  bool overlap_grad = false;
  // The forward state pass's shared tiles as tensor maps (Config::multicast_state_tiles): with
  // V-slices narrower than V, the slices of a (sequence, head) run as one cluster that loads them
  // once (state_fwd_cluster_kernel). Null: every slice loads its own.
  const tma::StateMaps* maps = nullptr;
  // DeltaNet's Recompute forward as one kernel (fwd_fused.cuh; delta_cuda.cu's forward says
  // where): no state pass, and wy_prep's 𝒯-only kernel before it or (experiment ffwd) none.
  bool one_kernel = false;
  // ... its producer forming P alone after wy_prep's 𝒯-only kernel (the default form).
  bool one_kernel_pform = false;
};

// Counts the state passes launched as clusters (multicast_state_launches()).
void count_multicast_launch();
// Counts the forward passes with the state in registers (register_pass_launches()).
void count_register_pass();
// Counts the forwards run as one kernel (one_kernel_forwards()).
void count_one_kernel_forward();

// Forward: wy_prep (forward mode), state_fwd with the output fused.
template <int VAR> void launch_forward(const DeltaParams& p, const LaunchInfo& li);
// Forward by the segment scan (Config::scan_segments): p's sequences are the segments, sc's N the
// call's sequences; wy_prep (the fused forward's), the map pass, the scan over segments, the
// output pass; or, with p.seg_y set (SegmentForm::TwoPass), the plane pass, the scan, the
// correction O += Y H_in; or, with p.seg_plan set (GDN's DecayCut), the plan and the cut's pass,
// then the fallback's two-pass kernels where given (their CTAs run only where the plan found a
// look-back: DeltaParams::path_flag). max_chunks: the longest segment's chunks.
struct SegmentPass {    // a two-pass form over a segment layout of its own (the decay cut's fallback)
  DeltaParams p;        // its sequences are the layout's segments; the call's tensors, p.seg_y, p.seg_seq
  SegmentScanParams sc;  // sc.N: the call's sequences
  int max_chunks = 0;    // its longest segment's chunks
};
template <int VAR>
void launch_segmented_forward(const DeltaParams& p, const LaunchInfo& li, const SegmentScanParams& sc, int max_chunks,
                              const SegmentPass* fallback);
// The decay cut ahead of the sequential forward, its fallback (GDN; p's sequences the cut's
// segments, p.path_flag the plan's look-back word at value 0): the plan, the fused wy_prep, the
// cut's pass; launch_forward then runs with the word at value 1.
template <int VAR> void launch_cut_first(const DeltaParams& p, const LaunchInfo& li);
// The backward's decay cut (GDN's Recompute backward, Config::backward_cut_segments): its params
// over the cut's segments (the plan's starts, stops and look-back word at value 0; the call's
// tensors and counts) and the weights its whole-V passes count a chunk with (the default passes'
// V-slices).
struct BackwardCut {
  DeltaParams p;
  unsigned replay_weight = 1, bwd_weight = 1;
};
// Backward replay for the Recompute policy: wy_replay (W, U, Q̂, K̄, e^γ from the saved 𝒯; P is
// saved; with p.Tbeta, fused_replay: W and 𝒯 Diag(β), no U), state_fwd without output (Hs, E).
// With cut: the cut's plan first, and after wy_replay the cut's replay pass and state_bwd, whose
// CTAs leave at once where the plan set the word; then the default replay pass (p.path_flag at
// value 1), which leaves where it did not.
template <int VAR> void launch_replay(const DeltaParams& p, const LaunchInfo& li, const BackwardCut* cut = nullptr);
// Backward proper: state_bwd, grad_chunk (ReWY or baseline WY backward; each beside the kernel
// before it where li says so).
template <int VAR> void launch_backward(const DeltaParams& p, const LaunchInfo& li, bool rewy);

}  // namespace rewy::delta::cuda_impl
