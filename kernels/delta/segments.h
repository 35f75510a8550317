// The segment scan of the state recurrence: each sequence's chunks cut into segments whose state
// passes run side by side, for the few-pair shapes, where one sequential pass a (sequence, head)
// leaves most SMs idle (Config::scan_segments; the CUDA forward of DeltaNet and GDN).
//
// The state a segment ends with is affine in the state it starts from:
//   H_out(s) = Φ_s H_in(s) + L_s
// L_s [K][V]: the segment's end state from a zero start (its own inputs alone);
// Φ_s [K][K]: its homogeneous map, the end state from the identity with v = 0 (the product of its
// steps' transitions, gates and erasures included; the kernels form it as a K×K state, K = V).
// A scan over a sequence's segments, H_in(first) = h0 and H_in(s + 1) = Φ_s H_in(s) + L_s, gives
// each segment's start, and the output pass then runs every segment from its own: the outputs and
// final state of the whole sequence (up to rounding), for two passes of T / S chunks (the first
// twice as wide) and S − 1 products of K×K by K×V a sequence, in place of one pass of T chunks.
//
// The two-pass form (Config::segment_form): a chunk's outputs are affine in the state too,
// O_c = O_c(local) + Y_c H_in(s), Y_c the outputs of the homogeneous pass (the one that forms Φ).
// So one pass runs every segment from its own start beside the homogeneous one, keeping the
// outputs of both, the scan gives H_in, and add_segment_corrections adds Y H_in. Each sequence's
// first segment runs from h0 itself (its outputs are final; its end state is H_in of the next
// segment): the scan from zero with that segment's L so formed gives the same starts, H_in of a
// first segment being zero.
#pragma once
#include <cstdint>
#include <vector>

#include "engine/tensor.h"
#include "kernels/delta/delta.h"

