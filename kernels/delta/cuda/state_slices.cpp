#include "kernels/delta/cuda/state_slices.h"

#include <algorithm>

namespace rewy::delta::cuda_impl {

StateSlices state_slices(const Config& cfg, int64_t pairs, int64_t V, bool backward, int64_t sms) {
  StateSlices s;
  if (cfg.state_slice) {
    s.bv = cfg.state_slice;
    s.bwd_bv = cfg.state_bwd_slice ? cfg.state_bwd_slice : cfg.state_slice;
    return s;
  }
  const bool recompute = cfg.policy == Policy::Recompute;
  // Narrower V-slices give the sequential kernels more CTAs when few (sequence, head) pairs exist:
  // 16 when that still fits one wave on the 132 SMs (GDN, 1 x 16 heads, V = 128, against 32:
  // baseline backward 3.29 -> 2.82 ms, save backward 2.11 -> 1.87 ms), else 32 when 64 would
  // leave SMs idle. The Recompute forward's output pass takes 128 once the pairs nearly fill the
  // SMs with it: 2.0-2.6% faster than 64 at shapes 0 and 4, DeltaNet and KDA (H200, 2026-11-30,
  // docs/measurements/2026-11-30-s4/bv{64,128}.txt).
  const bool wide = !backward && recompute && pairs * (V / 128) >= 128;
  // The backward's state passes (the replay's and state_bwd, on wgmma from 64) take 64 from 32
  // pairs on (V = 128), though it leaves SMs idle: the Recompute backward at (4, 4096, 16) 14-20%
  // faster than at 32, at (2, 8192, 16) 0.2-2% (H200, 2026-11-30, REWY_KERNEL_TIMING=1 bench_delta
  // --state-slice 32|64, docs/measurements/2026-11-30-s6/bwd_slice{32,64}_shapes12.txt).
  const bool bwd64 = backward && pairs * (V / 64) >= 64;
  // The Recompute forward takes 64 once that gives 128 CTAs (DeltaNet's and GDN's form E from
  // 𝒯 Diag(β), k and v in the state pass there, fused_wu). At (4, 4096, 16) 64 against 32: DeltaNet 0.427 -> 0.300 ms,
  // GDN 0.467 -> 0.363, KDA 0.718 -> 0.639, GDN2 0.743 -> 0.664; at 32 pairs (64 CTAs) 64 was
  // 7-20% slower (H200, 2026-11-30, docs/measurements/2026-11-30-s7/{slice,s1_slice}{32,64}.csv).
  // The Save forward too: at (4, 4096, 16) 64 against 32 DeltaNet 0.538 -> 0.376 ms, GDN 0.595 ->
  // 0.393 (with the row gates slices of 64 bring), KDA 0.695 -> 0.532, GDN2 0.706 -> 0.542; at
  // (2, 8192, 16) 0.93-1.01x (H200, 2026-12-01, bench_delta --state-slice 64,
  // docs/measurements/2026-12-01-s19/call4-saveslice/).
  const bool fwd64 = !backward && pairs * (V / 64) >= 128;
  // The Recompute backward's two state passes side by side (concurrent_state_passes) share the
  // SMs, so they take the narrowest slice at which both fit one wave, when one does: against
  // the one-pass rule above, at (1, 16384, 16) 32 instead of 16: DeltaNet 1.45 -> 1.28 ms, GDN
  // 1.79 -> 1.64, KDA 2.05 -> 1.92, GDN2 2.18 -> 2.04; at (4, 4096, 16) 128 instead of 64: 0.92 ->
  // 0.85 ms, 1.11 -> 1.10, 1.47 -> 1.40, 1.60 -> 1.53; at 32 pairs 64 (32: 0.92 -> 1.24 ms
  // DeltaNet at (2, 8192, 16)). With 128 pairs or more none fits and the one-pass rule holds
  // (H200, 2026-11-30, bench_delta --state-slice, docs/measurements/2026-11-30-s8/).
  int paired_bv = 0;
  if (backward && recompute && cfg.concurrent_state_passes)
    for (int w : {16, 32, 64, 128})
      if (w <= V && passes_fit_together(pairs, V / w, V / w, sms)) {
        paired_bv = w;
        break;
      }
  // With grad_chunk beside the passes (Config::overlap_grad), 64 where that rule gives 32: both
  // passes on wgmma, 64 CTAs instead of 96, so 68 SMs for grad_chunk. Recompute backward at
  // (1, 16384, 16): 1.042x DeltaNet, 1.016x GDN, 1.024x KDA, 1.015x GDN2 (H200, 2026-12-02,
  // bench_delta --state-slice 64, docs/measurements/2026-12-02-s21/call4-sweeps/).
  if (paired_bv == 32 && cfg.overlap_grad) paired_bv = 64;
  s.bv = paired_bv ? paired_bv
         : wide ? 128
         : bwd64 || fwd64 ? 64
         : pairs * (V / 16) <= sms ? 16 : pairs * (V / 64) < sms ? 32 : 64;
  // state_bwd takes 128 by the same rule (one wave instead of two at shapes 0 and 4; DeltaNet's
  // mma.sync kernel 4.5% faster so; the wgmma kernel fits 128 for every variant); the replay's state
  // pass at 128 was 31% slower than at 64 (two CTAs an SM), so it keeps bv (H200, 2026-11-30,
  // docs/measurements/2026-11-30-s6/bv{64,128}.txt).
  // Beside the replay at 32 (16 pairs), state_bwd takes 64 (wgmma; 32 CTAs, so 96 in all) over
  // 32 (mma.sync): Recompute backward at (1, 16384, 16) 1.29 -> 1.27 ms DeltaNet, 1.63 -> 1.55
  // GDN, 1.90 -> 1.83 KDA, 2.03 -> 1.97 GDN2; 128 was 16-23% slower (H200, 2026-11-30,
  // bench_delta --bwd-slice 0|64|128, docs/measurements/2026-11-30-s9/bwd_slice.txt).
  s.bwd_bv = cfg.state_bwd_slice ? cfg.state_bwd_slice
             : pairs * (V / 128) >= 128 ? 128
             : paired_bv == 32 && V >= 64 ? 64 : s.bv;
  // The Save backward with grad_chunk beside state_bwd (Config::overlap_grad) takes the widest
  // slice that still gives 32 CTAs, leaving the rest of the SMs to grad_chunk: against the rule
  // above, at (1, 16384, 16) 64 instead of 16: 1.45x DeltaNet, 1.57x GDN, 1.45x KDA, 1.44x GDN2;
  // at 32 and 64 pairs 128 instead of 64: 1.034-1.088x (H200, 2026-12-02, bench_delta --bwd-slice
  // 64|128, docs/measurements/2026-12-02-s21/call2-sweeps/).
  if (backward && !recompute && cfg.overlap_grad && !cfg.state_bwd_slice) {
    int w = int(std::min<int64_t>(128, V));
    while (w > 16 && pairs * (V / w) < 32) w /= 2;
    s.bwd_bv = w;
  }
  return s;
}

int64_t segment_count(int64_t pairs, int64_t longest, int ctas_per_segment, int64_t target, int64_t sms) {
  if (pairs <= 0) return 1;
  int64_t count = std::min<int64_t>((target + pairs - 1) / pairs, longest / 8);
  const auto ctas = [&](int64_t s) { return pairs * (ctas_per_segment * s - (ctas_per_segment - 1)); };
  while (count > 1 && ctas(count) > sms) --count;
  return count >= 2 ? count : 1;
}

}  // namespace rewy::delta::cuda_impl
