// Delta-rule token mixers: DeltaNet, GDN, KDA, GDN2 (one recurrence, four gate parametrisations).
// Math and notation: ../shared/design/delta-rule-math.md (sections cited as §n).
//
//   S_t = (I - k_t (b_t ⊙ k_t)^T) Diag(exp(g_t)) S_{t-1} + k_t (ω_t ⊙ v_t)^T,    o_t = scale · S_t^T q_t
//
//   variant   b_t (erase)   ω_t (write)   g_t (log-decay, <= 0)
//   DeltaNet  β_t 1         β_t 1         0
//   GDN       β_t 1         β_t 1         scalar per (t, head)
//   KDA       β_t 1         β_t 1         per channel, [K]
//   GDN2      b_t [K]       w_t [V]       per channel, [K]
//
// Layouts (FLA's): q, k [B, T, H, K]; v, o, do [B, T, H, V]; beta and GDN's g [B, T, H];
// KDA/GDN2 g and GDN2 b [B, T, H, K]; GDN2 w [B, T, H, V]; states h0, ht, dht, dh0 [N, H, K, V].
// Varlen: B == 1, cu_seqlens [N + 1] (i32 or i64) with cu_seqlens[0] = 0, cu_seqlens[N] = T;
// without cu_seqlens the N = B sequences have length T each.
//
// Entry points dispatch on the tensors' device and on Config::impl:
//   CPU  naive (token recurrence; computed in f64 whatever the input dtype) or chunk (f32 or f64,
//        computed in the input dtype);
//   CUDA chunk (bf16 q/k/v/beta/b/w/do, f32 g and states; see kernels/delta/cuda/).
// Gradient convention: backward *writes* (=) every gradient it returns (they are activations).
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/tensor.h"