namespace rewy::delta {

struct SegmentLayout {
  Dims dims;                       // the segments as sequences: dims.N segments, dims.seq_start their token offsets
  std::vector<int64_t> seg_first;  // [N + 1]: sequence n's segments are [seg_first[n], seg_first[n + 1])
};

// Each sequence of d cut into min(segments, its chunks) segments of whole `chunk`-token chunks (the
// last takes the sequence's ragged chunk), as equal as the chunks divide (the earlier ones a chunk
// longer). Chunk boundaries stay where they were: per-chunk tensors index the same under either
// layout. An empty sequence has no segment.
SegmentLayout segment_layout(const Dims& d, int chunk, int segments);

// The scan over segments (CPU; the twin of the CUDA forward's): h0 [N, H, K, V] or undefined
// (zeros), L [Nseg, H, K, V], Phi [Nseg, H, K, K], CPU tensors of one float dtype (f32 or f64, as
// L's) -> H_in [Nseg, H, K, V] (each segment's start) and, where ht is given, the sequences' end
// states [N, H, K, V] (h0 for an empty sequence).
void scan_segments(const Tensor& h0, const Tensor& L, const Tensor& Phi, const std::vector<int64_t>& seg_first,
                   Tensor& H_in, Tensor* ht);

// The backward's scan, last segment first. ∂H, the state's gradient, runs the transposed map:
// ∂H_in(s) = Φ_sᵀ ∂H_out(s) + M_s, M_s [K][V] the segment's ∂H_in from ∂H_out = 0 (its own
// outputs' gradients alone; the terms ∂H gathers from a chunk's outputs do not depend on the
// state). From ∂H_out(last) = dht: dht [N, H, K, V] or undefined (zeros), M [Nseg, H, K, V], Phi
// [Nseg, H, K, K] as scan_segments' -> dH_out [Nseg, H, K, V] (each segment's ∂H at its end: the
// dht of its own backward) and, where dh0 is given, the sequences' ∂h0 [N, H, K, V] (dht for an
// empty sequence).
void scan_segments_reverse(const Tensor& dht, const Tensor& M, const Tensor& Phi, const std::vector<int64_t>& seg_first,
                           Tensor& dH_out, Tensor* dh0);

// The two-pass form's correction (the twin of the CUDA forward's segment_correct_kernel): o += Y
// H_in(s) over the tokens of every segment s of sl, o [B, T, H, V] (each segment's outputs from
// its own start), Y [B, T, H, K] (the homogeneous pass's outputs), H_in [Nseg, H, K, V]: CPU
// tensors of one float dtype (f32 or f64), contiguous.
void add_segment_corrections(Tensor& o, const Tensor& Y, const Tensor& H_in, const SegmentLayout& sl);

// The decay cut (DeltaNet, GDN): where the state map of a run of chunks is below a tolerance in
// norm, a segment's start state is its predecessor's run from zero, all that came before having
// decayed out. A token's map is e^{g_t} (I − β_t k_t k_tᵀ), of spectral norm
// e^{g_t} max(1, |1 − β_t ‖k_t‖²|), so the run's map Φ has ‖Φ‖₂ ≤ e^{Σ_t g_t + log max(1, |1 − β_t ‖k_t‖²|)}
// and dropping Φ H_b changes the state by at most that times ‖H_b‖: below fp32 rounding at a
// bound of 2^-30. DeltaNet's bound (g = 0) never falls below 1: its segments start at their
// sequences' starts.
// chunk_decay_bounds: that exponent for each chunk and head, [num_chunks * H] (chunk-major, the
// chunk order of Dims::chunk_start), from k [B, T, H, K], beta [B, T, H] and GDN's g [B, T, H]
// (undefined for DeltaNet), CPU tensors of f32 or f64.
std::vector<double> chunk_decay_bounds(const Tensor& k, const Tensor& beta, const Tensor& g, const Dims& d, int chunk);
// For each segment of sl and head, [Nseg * H]: the chunk its pass starts from, the latest chunk b
// before its first, no farther back than the segment is long (nor than max_reach chunks where it is
// above 0), with Σ bounds over [b, first) ≤ log_tolerance (from zero there); else, for a sequence's
// first segment, its own first chunk (from h0), and for the others kLookBack: from the
// predecessor's end state (the CUDA pass waits for it, or its fallback runs).
constexpr int64_t kLookBack = -1;
// The CUDA plan's reach where the decay cut has a fallback (a head that has not cut within it
// takes the fallback; the plan reads only the chunks it walks). The benchmark's gates
// (logsigmoid(N(0, 1)) / 16 a token, about −3.2 a 64-token chunk) cut at 2^-30 after 7 chunks,
// now and then 8.
constexpr int64_t kCutReachWithFallback = 8;
std::vector<int64_t> decay_cut_starts(const std::vector<double>& bounds, const SegmentLayout& sl, int64_t H, int chunk,
                                      double log_tolerance, int64_t max_reach = 0);
// The backward's cut, the same bound read forward in time: ∂H runs the transposed maps, of the
// same norms, so each segment's ∂H at its end is that of a backward from zero at a later chunk once
// the run between has decayed past the tolerance. For each segment of sl and head, [Nseg * H]:
// the chunk its backward starts from (exclusive: ∂H is zero after that chunk's predecessor), the
// earliest e after its last chunk, no farther on than the segment is long, with Σ bounds over [its
// end, e) ≤ log_tolerance; else, for a sequence's last segment, its sequence's end chunk (from
// dht), and for the others kLookForward: from the successor's ∂H at its start (the look-back's
// mirror).
// max_reach as decay_cut_starts' (the chunks walked after the segment at most, where above 0).
constexpr int64_t kLookForward = -1;
std::vector<int64_t> decay_cut_ends(const std::vector<double>& bounds, const SegmentLayout& sl, int64_t H, int chunk,
                                    double log_tolerance, int64_t max_reach = 0);

}  // namespace rewy::delta
