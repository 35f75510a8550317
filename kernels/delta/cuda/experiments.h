// The REWY_EXPERIMENTS switches, host-only so that the tests read them as the launchers do.
#pragma once
#include <cstdlib>
#include <string>

#include "kernels/delta/delta.h"

namespace rewy::delta::cuda_impl {

// REWY_EXPERIMENTS=name[,name]: switches for experimental kernel variants, off by default, so that
// one build times them against the default kernels in one call (scripts/device-decide.sh):
// an extra template flag on the kernel, its instantiation launched where experiment("name")
// holds, at every shape (and warp count, but grad_chunk's at 16 warps only), so the GPU tests cover
// what would become the default.
// Now: lateg (KDA's wy_prep_split without its default early gates: kPrepEarlyGates); fhalf
// (DeltaNet's and GDN's fused forward pass by column halves at every V-slice, not only at 128:
// launch_state_fwd_as); ld68sh (the shared and overlapped wy_prep at kLdA's pitch: launch_prep);
// nokfuse (KDA's Recompute forward with W and U from wy_prep_split: delta_cuda.cu's forward);
// g2fuse (GDN2's Recompute forward forming E in the state pass: the same place); uhalf (the
// unfused output pass by column halves at V-slices of 128: launch_state_fwd_as); segscan,
// segscan64, segscan32p (DeltaNet's and GDN's few-pair Recompute forward by the segment scan:
// delta_cuda.cu's scan_segment_choice), seg2p, seg2p32 (the same by its two-pass form: there too),
// dcut (GDN's decay cut without its fallback: there too); nodcut (neither pass by the decay cut,
// the default's cut turned off: scan_segment_choice and backward_cut_choice); kseg2p (KDA's and
// GDN2's few-pair Recompute forward by the two-pass form: scan_segment_choice); nodkstate (no
// ∂K̄ state term from state_bwd, the default's under Config::dk_state_term Auto: delta_cuda.cu's
// backward; the path: state_bwd_wg_kernel's DKS, grad_chunk's EXP + 4000); prep3 (the fused
// forward's wy_prep at three CTAs an SM at K = 128, not the default's four: launch_prep);
// notbrows (𝒯 Diag(β) instead of β on the rows: delta_cuda.cu's beta_on_rows); norpass, rpass
// (the forward pass with the state in registers off, for GDN at V-slices of 128 too:
// launch_state_fwd_as); preplead4, preplead8, preplead16, preplead32, noplead (wy_prep beside the
// forward's pass at most that many chunks ahead of it, or without a lead: delta_cuda.cu's
// prep_lead); notmareg (the register pass beside wy_prep by cp.async, not
// TMA), reg3st (that pass by TMA at three stages, not four: launch_state_fwd_reg); notmabeside
// (KDA's and GDN2's pass beside wy_prep by cp.async: delta_cuda.cu's forward); ffwd (DeltaNet's
// fused Recompute forward at K = V = 128 as one kernel, fwd_fused.cuh: delta_cuda.cu's forward);
// ffwdp, noffwdp (that kernel with its producer forming P alone after wy_prep's 𝒯-only kernel,
// DeltaNet's default where more than 64 V-slices of 64 run: at every pair count and for GDN too,
// or nowhere; the same); ffwdpg (GDN's by that rule: the same);
// grad_chunk's removed ones are listed at launch_impl.cuh's launch_grad.
inline bool experiment(const char* name) {
  static const std::string list = [] {
    const char* e = std::getenv("REWY_EXPERIMENTS");
    return "," + std::string(e ? e : "") + ",";
  }();
  return list.find("," + std::string(name) + ",") != std::string::npos;
}

// A variant's name in kernel names and experiment switches (VariantId order).
inline const char* variant_name(int variant) {
  static const char* const names[] = {"deltanet", "gdn", "kda", "gdn2"};
  return names[variant];
}

// experiment(name) for every variant, or name:variant (e.g. factor:kda) for one: a candidate default
// for one variant timed in the FLA table of the same call (REWY_EXPERIMENTS set for bench_delta).
inline bool experiment(const char* name, int variant) {
  return experiment(name) || experiment((std::string(name) + ":" + variant_name(variant)).c_str());
}

// ... for a Variant (whose order is VariantId's: delta_cuda.cu's variant_id asserts it).
inline bool experiment(const char* name, Variant v) { return experiment(name, static_cast<int>(v)); }

}  // namespace rewy::delta::cuda_impl