namespace rewy::delta {

enum class Variant { DeltaNet, GDN, KDA, GDN2 };
enum class BackwardAlgo { ReWY, Baseline };  // §5 (one residual solve) vs §4 (FLA's inverse adjoint)
enum class Policy { Recompute, Save };       // §2.3
enum class Impl { Naive, Chunk };
enum class SegmentForm { Auto, ThreePass, TwoPass, DecayCut };  // Config::segment_form
enum class DkStateTerm { Auto, On, Off };                         // Config::dk_state_term

Variant parse_variant(const std::string& s);  // deltanet|gdn|kda|gdn2
BackwardAlgo parse_backward(const std::string& s);  // rewy|baseline
Policy parse_policy(const std::string& s);  // recompute|save
Impl parse_impl(const std::string& s);  // naive|chunk
const char* name(Variant v);
const char* name(BackwardAlgo b);
const char* name(Policy p);
const char* name(Impl i);

inline bool has_beta(Variant v) { return v != Variant::GDN2; }
inline bool has_gate(Variant v) { return v != Variant::DeltaNet; }
inline bool channel_gate(Variant v) { return v == Variant::KDA || v == Variant::GDN2; }

struct Config {
  Variant variant = Variant::GDN;
  Impl impl = Impl::Chunk;
  BackwardAlgo backward = BackwardAlgo::ReWY;
  Policy policy = Policy::Recompute;
  int chunk = 64;        // C; any T, ragged last chunk
  double scale = 0.0;    // 0 means 1/sqrt(K)
  bool output_final_state = true;
  // CPU chunk with f32 inputs only: round q, k, v, beta, b, w, do and every intermediate the CUDA
  // kernels keep in bf16 (𝒯, W, U, E, H snapshots, P, ∂E, ...) to bf16, so that the CPU computes
  // what a bf16 GPU pipeline computes up to fp32 accumulation order. Used to derive GPU error bars;
  // the exact list of rounding points is in docs/delta-cpu.md.
  bool round_to_bf16 = false;
  // CUDA: width of the V-slices of the sequential state kernels (one CTA per sequence, head and
  // slice): 0 picks by occupancy (kernels/delta/cuda/state_slices.cpp: 128 or 64 once they give
  // 128 CTAs, 16 when its CTAs fit one wave on 132 SMs, else 32 or 64; the backward's two passes
  // side by side counted together, and wider beside grad_chunk); 16, 32, 64 or 128 for every state
  // pass of the call.
  int state_slice = 0;
  // CUDA: state_bwd's width alone (16, 32, 64 or 128; 0: as above), e.g. to measure the backward
  // with its two state passes at different widths.
  int state_bwd_slice = 0;
  // CUDA, Recompute backward: the replay's state pass (H snapshots, E) and state_bwd (∂H⁺, ∂E)
  // read only wy_replay's outputs, not each other's, so state_bwd is launched as a programmatic
  // dependent of the replay and the two run side by side (with few sequence-head pairs each leaves
  // most SMs idle; launch_info then counts both passes' CTAs when it picks the V-slice width);
  // false runs them one after the other (for measurement; at the same width the results are the
  // same but for the order of ∂β's and ∂g's atomic sums).
  bool concurrent_state_passes = true;
  // CUDA, backward: where the sequential state passes leave at least a quarter of the SMs idle
  // (few sequence-head pairs), where the Recompute backward's two passes run side by side, and for
  // KDA and GDN2 everywhere, grad_chunk is launched as a programmatic dependent of state_bwd and
  // starts a chunk as soon as both passes have finished it (per-chunk counts in global memory), in
  // the order they finish chunks; the Save backward's state_bwd then takes wider V-slices (fewer
  // CTAs, the rest of the SMs to grad_chunk). false starts grad_chunk after state_bwd's grid
  // everywhere (for measurement; at the same widths the results are as above).
  bool overlap_grad = true;
  // CUDA, experimental (off: slower as it stands): where the forward state pass (and the
  // Recompute backward's replay of it) runs in V-slices narrower than V, the slices of one
  // (sequence, head) form a thread-block cluster that loads each chunk's W, K̄, Q̂ and P once, by
  // TMA multicast, instead of once per slice (at slices of 16 and 32 a step waits 37-46% for those
  // loads). With a cluster barrier between steps the replay became 3-30% slower where it ran
  // (KDA's backward at (1, 16384, 16) 1.92 -> 2.72 ms beside state_bwd), and the forward's
  // clusters of 4 and 8 did not all fit at once (H200, 2026-11-30, docs/perf-delta.md).
  bool multicast_state_tiles = false;
  // CUDA Recompute forward (and DeltaNet's Save forward where the pass's V-slices are 64 or
  // wider): with few (sequence, head) pairs (at most 64 state-pass CTAs at V-slices of 64) the state
  // pass is launched first, in the V-slices that keep it to 64 CTAs (DeltaNet, GDN) or 32 (KDA,
  // GDN2; state_slice 0), and wy_prep beside it as its programmatic dependent on the SMs it leaves,
  // taking chunks in position order; the pass issues a chunk's loads once wy_prep has flagged it
  // out. The results are those of the serial forward at the same slice width (Recompute forward
  // 1.05-1.10x a variant at the few-pair shapes, DeltaNet's Save forward 1.25-1.28x at 32 pairs;
  // H200). Off where the pass would hold more than half the device's SMs, under
  // CUDA_LAUNCH_BLOCKING=1, under compute-sanitizer and Nsight Compute (known by the variables they
  // give their child) and with REWY_SERIAL_FORWARD=1; where grids cannot run side by side all the
  // same (another tool that runs them one at a time: set REWY_SERIAL_FORWARD=1 there) the pass
  // gives up after REWY_PASS_WAIT_MS (10 s) and the call raises.
  bool prep_beside = true;
  // Every Save forward beside (off: 0.88-1.30x the serial one for the others, H200).
  bool prep_beside_save = false;
  // CUDA: warps of the chunk-parallel gradient kernel: 0 picks (16: 5-8% faster than 8 on the
  // H200 for every variant, though 16 caps a thread at 128 registers and GDN2's kernel spills
  // 56-68 bytes), 8 or 16.
  int grad_warps = 0;
  // CUDA: warps of the forward's chunk-parallel WY kernel (wy_prep): 0 picks (KDA and GDN2: the
  // kernel in channel slices of 64, 8 warps, two CTAs an SM; else 8), 8 or 16 (KDA and GDN2: the
  // one-CTA kernel over the whole K at that width).
  int prep_warps = 0;
  // CUDA: wy_prep forms the operands of the state pass on the warps that the inverse leaves idle,
  // beside it, where W and U are formed there (the whole-K kernel for channel gates, and the scalar
  // ones at V-slices of 16 and 32). H200, 2026-12-01: wy_prep 1.027x KDA, 1.067x GDN2, 1.038x GDN
  // at V-slices of 32. Off by default: compute-sanitizer's racecheck reports hazards across the
  // block barrier that follows the solve's named barrier (3 warps) in these kernels
  // (docs/measurements/2026-12-01-s17/call3-experiments/race_none.log); it reports the same pair
  // in a 40-line kernel with right results (tests/repro/named_barrier_racecheck.cu,
  // docs/measurements/2026-12-01-s18/call3-ab/), so they look like the tool's; on, the small
  // case's racecheck would have to run without it.
  bool prep_overlap = false;
  // CUDA: warps of the Recompute backward's WY replay (wy_replay): 0 picks (8), 8 or 16.
  int replay_warps = 0;
  // CUDA, KDA's Recompute forward at V-slices of 64 and 128 with wy_prep in channel slices, where
  // wy_prep does not run beside the pass: the state pass forms E = 𝒯 Diag(β) (V − (K ⊙ Γ) H)
  // itself (as DeltaNet's and GDN's fused pass), wy_prep writing K ⊙ Γ and 𝒯 Diag(β) instead of
  // W and U: 1.10-1.11x at (8, 2048, 16) and (8, 4096, 32) (H200); beside wy_prep it was slower,
  // so not there. false: W and U from wy_prep (for measurement, and for comparing launch orders
  // bit for bit).
  bool fuse_kda_forward = true;
  // CUDA Recompute forward of DeltaNet and GDN at K = V = 128: the segment scan
  // (kernels/delta/segments.h), for the few-pair shapes whose single state pass a (sequence, head)
  // is a chain of T / 64 steps on a few SMs. Each sequence's chunks are cut into this many segments
  // (fewer where it has fewer chunks) whose passes run side by side. 0: the count by rule
  // (delta_cuda.cu's scan_segment_choice, with the measurements): the two-pass form at up to 16
  // (sequence, head) pairs, GDN's decay cut with its fallback at up to 32, each with at least 8
  // chunks a segment; 1: off (the sequential forward); S > 1: S segments wherever it applies (not
  // for K or V of 64, Save, slices of 16-32; KDA's fused form and GDN2 in the two-pass form alone,
  // where asked or under REWY_EXPERIMENTS=kseg2p, 0.84-0.97x their default: not the default).
  int scan_segments = 0;
  // The segment scan's form. Auto: GDN's DecayCut with its fallback at up to 32 pairs (see
  // cut_fallback_segments), else TwoPass (REWY_EXPERIMENTS=dcut: DecayCut without a fallback;
  // segscan: ThreePass; nodcut: TwoPass for GDN too). ThreePass: wy_prep, then one pass over every
  // segment forms its end state from zero and its map Φ from the identity, a scan over each
  // sequence's segments gives their start states, and the output pass runs every segment from its
  // own: three passes' work. TwoPass: one pass of two planes, each segment's outputs and end state
  // from its own start (a sequence's first segment from h0, the others from zero) beside Y and Φ
  // from the identity with v = 0 (Y = that plane's outputs), the scan, then O += Y H_in on tensor
  // cores (the two-pass identity in kernels/delta/segments.h): two passes' work, O rounded to bf16
  // once more. DecayCut (GDN only): no scan; each segment's pass starts at the latest chunk before
  // it, no farther back than the segment is long, whose run's state map is bounded below 2^-30 in
  // norm (the gates' decay; segments.h's decay_cut_starts), from zero there; a sequence's first
  // segment from h0; any other segment with no such chunk waits for its predecessor's end state
  // (the look-back): one pass of S segments plus their warm-up chunks (about 7 chunks at the
  // benchmark's gates), the fastest form there. With weak decay (a head's log-decay near 0 a chunk)
  // every segment looks back: the chain is then the sequential forward's at whole-V slices,
  // 0.40-0.60x the default there (H100, 2026-12-05, docs/measurements/2026-12-05-s50/call1/), so
  // Auto takes it only with a fallback.
  SegmentForm segment_form = SegmentForm::Auto;
  // DecayCut with scan_segments set: what runs instead where any segment would look back (a head
  // whose decay has not cut within 8 chunks of a segment's start), decided on the device by the
  // plan: 0 nothing (the look-back), 1 the sequential forward (wy_prep beside it where that
  // applies), S >= 2 the two-pass form over S segments a sequence. (Auto with scan_segments 0 takes
  // the decay cut so at up to 32 pairs, the two-pass form at its own count up to 16 pairs and the
  // sequential forward at 17-32 as its fallback: 1.23-1.51x the forward at the benchmark's gates,
  // 0.91-0.99x at weak decay, H200, docs/measurements/2026-12-05-s53/call1/.)
  int cut_fallback_segments = 0;
  // CUDA Recompute backward of GDN at K = V = 128 (state_bwd on wgmma): the decay cut of its two
  // state passes, the forward's read both ways in time. Each sequence's chunks are cut into this
  // many segments; the replay's pass runs each segment from zero at its cut (at most 8 chunks back)
  // and state_bwd each from zero after its stop (at most 8 chunks on, where the run's transposed
  // maps, of the same norms, are bounded below 2^-30), one CTA a (segment, head) at whole-V slices,
  // a sequence's first segment from h0 and its last from dht. A plan on the device, from k, β and
  // g, sets a word where any segment finds no cut within reach; the default passes run then, the
  // cut's where it does not (both are launched; the other path's CTAs leave at once). 0: by rule
  // (at up to 32 pairs whose longest sequence has at least 256 chunks, segment-head pairs near 128,
  // at least 8 chunks a segment; else none; REWY_EXPERIMENTS=nodcut: none); 1: none; S > 1: S
  // segments wherever it applies.
  int backward_cut_segments = 0;
  // CUDA Recompute ReWY backward of DeltaNet at K = V = 128, state_bwd at whole-V slices, grad_chunk
  // at 16 warps: ∂K̄'s state term E ∂H⁺ᵀ formed by state_bwd, which then runs after the replay (it
  // reads the replay's E), and read by grad_chunk in place of ∂H⁺: no ∂H⁺ snapshots. Auto: where
  // the two state passes would not run side by side anyway (from 128 pairs at V = 128): Recompute
  // backward 1.061x at (8, 2048, 16), 1.059x at (8, 4096, 32); at (4, 4096, 16), where it kept
  // the passes apart, 0.897x (H200, 2026-12-06, REWY_EXPERIMENTS=dkstate); 1.023-1.029x at both
  // on an H100 (docs/measurements/2026-12-06-s58/, calls 1 and 2). On: wherever it applies
  // (state_bwd after the replay). Off: never (REWY_EXPERIMENTS=nodkstate: Auto as Off). The bf16
  // twin (round_to_bf16) rounds that term as the kernels do under On alone (DeltaNet, ReWY,
  // K = V = 128): a test whose device call took it under Auto (dk_state_backwards()) compares
  // against the On twin.
  DkStateTerm dk_state_term = DkStateTerm::Auto;
};

struct Inputs {
  Tensor q, k;        // [B, T, H, K]
  Tensor v;           // [B, T, H, V]
  Tensor beta;        // [B, T, H]       DeltaNet, GDN, KDA
  Tensor g;           // GDN [B, T, H]; KDA, GDN2 [B, T, H, K]
  Tensor b;           // GDN2 [B, T, H, K]
  Tensor w;           // GDN2 [B, T, H, V]
  Tensor h0;          // optional [N, H, K, V]
  Tensor cu_seqlens;  // optional [N + 1]
};

// Sizes derived from Inputs, validated (every mis-shaped or missing tensor is an error naming it).
struct Dims {
  int64_t B = 0, T = 0, H = 0, K = 0, V = 0;
  int64_t N = 0;                  // number of sequences
  std::vector<int64_t> seq_start;  // [N + 1] token offsets into the flattened [B*T] token axis
  int64_t num_chunks(int C) const;  // Σ_n ceil(len_n / C)
  std::vector<int64_t> chunk_start(int C) const;  // [N + 1] index of sequence n's first chunk in Saved::Hs
};
// Validates every tensor for cfg.variant: presence, shape, dtype (CPU: one of f32/f64 for all float
// inputs; CUDA: q k v beta b w bf16, g h0 f32), device, cu_seqlens (i32/i64, B == 1, 0 = c_0 <= ... =
// T), chunk > 0. Values are not read except cu_seqlens.
Dims check_inputs(const Config& cfg, const Inputs& in);

// What the forward keeps for the backward (§2.3). Every field is named after the math doc;
// per-chunk C×C matrices are stored FLA-style as [B, T, H, C] (row i of a chunk at its token).
struct Saved {
  Policy policy = Policy::Recompute;
  // Chunk path only (the naive path saves nothing: its backward replays the recurrence).
  Tensor G;      // in-chunk cumsum of g: GDN [B, T, H], KDA/GDN2 [B, T, H, K]; DeltaNet: undefined
  Tensor Tinv;   // 𝒯 = (I + A)^-1 per chunk, [B, T, H, C] (columns past a ragged chunk's end are 0)
  // Save policy only (Recompute leaves these undefined and the backward rebuilds them):
  Tensor W;      // [B, T, H, K]
  Tensor U;      // [B, T, H, V]
  Tensor E;      // v_new = U − W H, [B, T, H, V]
  Tensor P;      // tril(Q̂ K̃ᵀ) per chunk (gated, with diagonal), [B, T, H, C]; CUDA: both policies
  Tensor Hs;     // state entering each chunk, [num_chunks, H, K, V] (unrounded; chunk order: sequence-major)
  // CUDA, Save policy only: operands of the sequential backward kernel (§2.3's qg, kg).
  Tensor Qg;     // Q̂ = Q ⊙ Γ, [B, T, H, K]
  Tensor Qlo;    // Q̂ − bf16(Q̂) in bf16 (gated variants): ∂H's Q̂ᵀ∂O uses both terms, [B, T, H, K]
  Tensor Kg;     // K̄ = K ⊙ e^{γ − G}, [B, T, H, K]
  Tensor gexp;   // e^γ of each chunk, [num_chunks, H, K] (also Recompute's with Tbeta, below)
  // CUDA, GDN's Save policy where the state passes take row gates (state slices of 64 and 128):
  // e^{G_i} and e^{γ − G_i} of each chunk's rows, [num_chunks, H, 2C], in place of Qg, Qlo and Kg.
  // Also GDN's Recompute with Tbeta (below), beside gexp.
  Tensor gate_rows;
  // CUDA, Recompute: 𝒯 Diag(β), [B, T, H, C], where the forward's state pass formed E from it
  // (DeltaNet and GDN at V-slices of 64 and 128), or its unfused wy_prep kept it for a fused
  // replay (slices of 16 and 32); with e^γ and GDN's row gates, so that the backward runs no
  // wy_replay. One C-wide tensor more than 𝒯 and P; 𝒯 itself where row_betas is defined.
  Tensor Tbeta;
  // β of each chunk's rows, [num_chunks, H, C] f32, where Tbeta is 𝒯 itself (β on the rows: the
  // default, but for DeltaNet at up to 32 pairs): the forward wrote no 𝒯 Diag(β), and the
  // backward's passes take β on the rows.
  Tensor row_betas;
};

// CUDA: the forward's checks of g's values (g <= 0; gate spans the kernels support) run in its
// kernels and end after forward() returns: a host synchronisation inside every call would stall
// each layer of a training step. Their error is raised by ForwardResult::verify() (waits for that
// forward), by backward() of that result, or by the next CUDA delta-rule call on the device.
struct PendingCheck {
  virtual ~PendingCheck() = default;
  virtual void wait_and_raise() const = 0;
};

struct ForwardResult {
  Tensor o;   // [B, T, H, V]
  Tensor ht;  // [N, H, K, V] (undefined unless cfg.output_final_state)
  Saved saved;
  std::shared_ptr<const PendingCheck> pending;  // CUDA only
  // Waits for the forward's device-side checks and throws their error (no-op on CPU).
  void verify() const {
    if (pending) pending->wait_and_raise();
  }
};

struct Grads {
  Tensor dq, dk, dv;  // like q, k, v
  Tensor dbeta;       // like beta (DeltaNet, GDN, KDA)
  Tensor dg;          // like g (GDN, KDA, GDN2)
  Tensor db, dw;      // like b, w (GDN2)
  Tensor dh0;         // [N, H, K, V] when h0 was given
};

// Backward extras: dout [B, T, H, V] and dht (optional) [N, H, K, V] in the inputs' dtype on CPU (CUDA:
// dout bf16, dht f32), and, for the CPU chunk path, the Saved tensors that cfg.policy promises.
void check_backward_inputs(const Config& cfg, const Inputs& in, const Dims& dims, const ForwardResult& fwd,
                           const Tensor& dout, const Tensor& dht);

// CPU: g must be a finite log-decay (<= 0); the chunk path relies on G being non-increasing (§6).
ForwardResult forward(const Config& cfg, const Inputs& in);
// dout [B, T, H, V]; dht optional [N, H, K, V]. `fwd` must come from forward() with the same
// cfg and inputs (its Saved is what the policy kept).
Grads backward(const Config& cfg, const Inputs& in, const ForwardResult& fwd, const Tensor& dout,
               const Tensor& dht);
// CUDA: how many state passes this process has run as thread-block clusters sharing their tiles
// (Config::multicast_state_tiles); 0 without CUDA. For tests that must know the path ran.
int64_t multicast_state_launches();
// CUDA: how many forward state passes this process has run with the state in registers
// (kernels/delta/cuda/state_fwd_reg.cuh; REWY_EXPERIMENTS=rpass); 0 without CUDA.
int64_t register_pass_launches();
// CUDA: how many forwards this process has run as one kernel (kernels/delta/cuda/fwd_fused.cuh;
// REWY_EXPERIMENTS=ffwd); 0 without CUDA.
int64_t one_kernel_forwards();
// CUDA: how many backwards this process has run with grad_chunk beside the state passes
// (Config::overlap_grad, where it applies); 0 without CUDA.
int64_t overlapped_backwards();
// CUDA: how many forwards this process has run with wy_prep beside the state pass
// (Config::prep_beside, where it applies); 0 without CUDA.
int64_t prep_beside_forwards();
// CUDA: how many Recompute forwards this process has run whose unfused wy_prep (DeltaNet and GDN
// at V-slices of 16 and 32) kept 𝒯 Diag(β) for a fused replay; 0 without CUDA.
int64_t unfused_forwards_keeping_tbeta();
// CUDA: how many KDA and GDN2 forwards this process has run with E formed in the state pass
// (Config::fuse_kda_forward, where it applies; GDN2 under REWY_EXPERIMENTS=g2fuse); 0 without CUDA.
int64_t fused_channel_forwards();
// CUDA: how many forwards this process has run by the segment scan (Config::scan_segments); 0
// without CUDA.
int64_t segment_scan_forwards();
// ... of which by its two-pass form, and by the decay cut (Config::segment_form).
int64_t two_pass_segment_forwards();
int64_t decay_cut_forwards();
// CUDA: the path the last decay cut took where it had a fallback (Config::cut_fallback_segments):
// 1 where a segment would have looked back and the two-pass fallback ran, 0 where the cut's pass
// ran; -1 where the last decay cut had none, or none ran (always without CUDA). Waits for that
// forward to finish.
int decay_cut_fell_back();
// CUDA: how many backwards this process has run with the decay cut launched
// (Config::backward_cut_segments), and the path the last one took: 1 the default passes (a segment
// found no cut within reach), 0 the cut's; -1 where none ran (always without CUDA). Waits for that
// backward to finish.
int64_t decay_cut_backwards();
int decay_cut_backward_fell_back();
// CUDA: how many backwards this process has run with ∂K̄'s state term from state_bwd
// (Config::dk_state_term); 0 without CUDA.
int64_t dk_state_backwards();
// CUDA: how many backwards this process has run on the forward's 𝒯 with β on the rows (no
// 𝒯 Diag(β) kept: Saved::row_betas); 0 without CUDA.
int64_t row_beta_backwards();

}  // namespace rewy::delta
