// Shared pieces of the chunkwise delta-rule kernels: parameters, variant traits, tile loads,
// in-chunk gate cumsums and the gated (centred) operands of §6.
#pragma once
#include <cuda_bf16.h>

#include <cstdint>

#include "engine/cuda/ops_common.cuh"
#include "kernels/delta/cuda/mma.cuh"

namespace rewy::delta::cuda_impl {

using ::rewy::detail::cuda_ops::warp_sum;

constexpr int kChunk = 64;           // C: rows of a chunk (one m64 tile)
constexpr int kCP = kChunk + 8;      // padded leading dimension of C-wide bf16 tiles
constexpr int kThreads = 256;        // 8 warps per CTA
constexpr int kBlock = 16;           // sub-chunk rows for channel-wise gates (§6)
constexpr int kPackedRows = 160;     // Σ_I 16 (I + 1): packed per-block operands
constexpr float kMaxExponent = 80.f;  // largest |exponent| a scaled operand may carry (fp32/bf16 max e^88.7)

enum VariantId : int { kDeltaNet = 0, kGDN = 1, kKDA = 2, kGDN2 = 3 };

template <int VAR>
struct VT {
  static constexpr bool gated = VAR != kDeltaNet;
  static constexpr bool vec_gate = VAR == kKDA || VAR == kGDN2;
  static constexpr bool scalar_gate = VAR == kGDN;
  static constexpr bool has_beta = VAR != kGDN2;
};

// Whether the forward state pass forms E = U − W H from 𝒯 Diag(β), k and v itself, as
// 𝒯 Diag(β) (V − Γ ⊙ K H) with Γ = e^G of the rows (1 for DeltaNet), never forming W or U (the
// Recompute forward of the scalar-gate variants at V-slices of whole 64-column panels): wy_prep
// then stores 𝒯 Diag(β) (8 KB a chunk) instead of W and U (32 KB), and the state pass reads it, k
// and v instead of W, K̄ and U (K̄ itself cannot fold into W, e^{G−γ} overflows). KDA's Recompute
// forward takes the same form with K ⊙ Γ from wy_prep_split beside K̄ (kfuse in delta_cuda.cu).
constexpr bool fuses_wu(int var) { return var == kDeltaNet || var == kGDN; }  // the variants it serves
constexpr bool fused_wu(int var, bool output, bool store, int bv) {
  return fuses_wu(var) && output && !store && bv % 64 == 0;
}
// The Recompute backward's replay state pass forms E the same way where nothing of the backward
// reads U (K = V = 128: grad_chunk's E-form, rewy_da_from_e; its baseline reads neither W nor U):
// wy_replay then forms 𝒯 Diag(β) and no U (replay_without_u: the head dims where it can;
// fused_replay: the replay passes that do, at V-slices of whole panels), and W only for state_bwd
// at V-slices of 16 and 32 (on wgmma it forms Wᵀ∂E from 𝒯 Diag(β) and k: replay_no_w).
constexpr bool replay_without_u(int var, int k, int v) { return fuses_wu(var) && k == 128 && v == 128; }
constexpr bool fused_replay(int var, int k, int v, bool output, bool store, int bv) {
  return replay_without_u(var, k, v) && !output && store && bv % 64 == 0;
}
// Whether a state_fwd pass forms E from 𝒯 Diag(β), k and v (either of the two above).
constexpr bool fused_state_pass(int var, int k, int v, bool output, bool store, int bv) {
  return fused_wu(var, output, store, bv) || fused_replay(var, k, v, output, store, bv);
}
// Whether a forward state pass (state_fwd) applies GDN's scalar gate to raw q and k as row factors
// in fp32: K̄ᵀE = Kᵀ (e^{γ−G} ⊙ E), Q̂ H = e^G ⊙ (Q H), with e^G and e^{γ−G} of each row from
// p.gate_rows. wy_prep (the fused forward) and wy_replay (the Recompute backward's replay) then
// store those rows instead of K̄, and wy_prep instead of Q̂ too. Not the unfused Recompute forward
// (V-slices of 16-32): there the output pass's extra row-scaled Eᵀ on a latency-bound step cost
// more (5-8% of the pass) than wy_prep saved (H200, 2026-11-30). GDN's Save forward takes them by
// its own rule (save_row_gates in delta_cuda.cu, state_fwd's SGATE): it must know that state_bwd
// will form Q̂ from q.
constexpr bool fused_gate(int var, bool output, bool store, int bv) {
  return var == kGDN && (output ? fused_wu(var, output, store, bv) : store);
}

// Words of DeltaParams::error_flag (mapped pinned host memory): a kernel that finds the error
// stores 1 there (plain stores: no memset or copy per call, and the host reads them without a copy).
// kErrPassStall: grad_chunk gave up waiting for the state passes' counts (DeltaParams::pass_wait_ns);
// kErrPrepStall: the forward's state pass gave up waiting for wy_prep's (DeltaParams::prep_done);
// kErrSegmentStall: the decay cut's look-back gave up waiting for its predecessor's end state
// (DeltaParams::seg_flags).
enum : int {
  kErrGateSpan = 0,
  kErrPositiveGate = 1,
  kErrPassStall = 2,
  kErrPrepStall = 3,
  kErrSegmentStall = 4,
  kErrWords = 5
};

// Where a chunk sits in the token stream: its first token and its valid rows (1..C).
struct ChunkSpan {
  int tok0, len;
};

namespace tma {
struct StateMaps;  // tma.cuh
}

// All pointers are token-major and contiguous: x[(tok * H + h) * D + d]; per-chunk C×C matrices
// [tok][H][C]; states [*][H][K][V].
struct DeltaParams {
  int H = 0;
  int64_t tokens = 0;  // B·T: the rows of the token-major tensors (the TMA maps' extent)
  // The forward pass of KDA and GDN2 beside wy_prep (state_fwd_body): the stage's shared tiles by
  // TMA boxes of these maps (device memory; W, K̄, Q̂, P), or by cp.async where null.
  const tma::StateMaps* beside_maps = nullptr;
  int num_chunks = 0, num_seqs = 0;
  const int* chunk_tok = nullptr;  // [num_chunks] first token of the chunk
  const int* chunk_len = nullptr;  // [num_chunks] valid rows (1..C)
  const int* seq_chunk = nullptr;  // [num_seqs + 1] first chunk of each sequence
  float scale = 1.f;
  // inputs
  const bf16_t *q = nullptr, *k = nullptr, *v = nullptr, *beta = nullptr, *b = nullptr, *w = nullptr;
  const float* g = nullptr;   // log-decay: [tok][H] (GDN) or [tok][H][K]
  const float* h0 = nullptr;  // [N][H][K][V] or null
  // forward intermediates / saved
  bf16_t* Tinv = nullptr;  // 𝒯 [tok][H][C]
  bf16_t* W = nullptr;     // [tok][H][K]
  bf16_t* U = nullptr;     // [tok][H][V]
  bf16_t* E = nullptr;     // v_new [tok][H][V]
  bf16_t* P = nullptr;     // [tok][H][C]
  bf16_t* Hs = nullptr;    // state entering each chunk [num_chunks][H][K][V]
  bf16_t* Qg = nullptr;    // Q̂ = Q ⊙ Γ [tok][H][K]
  bf16_t* Qlo = nullptr;   // Q̂ − bf16(Q̂), rounded: Q̂'s second bf16 term, gated variants [tok][H][K]
  bf16_t* Kg = nullptr;    // K̄ = K ⊙ e^{γ − G} [tok][H][K]
  float* gexp = nullptr;   // e^γ per chunk [num_chunks][H][K]
  // forward outputs
  bf16_t* o = nullptr;  // [tok][H][V]
  float* ht = nullptr;  // [N][H][K][V] or null
  // backward
  const bf16_t* dout = nullptr;  // [tok][H][V]
  const float* dht = nullptr;    // [N][H][K][V] or null
  bf16_t* dE = nullptr;          // [tok][H][V]
  bf16_t* dHs = nullptr;         // ∂H⁺ of each chunk [num_chunks][H][K][V]
  bf16_t *dq = nullptr, *dk = nullptr, *dv = nullptr, *dbeta = nullptr, *db = nullptr, *dw = nullptr;
  float* dg = nullptr;   // like g
  float* dh0 = nullptr;  // [N][H][K][V] or null
  // The fused forward (fused_wu) and replay (fused_replay): 𝒯 Diag(β) of each chunk [tok][H][C];
  // wy_prep stores it instead of W and U (wy_replay instead of U), and state_fwd forms E from it,
  // k and v. GDN's row gates (fused_gate): e^{G_i} and e^{γ − G_i} of the chunk's rows
  // [num_chunks][H][2][C], from wy_prep or wy_replay.
  bf16_t* Tbeta = nullptr;
  float* gate_rows = nullptr;
  // Set (DeltaNet, GDN, KDA; beta_on_rows in delta_cuda.cu): Tbeta points at 𝒯 itself, and wy_prep
  // writes β of each chunk's rows here (0 past its end) instead of 𝒯 Diag(β); the passes that read
  // Tbeta stage them and take β on the rows: E = 𝒯 (Diag(β) D) in state_fwd's fused step,
  // X = Diag(Γ β) 𝒯ᵀ (−∂E) in state_bwd's TBW. [num_chunks][H][C]. (Null with GDN2's Tbeta at 𝒯:
  // it has no β.)
  float* row_betas = nullptr;
  // The Recompute forward's unfused wy_prep (V-slices of 16 and 32) where the backward's replay is
  // fused and forms no W (replay_forms_no_w in delta_cuda.cu): the same 𝒯 Diag(β) and GDN's row gates,
  // kept for the backward, which then runs no wy_replay. (Tbeta and gate_rows stay null there:
  // that pass reads W and U, and Q̂ and K̄.)
  bf16_t* Tbeta_kept = nullptr;
  float* gate_rows_kept = nullptr;
  int* error_flag = nullptr;
  // The overlapped backward (LaunchInfo::overlap_grad): the state passes count each finished chunk
  // step in pass_done (one per V-slice CTA; [0, num_chunks H) the replay's H and E, [num_chunks H,
  // 2 num_chunks H) state_bwd's ∂H⁺ and ∂E), and grad_chunk starts a chunk once both counts reach
  // replay_slices and bwd_slices. grad_items: its CTAs' chunks in the order the passes finish them
  // ({chunk, tok0, len, position} [num_chunks]); grad_done: its finished CTAs (the last waits for the
  // passes' grids). Null: no counts, the launch order alone orders the kernels.
  // pass_stalled: set by the first grad_chunk CTA that waited pass_wait_ns for a count in vain (it
  // stores kErrPassStall too); the others then stop waiting, and the backward's results are void.
  unsigned* pass_done = nullptr;
  unsigned* grad_done = nullptr;
  unsigned* pass_stalled = nullptr;
  unsigned long long pass_wait_ns = 0;
  const int4* grad_items = nullptr;
  int replay_slices = 0, bwd_slices = 0;
  // REWY_KERNEL_TIMING=2: Σ over CTAs of each phase's cycles [kMaxPhases] (null: not measured)
  unsigned long long* phase_cycles = nullptr;
  // The forward with wy_prep beside its state pass (Config::prep_beside): the pass is launched
  // first and wy_prep as its programmatic dependent, on the SMs the pass leaves; wy_prep's CTAs
  // take chunks in position order (prep_items: {chunk, tok0, len, position} [num_chunks], every head of
  // one before the next) and flag each (chunk, head) out in prep_done [num_chunks][H]; the pass
  // issues a chunk's copies only once it is flagged. prep_done[num_chunks H]: wy_prep's finished
  // CTAs (the last waits for the pass's grid); [num_chunks H + 1]: set by the first pass CTA that
  // waited pass_wait_ns in vain (kErrPrepStall; the others stop waiting, the forward is void).
  unsigned* prep_done = nullptr;
  const int4* prep_items = nullptr;
  bool prep_stall_for_test = false;  // wy_prep flags prep_done's second copy (REWY_TEST_STALL_PREP)
  // The segment scan's map pass (Config::scan_segments; state_fwd's MAP): each segment's
  // homogeneous map Φ, its end state from the identity with v = 0 [num_seqs][H][K][K] (K = V; the
  // segments are the call's sequences), beside its end state from zero in ht.
  float* seg_maps = nullptr;
  // ... and where the call keeps no final state, each segment's flag [num_seqs], 1 where it ends
  // its sequence: its map serves only the final state, so its CTAs leave at once.
  const int* seg_last = nullptr;
  // The segment scan's two-pass form (SegmentForm::TwoPass; state_fwd's PLANES): each segment's
  // sequence where it is that sequence's first segment, else −1 [num_seqs] (a first segment runs
  // from the sequence's h0 and needs no map), and the homogeneous plane's outputs Y = s (Q̂ Φ_c +
  // P E) [tok][H][K] (K = V), which segment_correct_kernel multiplies by the segment's start state.
  const int* seg_seq = nullptr;
  bf16_t* seg_y = nullptr;
  // The decay cut (SegmentForm::DecayCut; state_fwd's WARM): the tolerance the chunks' log bounds
  // on the state map's norm are cut at, how many chunks before a segment the plan walks at most
  // (0: the segment's length), each segment's sequence and that sequence's first segment
  // [num_seqs], and each segment's start for each head [num_seqs][H] (decay_cut_plan_kernel: a
  // chunk ≥ 0, kPlanFromH0 or kPlanLookBack).
  float decay_log_tolerance = 0.f;
  int cut_reach = 0;
  const int* seg_owner = nullptr;
  const int* seg_lead = nullptr;
  int* seg_plan = nullptr;
  // The decay cut's look-back: a segment planned kPlanLookBack starts from its predecessor's end
  // state, which that segment's CTA stores in seg_end [num_seqs][H][K][V] (f32) and flags out in
  // seg_flags [num_seqs H] (a release after the stores). seg_flags[num_seqs H]: the CTAs' ticket
  // (each CTA takes its (segment, head) in the order CTAs start, segment-major, so the CTA a
  // look-back waits on has started before it and no wait holds an SM its predecessor needs);
  // [num_seqs H + 1]: set by the first CTA that waited pass_wait_ns in vain (kErrSegmentStall);
  // [num_seqs H + 2]: set by the plan where any segment looks back (kLookedBack).
  // Zeroed before each plan (launch_cut_plan).
  float* seg_end = nullptr;
  unsigned* seg_flags = nullptr;
  // The decay cut with its fallback (SegmentChoice::fallback): where set, the kernel's CTAs leave
  // at once unless *path_flag == path_value. The plan's look-back word: the cut's wy_prep and WARM
  // run where it is 0, the fallback's kernels (the two-pass form's, or the sequential forward's
  // wy_prep and pass) where it is 1 (a chain of look-backs would run the sequence's chunks one
  // after another at whole-V slices: 0.40-0.60x the default at weak decay). wy_prep and the
  // forward's output passes read it.
  const unsigned* path_flag = nullptr;
  unsigned path_value = 0;
  // The backward's decay cut (Config::backward_cut_segments; the replay pass's WARM, state_bwd_wg's
  // CUT): each segment's stop for each head [num_seqs][H], set by the plan where given (the chunk
  // after the last one its state_bwd runs, ≥ 0; kPlanFromDht; kPlanLookForward, which sets the
  // look-back word too: the default passes run then), and what its whole-V passes add to a chunk's
  // count in pass_done (the default passes' V-slices: grad_chunk waits for the same counts on
  // either path).
  int* seg_stop = nullptr;
  unsigned count_weight = 1;
  // DeltaNet's state term of ∂K̄, s E (∂H⁺ / s)ᵀ in bf16, of each chunk [tok][H][K]
  // (Config::dk_state_term: state_bwd's DKS forms it, grad_chunk reads it in place of ∂H⁺; dHs then null).
  bf16_t* dKs = nullptr;
  // wy_prep's lead beside the pass (delta_cuda.cu's prep_lead: DeltaNet's 16 by default,
  // REWY_PREP_LEAD=n, preplead16...): wy_prep's CTA for a chunk at position i of its sequence
  // (prep_items' w) waits, a bounded while (kPrepLeadCapNs), until the pass's CTAs have finished
  // (i − n) steps each (prep_done[num_chunks H + 2], which every pass CTA adds a step to, and its
  // missing steps up to prep_max_count at its end): wy_prep runs about n chunks ahead, so what it
  // reads and writes is still in L2 when the pass reads it. 0: off.
  int prep_lead = 0, prep_pass_ctas = 0, prep_max_count = 0;
  // REWY_BESIDE_CLOCK=1: the forward beside wy_prep, in globaltimer ns (BesideClock's words).
  unsigned long long* beside_clock = nullptr;
};
// DeltaParams::beside_clock's words: the pass's first start (min) and last end (max), Σ over its
// CTAs of their flag waits and of their spans; wy_prep's first start and last end, Σ over its
// CTAs of the lead's waits, how many gave up waiting (kPrepLeadCapNs); then kMaxPhases words, the
// pass's phase cycles (its DeltaParams::phase_cycles, beside wy_prep).
enum BesideClock : int { kPassStart, kPassEnd, kPassWaits, kPassSpans, kPrepStart, kPrepEnd, kPrepWaits, kPrepCapped, kClockWords };
// prep_done's words after the [num_chunks H] flags: wy_prep's finished CTAs, the stall, the pass's steps (preplead).
enum : int { kPrepFinished = 0, kPrepStalled = 1, kPassSteps = 2, kPrepWords = 3 };
inline constexpr unsigned long long kPrepLeadCapNs = 200000;

// The kernel's CTAs run on this path (DeltaParams::path_flag; null: always).
__device__ __forceinline__ bool on_path(const unsigned* flag, unsigned value) { return !flag || *flag == value; }

// The decay cut's plan for a (segment, head) besides a chunk to start from: from the sequence's h0
// (a sequence's first segment), or from the predecessor's end state (the look-back).
enum : int { kPlanFromH0 = -1, kPlanLookBack = -2 };
// ... and for the backward's end (DeltaParams::seg_stop): from the sequence's dht (its last
// segment), or from the successor's ∂H at its start (no cut within reach: the fallback runs).
enum : int { kPlanFromDht = kPlanFromH0, kPlanLookForward = kPlanLookBack };
// seg_flags' words after the [num_seqs H] segment flags: the ticket, the stall, the look-back.
enum : int { kSegTicket = 0, kSegStalled = 1, kLookedBack = 2, kSegWords = 3 };

// The segment scan's scan over segments (Config::scan_segments; kernels/delta/segments.h, whose
// scan_segments is the CPU twin): for each sequence of the call, H_in of its first segment = h0
// (zeros where null), H_in(s + 1) = Φ_s H_in(s) + L_s, and ht = the state after its last.
struct SegmentScanParams {
  int N = 0, H = 0;                  // the call's sequences, heads
  const int* seg_first = nullptr;    // [N + 1]: sequence n's segments [seg_first[n], seg_first[n + 1])
  const float* h0 = nullptr;         // [N][H][K][V] or null
  float* L = nullptr;                // [num segments][H][K][V]: each segment's end state from zero (the map pass's)
  float* Phi = nullptr;              // [num segments][H][K][K]: each segment's map (the map pass's)
  float* H_in = nullptr;             // [num segments][H][K][V]
  float* ht = nullptr;               // [N][H][K][V] or null
  // The two-pass form: each sequence's first segment ran from its h0, so its L is its end state
  // (H_in of the second segment) and its Φ was not formed; h0 is null and H_in(first) is left zero.
  bool first_exact = false;
  const unsigned* path_flag = nullptr;  // DeltaParams::path_flag's, for the decay cut's fallback
  unsigned path_value = 0;
};

constexpr int kMaxPhases = 8;

// Programmatic dependent launch (sm_90): a grid launched with
// cudaLaunchAttributeProgrammaticStreamSerialization may start once every CTA of the grid before
// it has run pdl_launch_dependents (so all of those CTAs are resident: a dependent that waits on
// their progress cannot starve them); pdl_wait_prerequisite waits for that grid's completion and
// its memory. Both are no-ops in a grid launched without the attribute.
__device__ __forceinline__ void pdl_launch_dependents() { asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory"); }
__device__ __forceinline__ void pdl_wait_prerequisite() { asm volatile("griddepcontrol.wait;\n" ::: "memory"); }

// Cross-CTA progress counts (pass_done): the block's global stores before a block barrier are
// published by thread 0's release add after it; a reader's acquire load by thread 0, then a block
// barrier, orders the block's later loads (cp.async included) after them.
__device__ __forceinline__ void count_release(unsigned* at) {
  asm volatile("red.release.gpu.global.add.u32 [%0], 1;\n" ::"l"(at) : "memory");
}
__device__ __forceinline__ unsigned load_acquire(const unsigned* at) {
  unsigned v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];\n" : "=r"(v) : "l"(at) : "memory");
  return v;
}
// The counting passes (the halves of pass_done) and one's count of chunk c of head h.
enum CountedPass { kReplayPass = 0, kStateBwdPass = 1 };
__device__ __forceinline__ unsigned* pass_count(const DeltaParams& p, CountedPass pass, int c, int h) {
  return p.pass_done + (int64_t(pass) * p.num_chunks + c) * p.H + h;
}
// A state pass's thread 0 counts this V-slice of chunk c out after the step's last block barrier,
// not right after the barrier that follows its stores: the release waits for the thread's copies
// in flight, which at the step's end are the next stage's, awaited by the next step anyway
// (whole backward at 16 pairs 1.016-1.029x, elsewhere 0.993-1.027x; H200, 2026-12-02,
// REWY_EXPERIMENTS=countend, docs/measurements/2026-12-02-s21/call2-sweeps/).
__device__ __forceinline__ void count_step(const DeltaParams& p, CountedPass pass, int c, int h) {
  if (p.pass_done && threadIdx.x == 0) count_release(pass_count(p, pass, c, h));
}
// ... by a decay cut's whole-V pass: p.count_weight (the default pass's V-slices) at once.
__device__ __forceinline__ void count_cut_step(const DeltaParams& p, CountedPass pass, int c, int h) {
  if (p.pass_done && threadIdx.x == 0)
    asm volatile("red.release.gpu.global.add.u32 [%0], %1;\n" ::"l"(pass_count(p, pass, c, h)), "r"(p.count_weight) : "memory");
}
// Whether both passes have counted chunk c of head h out (V-slices: replay_slices, bwd_slices).
__device__ __forceinline__ bool passes_counted(const DeltaParams& p, int c, int h) {
  return load_acquire(pass_count(p, kReplayPass, c, h)) >= unsigned(p.replay_slices) &&
         load_acquire(pass_count(p, kStateBwdPass, c, h)) >= unsigned(p.bwd_slices);
}
__device__ __forceinline__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
// Thread 0: spins until ready() (true), or until pass_wait_ns pass or another CTA gave up (false;
// the first to give up sets *stalled and error word `err`): progress that never arrives (a kernel
// that failed to launch, to count, or to run beside) becomes an error, not a device that never
// finishes. Where ready() already holds, one check and no clock read.
template <class Ready>
__device__ __forceinline__ bool spin_until(const DeltaParams& p, Ready&& ready, unsigned* stalled, int err) {
  if (ready()) return true;
  const unsigned long long t0 = global_ns();
  for (unsigned ns = 32; !ready(); ns = ns < 1024 ? 2 * ns : ns) {
    if (*reinterpret_cast<volatile unsigned*>(stalled)) return false;
    if (global_ns() - t0 > p.pass_wait_ns) {
      atomicExch(stalled, 1u);
      if (p.error_flag) p.error_flag[err] = 1;
      return false;
    }
    __nanosleep(ns);
  }
  return true;
}
// grad_chunk's wait for both passes' counts of chunk c of head h (kErrPassStall).
__device__ __forceinline__ bool wait_passes_counted(const DeltaParams& p, int c, int h) {
  return spin_until(p, [&] { return passes_counted(p, c, h); }, p.pass_stalled, kErrPassStall);
}

// The forward beside wy_prep (DeltaParams::prep_done). wy_prep's CTA: after its last stores (the
// block barrier orders every thread's before thread 0's release), flags its (chunk, head) out; the
// last CTA to finish holds the grid until the pass's grid is complete (the kernels after the
// forward wait for wy_prep's grid only).
// Chunk c's (head h's) β of the rows in p.row_betas.
__device__ __forceinline__ float* row_betas_of(const DeltaParams& p, int c, int h) {
  return p.row_betas + (int64_t(c) * p.H + h) * kChunk;
}
// wy_prep's: β of the chunk's rows (betas, [C] in shared memory, 0 past its end) where p.row_betas
// is set, one a thread below C.
__device__ __forceinline__ void store_row_betas(const DeltaParams& p, const float* betas, int c, int h) {
  if (p.row_betas && threadIdx.x < kChunk) row_betas_of(p, c, h)[threadIdx.x] = betas[threadIdx.x];
}
__device__ __forceinline__ void prep_count_out(const DeltaParams& p, int c, int h) {
  if (!p.prep_done) return;
  __syncthreads();
  if (threadIdx.x == 0) {
    if (p.beside_clock) atomicMax(p.beside_clock + kPrepEnd, global_ns());
    count_release(p.prep_done + int64_t(c) * p.H + h);
    if (atomicAdd(p.prep_done + int64_t(p.num_chunks) * p.H + kPrepFinished, 1u) == unsigned(p.num_chunks) * unsigned(p.H) - 1)
      pdl_wait_prerequisite();
  }
}
__device__ __forceinline__ unsigned load_relaxed(const unsigned* at) {
  unsigned v;
  asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];\n" : "=r"(v) : "l"(at) : "memory");
  return v;
}
__device__ __forceinline__ void fence_acquire_gpu() { asm volatile("fence.acquire.gpu;\n" ::: "memory"); }
// The pass's wait for wy_prep's flag of chunk c of head h (kErrPrepStall; a flag that never comes:
// wy_prep not started beside the pass, as where a tool runs grids one at a time).
__device__ __forceinline__ bool wait_prep_flag(const DeltaParams& p, int c, int h) {
  const unsigned* const flag = p.prep_done + int64_t(c) * p.H + h;
  auto wait = [&] {
    return spin_until(p, [&] { return load_acquire(flag) != 0; }, p.prep_done + int64_t(p.num_chunks) * p.H + kPrepStalled,
                      kErrPrepStall);
  };
  if (!p.beside_clock) return wait();
  const unsigned long long t0 = global_ns();
  const bool ok = wait();
  atomicAdd(p.beside_clock + kPassWaits, global_ns() - t0);
  return ok;
}
// The pass beside wy_prep, thread 0 (preplead, REWY_BESIDE_CLOCK): a step done (at each step's
// end), its CTA's start, and its end with its steps short of prep_max_count (a shorter sequence's
// CTA must not hold wy_prep's lead back).
__device__ __forceinline__ void prep_lead_step(const DeltaParams& p, unsigned steps = 1) {
  if (p.prep_lead && steps)
    asm volatile("red.relaxed.gpu.global.add.u32 [%0], %1;\n" ::"l"(p.prep_done + int64_t(p.num_chunks) * p.H + kPassSteps),
                 "r"(steps) : "memory");
}
__device__ __forceinline__ unsigned long long beside_pass_start(const DeltaParams& p) {
  if (!p.beside_clock) return 0;
  const unsigned long long t = global_ns();
  atomicMin(p.beside_clock + kPassStart, t);
  return t;
}
__device__ __forceinline__ void beside_pass_end(const DeltaParams& p, unsigned long long t0, int count) {
  prep_lead_step(p, unsigned(max(0, p.prep_max_count - count)));
  if (!p.beside_clock) return;
  const unsigned long long t = global_ns();
  atomicMax(p.beside_clock + kPassEnd, t);
  atomicAdd(p.beside_clock + kPassSpans, t - t0);
}
// wy_prep's CTA beside the pass, every thread, before its loads: for the chunk at position pos of
// its sequence, preplead's wait (thread 0, then a block barrier); its start for REWY_BESIDE_CLOCK.
__device__ __forceinline__ void prep_lead_wait(const DeltaParams& p, int pos) {
  if (!p.prep_lead && !p.beside_clock) return;
  if (threadIdx.x == 0) {
    const unsigned long long t0 = global_ns();
    if (p.beside_clock) atomicMin(p.beside_clock + kPrepStart, t0);
    const unsigned need = unsigned(max(0, pos - p.prep_lead)) * unsigned(p.prep_pass_ctas);
    const unsigned* const steps = p.prep_done + int64_t(p.num_chunks) * p.H + kPassSteps;
    if (p.prep_lead && need > 0 && load_relaxed(steps) < need) {
      bool capped = false;
      for (unsigned ns = 64; load_relaxed(steps) < need; ns = ns < 1024 ? 2 * ns : ns) {
        if (global_ns() - t0 > kPrepLeadCapNs) {
          capped = true;
          break;
        }
        __nanosleep(ns);
      }
      if (p.beside_clock) {
        atomicAdd(p.beside_clock + kPrepWaits, global_ns() - t0);
        if (capped) atomicAdd(p.beside_clock + kPrepCapped, 1ull);
      }
    }
  }
  if (p.prep_lead) __syncthreads();
}

// Where a chunk-parallel kernel's time goes: thread 0 of every CTA adds the SM cycles since the
// previous mark to sums[i]. Marks sit after block barriers, so a phase's cycles are the CTA's wall
// time in it. The last mark's time lives in shared memory and the sums pointer is re-read from the
// kernel parameters, so the timing holds no registers across the kernel (grad_chunk has none to
// spare); with sums null a mark is one predicated branch.
constexpr size_t kStaticSmem = 16;  // what ptxas reports beside the dynamic layouts: the phase clock's word
__device__ __forceinline__ long long& phase_clock_last() {
  __shared__ long long last;
  return last;
}
__device__ __forceinline__ void phase_start(unsigned long long* sums) {
  if (sums && threadIdx.x == 0) phase_clock_last() = clock64();
}
__device__ __forceinline__ void phase_mark(unsigned long long* sums, int i) {
  if (sums && threadIdx.x == 0) {
    const long long t = clock64();
    atomicAdd(sums + i, static_cast<unsigned long long>(t - phase_clock_last()));
    phase_clock_last() = t;
  }
}

__device__ __forceinline__ float bf2f(bf16_t x) { return __bfloat162float(x); }
__device__ __forceinline__ bf16_t f2bf(float x) { return __float2bfloat16_rn(x); }
// e^x as one multiply and one ex2.approx.ftz: __expf less the fix-ups that keep results below
// 2^-126 as denormals (here they become 0; every such factor scales a term that decayed past any
// bf16 sum's resolution). Three instructions fewer per exponential.
__device__ __forceinline__ float exp_ftz(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x * 1.4426950408889634f));
  return y;
}
// Two adjacent bf16 (4-byte aligned) as floats.
__device__ __forceinline__ float2 bf2f2(const bf16_t* x) {
  return __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(x));
}

constexpr size_t align16(size_t n) { return (n + 15) / 16 * 16; }
constexpr size_t cmax(size_t a, size_t b) { return a > b ? a : b; }

// x[j] of quad thread s becomes x[s] of quad thread j (a 4 × 4 transpose over the four threads
// that share an accumulator row): two rounds of two shuffles, at distance 2 and then 1.
__device__ __forceinline__ void quad_transpose4(uint32_t (&x)[4]) {
  const int lane = threadIdx.x & 31;
  const bool hi = lane & 2, odd = lane & 1;
  uint32_t r0 = __shfl_xor_sync(0xffffffffu, hi ? x[0] : x[2], 2);
  uint32_t r1 = __shfl_xor_sync(0xffffffffu, hi ? x[1] : x[3], 2);
  if (hi) x[0] = r0, x[1] = r1;
  else x[2] = r0, x[3] = r1;
  r0 = __shfl_xor_sync(0xffffffffu, odd ? x[0] : x[1], 1);
  r1 = __shfl_xor_sync(0xffffffffu, odd ? x[2] : x[3], 1);
  if (odd) x[0] = r0, x[2] = r1;
  else x[1] = r0, x[3] = r1;
}

// 16 bytes to global memory (dst 16-byte aligned) as one st.global.v4. Through a uint4 pointer the
// compiler, unable to prove the alignment, split some of these stores into four 4-byte ones:
// wy_prep_split's Q̂ and K̄ stores (4x the L2 sectors in ncu) and the first of every four of
// frag_store_global's (H200, 2026-12-03, docs/measurements/2026-12-03-s35/).
__device__ __forceinline__ void st_global_v4(void* dst, uint4 v) {
  asm volatile("st.global.v4.b32 [%0], {%1, %2, %3, %4};" ::"l"(dst), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w) : "memory");
}

// Stores rows r < valid of a warp's fragment to global dst[r * row_stride + c] as bf16, times alpha.
// With NT a multiple of 4 the quad that holds a row swaps its pieces of four adjacent n8 tiles
// (quad_transpose4), so that each thread stores one tile's 8 columns as 16 bytes: a quarter of
// the store instructions and memory requests of the 4-byte column pairs (state_fwd's replay at
// shape 0: 198 -> 129 µs, state_bwd 10-15% faster; H200, 2026-11-30). Needs dst, row_stride and
// n0 at multiples of 8 elements.
template <int MT, int NT>
__device__ __forceinline__ void frag_store_global(const float (&acc)[MT][NT][4], bf16_t* dst, int64_t row_stride, int m0,
                                                  int n0, int valid, float alpha = 1.f) {
  if constexpr (NT % 4 != 0) {
    frag_store_rows(acc, dst, row_stride, m0, n0, valid, alpha);
  } else {
    const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
#pragma unroll
    for (int i = 0; i < MT; ++i)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int r = m0 + 16 * i + g + 8 * h;
        bf16_t* const row = dst + r * row_stride + n0 + 8 * t;
#pragma unroll
        for (int jb = 0; jb < NT; jb += 4) {
          uint32_t x[4];
#pragma unroll
          for (int s = 0; s < 4; ++s) x[s] = pack_bf16x2(alpha * acc[i][jb + s][2 * h], alpha * acc[i][jb + s][2 * h + 1]);
          quad_transpose4(x);  // x: tile jb + t's columns 8 (jb + t) + 0..7, in order
          if (r < valid) st_global_v4(row + 8 * jb, make_uint4(x[0], x[1], x[2], x[3]));
        }
      }
  }
}

// Asynchronous global->shared copies (cp.async, 16 bytes; src_bytes 0 writes zeros).
__device__ __forceinline__ void cp_async16(void* smem, const void* gmem, bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr(smem)), "l"(gmem),
               "r"(valid ? 16 : 0));
}
// 4-byte cp.async (strided scalars); invalid sources write zeros.
__device__ __forceinline__ void cp_async4(void* smem, const void* gmem, bool valid) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(smem_addr(smem)), "l"(gmem), "r"(valid ? 4 : 0));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N));
}

// Copies a tile of ROWS rows of ROW_BYTES bytes (a multiple of 16) through cp.async by a block of
// NT threads; rows >= valid are zero-filled. The caller commits and waits (tiles_landed, or a
// pipeline's wait_group). STEP: the source advances by one add a row (below); false keeps the
// per-row address, for grad_chunk (chunk_bwd.cuh's kStepRows says why).
template <int ROWS, int ROW_BYTES, int NT = kThreads, bool STEP = true>
__device__ __forceinline__ void async_tile(void* dst, int ldd_bytes, const void* src, int64_t row_stride_bytes, int valid) {
  constexpr int kVec = ROW_BYTES / 16;
  if constexpr (NT % kVec == 0 && ROWS * kVec % NT == 0) {
    // A thread keeps its column and steps NT / kVec rows: addresses advance by constants. (The
    // source advanced by one add a row: with g + k·kStep·stride under the row's test the compiler
    // branched around a 64-bit multiply per row.)
    constexpr int kStep = NT / kVec;
    const int r0 = threadIdx.x / kVec, c = (threadIdx.x % kVec) * 16;
    const char* g = static_cast<const char*>(src) + r0 * row_stride_bytes + c;
    const int64_t step = kStep * row_stride_bytes;
    char* d = static_cast<char*>(dst) + r0 * ldd_bytes + c;
#pragma unroll
    for (int k = 0; k < ROWS / kStep; ++k) {
      const int r = r0 + k * kStep;
      if constexpr (STEP) {
        const bool ok = r < valid;
        cp_async16(d + k * kStep * ldd_bytes, ok ? g : src, ok);
        g += step;
      } else {
        cp_async16(d + k * kStep * ldd_bytes, r < valid ? g + k * kStep * row_stride_bytes : src, r < valid);
      }
    }
  } else {
    for (int idx = threadIdx.x; idx < ROWS * kVec; idx += NT) {
      const int r = idx / kVec, c = (idx % kVec) * 16;
      const char* g = static_cast<const char*>(src) + (r < valid ? r * row_stride_bytes : 0) + c;
      cp_async16(static_cast<char*>(dst) + r * ldd_bytes + c, g, r < valid);
    }
  }
}

// dst[r][c] (leading dim ldd) = src[r * row_stride + c] for r < valid, 0 for valid <= r < ROWS: all
// tiles issued before one tiles_landed() travel together (one memory latency, not one per row).
template <int ROWS, int COLS, int NT = kThreads, bool STEP = true>
__device__ __forceinline__ void load_tile(bf16_t* dst, int ldd, const bf16_t* src, int64_t row_stride, int valid) {
  async_tile<ROWS, COLS * 2, NT, STEP>(dst, ldd * 2, src, row_stride * 2, valid);
}

// Completes this thread's outstanding tile copies, then synchronises the block. ASYNC: the copies
// made visible to the async proxy first (warpgroup products read them).
template <bool ASYNC = false>
__device__ __forceinline__ void tiles_landed() {
  cp_async_commit();
  cp_async_wait<0>();
  if constexpr (ASYNC) fence_proxy_async_smem();
  __syncthreads();
}

// Row stride (floats) of the fp32 [C][K] tiles of channel gates (G and the backward's ∂G staging):
// they are read in the mma fragment layout (8 rows × 4 column pairs a warp), where a stride of K
// words puts the 8 rows in one bank (8-way conflicts); K + 4 leaves 2-way, the least for 4-byte
// loads of that pattern.
template <int K>
inline constexpr int kGateLd = K + 4;

// In-chunk cumsum of a scalar log-decay by one warp, two rows a lane: lane l holds g at rows 2l and
// 2l + 1 and gets G there (x, y). Every kernel that needs G of a scalar gate scans with this, so
// the forward's and the backward's G agree bit for bit.
__device__ __forceinline__ float2 warp_pair_cumsum(float g0, float g1) {
  const int lane = threadIdx.x & 31;
  const float pair = g0 + g1;
  float incl = pair;
#pragma unroll
  for (int off = 1; off < 32; off <<= 1) {
    const float o = __shfl_up_sync(0xffffffffu, incl, off);
    if (lane >= off) incl += o;
  }
  return make_float2((incl - pair) + g0, incl);
}

// In-chunk inclusive cumsum of the log-decay into shared memory (rows >= len continue flat, as if
// g were 0 there), in two calls by the whole block of NT threads. Vector gates: Gs[i * kGateLd<K> + d];
// scalar: Gs[i]. gate_issue starts the copy of the chunk's gates (a vector gate's [C][K] tile; a
// scalar gate's C values, two a lane of warp 0) as a cp.async group of its own; issued ahead of
// the kernel's other tiles, it lands first, and gate_scan (after those tiles are issued and
// committed) waits for it alone and scans while they travel (scanning after every tile had landed
// put the scan behind the kernel's whole load; a scalar gate read with plain loads after the tiles
// were issued arrived behind them). gate_scan flags positive log-decays; the caller synchronises
// the block before reading Gs (tiles_landed). KS, c0: a vector gate's channels c0 .. c0 + KS − 1
// alone, as a [C][kGateLd<KS>] tile (wy_prep_split_kernel's slices).
template <int VAR, int K, int NT = kThreads, int KS = K, bool STEP = true>
__device__ __forceinline__ void gate_issue(float* Gs, const DeltaParams& p, int tok0, int len, int h, int c0 = 0) {
  if constexpr (VT<VAR>::vec_gate) {
    async_tile<kChunk, KS * 4, NT, STEP>(Gs, kGateLd<KS> * 4, p.g + (int64_t(tok0) * p.H + h) * K + c0, int64_t(p.H) * K * 4, len);
    cp_async_commit();
  } else if constexpr (VT<VAR>::scalar_gate) {
    static_assert(kChunk == 64, "two rows a lane");
    if (threadIdx.x < 32)
#pragma unroll
      for (int r = 2 * int(threadIdx.x); r < 2 * int(threadIdx.x) + 2; ++r)
        cp_async4(Gs + r, p.g + (int64_t(tok0) + (r < len ? r : 0)) * p.H + h, r < len);  // 0 past len
    cp_async_commit();
  }
}
// A vector gate's scan of TILES [C][kGateLd<K>] tiles at once (Gs, and Gs2 for the second: wy_prep_split's
// early gates), NT >= 2 K TILES threads. Two threads per channel scan 32 rows each, the second
// half adds the first half's total: the same sums in every kernel and at every block size, so the
// forward's and the backward's G agree bit for bit.
template <int K, int NT, int TILES = 1>
__device__ __forceinline__ void scan_vec_gate_tiles(float* Gs, float* Gs2, const DeltaParams& p) {
  static_assert(NT >= 2 * K * TILES, "two threads a channel of every tile");
  constexpr int kHalf = kChunk / 2, GL = kGateLd<K>;
  const int d = threadIdx.x % K, part = threadIdx.x / K;  // parts past 2 TILES (NT > 2K TILES) idle
  float* const G = TILES == 2 && part >= 2 ? Gs2 : Gs;
  const int half = TILES == 1 ? part : part % 2;  // (one tile: the code gate_scan always had)
  if (part < 2 * TILES) {
    float s = 0.f;
    bool positive = false;
    for (int i = half * kHalf; i < (half + 1) * kHalf; ++i) {
      const float gi = G[i * GL + d];
      positive |= gi > 0.f;
      s += gi;
      G[i * GL + d] = s;
    }
    if (positive && p.error_flag) p.error_flag[kErrPositiveGate] = 1;
  }
  __syncthreads();
  if (TILES == 1 ? part == 1 : part < 2 * TILES && half == 1) {
    const float first = G[(kHalf - 1) * GL + d];
    for (int i = kHalf; i < kChunk; ++i) G[i * GL + d] += first;
  }
}
template <int VAR, int K, int NT = kThreads, int PENDING = 1>
__device__ __forceinline__ void gate_scan(float* Gs, const DeltaParams& p) {
  if constexpr (VT<VAR>::vec_gate) {
    cp_async_wait<PENDING>();  // PENDING: the cp.async groups the caller committed after gate_issue's
    __syncthreads();
    scan_vec_gate_tiles<K, NT>(Gs, Gs, p);
  } else if constexpr (VT<VAR>::scalar_gate) {
    if (threadIdx.x < 32) {
      const int lane = threadIdx.x;
      cp_async_wait<PENDING>();  // this lane's own two copies: no barrier needed
      const float g0 = Gs[2 * lane], g1 = Gs[2 * lane + 1];
      if ((g0 > 0.f || g1 > 0.f) && p.error_flag) p.error_flag[kErrPositiveGate] = 1;
      const float2 G = warp_pair_cumsum(g0, g1);
      Gs[2 * lane] = G.x;
      Gs[2 * lane + 1] = G.y;
    }
  }
}

// G at row i, channel d (1 for ungated variants is never asked for).
template <int VAR, int K>
__device__ __forceinline__ float gate_at(const float* Gs, int i, int d) {
  if constexpr (VT<VAR>::vec_gate) return Gs[i * kGateLd<K> + d];
  else return Gs[i];
}

// Reference row of 16-row block I for channel-wise gates (§6): the block's middle row, so every
// scaled operand is within e^{±8λ} for per-step log-decays >= -λ.
__device__ __forceinline__ int block_ref_row(int I) { return kBlock * I + kBlock / 2; }
__device__ __forceinline__ int packed_row_offset(int I) { return 8 * I * (I + 1); }  // Σ_{J<I} 16 (J + 1)

// Flags chunks whose 16-row block spans would push a scaled operand past e^{80} (§6 range rule).
template <int K, int NT = kThreads>
__device__ __forceinline__ void check_gate_span(const float* Gs, const DeltaParams& p) {
  for (int d = threadIdx.x; d < K; d += NT) {
    bool bad = false;
#pragma unroll
    for (int I = 0; I < kChunk / kBlock; ++I) {
      constexpr int GL = kGateLd<K>;
      const float first = Gs[(kBlock * I) * GL + d], ref = Gs[block_ref_row(I) * GL + d],
                  last = Gs[(kBlock * I + kBlock - 1) * GL + d];
      bad |= (first - ref > kMaxExponent) || (ref - last > kMaxExponent);
    }
    if (bad && p.error_flag) p.error_flag[kErrGateSpan] = 1;
  }
}

// bf16 x, or (LO) the bf16 rounding of what bf16 x leaves out: hi + lo carry about 16 bits of x.
template <bool LO>
__device__ __forceinline__ bf16_t bf16_term(float x) {
  if constexpr (LO) return f2bf(x - bf2f(f2bf(x)));
  else return f2bf(x);
}

// Eight bf16 values packed in 16 bytes, as floats.
__device__ __forceinline__ void unpack8(float (&x)[8], const uint4& u) {
  const __nv_bfloat162* h = reinterpret_cast<const __nv_bfloat162*>(&u);
#pragma unroll
  for (int e = 0; e < 4; ++e) {
    const float2 f = __bfloat1622float2(h[e]);
    x[2 * e] = f.x;
    x[2 * e + 1] = f.y;
  }
}
// Eight consecutive channels (16-byte aligned) of a bf16 or fp32 shared tile, in registers.
__device__ __forceinline__ void load8(float (&x)[8], const bf16_t* src) { unpack8(x, *reinterpret_cast<const uint4*>(src)); }
// load8 from shared memory as one 16-byte ld.shared.v4 whatever the compiler can prove of src's
// alignment: where it cannot (a swizzled tile's offsets), load8's uint4 may be split into four
// 4-byte loads, and a warp reading consecutive rows of a 128-byte-swizzled tile then meets every
// bank four times (grad_chunk's state sum: 6.3M of GDN's 13.6M shared wavefronts were excess,
// ncu, H200, 2026-12-04, docs/measurements/2026-12-04-s44/call4/).
__device__ __forceinline__ void load8_shared(float (&x)[8], const bf16_t* src) {
  uint4 u;
  asm volatile("ld.shared.v4.b32 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(u.x), "=r"(u.y), "=r"(u.z), "=r"(u.w)
               : "r"(smem_addr(src))
               : "memory");
  unpack8(x, u);
}
__device__ __forceinline__ void load8(float (&x)[8], const float* src) {
  const float4 a = *reinterpret_cast<const float4*>(src), b = *reinterpret_cast<const float4*>(src + 4);
  x[0] = a.x, x[1] = a.y, x[2] = a.z, x[3] = a.w, x[4] = b.x, x[5] = b.y, x[6] = b.z, x[7] = b.w;
}
// G at row i, channels d0..d0+7 (0 for ungated variants), as gate_at.
template <int VAR, int K>
__device__ __forceinline__ void gate_at8(float (&G)[8], const float* Gs, int i, int d0) {
  if constexpr (VT<VAR>::vec_gate) {
    load8(G, Gs + i * kGateLd<K> + d0);
  } else {
#pragma unroll
    for (int e = 0; e < 8; ++e) G[e] = VT<VAR>::gated ? Gs[i] : 0.f;
  }
}

// bf16 of x (LO: the bf16 rounding of what bf16 x leaves out, as bf16_term) as one 16-byte store.
template <bool LO = false>
__device__ __forceinline__ void store8(bf16_t* dst, const float (&x)[8]) {
  uint4 u;
  __nv_bfloat162* h = reinterpret_cast<__nv_bfloat162*>(&u);
#pragma unroll
  for (int e = 0; e < 4; ++e) h[e] = __halves2bfloat162(bf16_term<LO>(x[2 * e]), bf16_term<LO>(x[2 * e + 1]));
  *reinterpret_cast<uint4*>(dst) = u;
}
// store8 into global memory (dst 16-byte aligned): one st.global.v4 (st_global_v4).
template <bool LO = false>
__device__ __forceinline__ void store8_global(bf16_t* dst, const float (&x)[8]) {
  uint32_t w[4];
#pragma unroll
  for (int e = 0; e < 4; ++e) {
    const __nv_bfloat162 h = __halves2bfloat162(bf16_term<LO>(x[2 * e]), bf16_term<LO>(x[2 * e + 1]));
    w[e] = uint32_t(__bfloat16_as_ushort(h.x)) | (uint32_t(__bfloat16_as_ushort(h.y)) << 16);
  }
  st_global_v4(dst, make_uint4(w[0], w[1], w[2], w[3]));
}

// for_each_row_octet over the threads tid = 0 .. count − 1 of a part of the block (the caller's
// numbering).
template <int ROWS, int K, class F>
__device__ __forceinline__ void for_each_row_octet_of(int tid, int count, F&& f) {
  constexpr int kGroups = K / 8, kTotal = ROWS * kGroups;
  static_assert(K % 8 == 0, "row octets");
#pragma unroll 1
  for (int idx = tid; idx < kTotal; idx += count) f(idx / kGroups, (idx % kGroups) * 8);
}

// Calls f(row, d0) once for each row < ROWS and each group of 8 channels d0 of K, spread over
// the block of NT threads. Elementwise operand builds go through this: 8 channels per call are 8
// independent loads, exponentials and one 16-byte store in flight per thread, where one channel per
// step left each build latency-bound at 8 warps per SM (KDA grad_chunk's contractions: 45% of its
// cycles).
template <int ROWS, int K, int NT = kThreads, class F>
__device__ __forceinline__ void for_each_row_octet(F&& f) {
  constexpr int kGroups = K / 8, kTotal = ROWS * kGroups;
  static_assert(K % 8 == 0, "row octets");
  if constexpr (kTotal % NT == 0) {
#pragma unroll 1
    for (int it = 0; it < kTotal / NT; ++it) {
      const int idx = it * NT + threadIdx.x;
      f(idx / kGroups, (idx % kGroups) * 8);
    }
  } else {  // (16 warps over the 160 packed rows of K = 64)
    for_each_row_octet_of<ROWS, K>(threadIdx.x, NT, f);
  }
}

// dst[r * row_stride + c] = src[r][c] (leading dim lds) for rows r < valid, c < COLS, in 16-byte
// pieces by a block of NT threads (rows as for_each_row_octet spreads them): a staged bf16 tile
// out to global memory, the reverse of load_tile.
template <int ROWS, int COLS, int NT = kThreads>
__device__ __forceinline__ void store_tile_rows(bf16_t* dst, int64_t row_stride, const bf16_t* src, int lds, int valid) {
  for_each_row_octet<ROWS, COLS, NT>([&](int r, int c0) {
    if (r < valid) *reinterpret_cast<uint4*>(dst + int64_t(r) * row_stride + c0) = *reinterpret_cast<const uint4*>(src + r * lds + c0);
  });
}

// Channels d0..d0+7 of row i of a coefficient that is per element for GDN2 (its b or w tile,
// leading dimension LD) and per row for the β-variants (β_i).
template <int VAR, int LD>
__device__ __forceinline__ void load_row_coef8(float (&co)[8], const float* betas, const bf16_t* tile, int i, int d0) {
  if constexpr (VAR == kGDN2) {
    load8(co, tile + i * LD + d0);
  } else {
#pragma unroll
    for (int e = 0; e < 8; ++e) co[e] = betas[i];
  }
}

// Y_U = Ω ⊙ V in place over a v tile [C][V + 8] (Ω: GDN2's w tile ws, else β per row): row i,
// channels e0..e0+7.
template <int VAR, int V>
__device__ __forceinline__ void omega_scale_octet(bf16_t* YU, const bf16_t* ws, const float* betas, int i, int e0) {
  constexpr int VP = V + 8;
  float om[8], x[8];
  load_row_coef8<VAR, VP>(om, betas, ws, i, e0);
  load8(x, YU + i * VP + e0);
#pragma unroll
  for (int e = 0; e < 8; ++e) x[e] = om[e] * x[e];
  store8(YU + i * VP + e0, x);
}

// The whole tile, by the block of NT threads.
template <int VAR, int V, int NT = kThreads>
__device__ __forceinline__ void omega_scale_rows(bf16_t* YU, const bf16_t* ws, const float* betas) {
  for_each_row_octet<kChunk, V, NT>([&](int i, int e0) { omega_scale_octet<VAR, V>(YU, ws, betas, i, e0); });
}

// Column operands of the gated C×C products, packed per row block I (rows j < 16 (I + 1), block
// I's at packed_row_offset(I)):
//   KC_I[j][d] = k_jd · exp(G_ref(I) d − G_jd)   (<= 1 for j before block I, <= e^{7λ} inside it)
// Row j's rows of them for the blocks I >= I0, channels d0..d0+7, from row j's k and G already in
// registers (x: scratch); LO: the second bf16 terms into KC_lo (a template flag: runtime null
// checks in these builders have cost grad_chunk registers).
template <int K, bool LO>
__device__ __forceinline__ void packed_col_rows8(int j, int I0, int d0, const float (&g)[8], const float (&k)[8],
                                                 float (&x)[8], const float* Gs, bf16_t* KC, bf16_t* KC_lo) {
  constexpr int KP = K + 8, GL = kGateLd<K>;
#pragma unroll
  for (int I = 0; I < kChunk / kBlock; ++I) {
    if (I < I0) continue;  // (uniform across a warp: its octets lie in rows of one block)
    float gr[8];
    load8(gr, Gs + block_ref_row(I) * GL + d0);
#pragma unroll
    for (int e = 0; e < 8; ++e) x[e] = k[e] * exp_ftz(gr[e] - g[e]);
    store8(KC + (packed_row_offset(I) + j) * KP + d0, x);
    if constexpr (LO) store8<true>(KC_lo + (packed_row_offset(I) + j) * KP + d0, x);
  }
}

// wy_prep's operands of P and A for row i of block J = i / 16, channels d0..d0+7, in one pass over
// the row's q, k and G: with e = e^{G_i − G_ref(J)}, q ⊙ e into q_out and its second bf16 term into
// q_lo, b ⊙ k ⊙ e into bk_out (destinations point at the row's channel d0), and row i of the packed
// KC_I of every block I >= J into KC (packed_col_rows8): 16 KB of shared-memory traffic a channel
// octet instead of 26 KB for separate builders. The q term goes first, so one scale tile is live
// at a time.
// (build_scaled_rows8_of: from the row's q, k and coefficient already in registers, for a caller
// that forms more from them.)
template <int K>
__device__ __forceinline__ void build_scaled_rows8_of(int i, int J, int d0, const float* Gs, const float (&q)[8],
                                                      const float (&k)[8], const float (&co)[8], bf16_t* q_out,
                                                      bf16_t* q_lo, bf16_t* bk_out, bf16_t* KC) {
  constexpr int GL = kGateLd<K>;
  float g[8], ex[8], x[8];
  {
    float gr[8];
    load8(g, Gs + i * GL + d0);
    load8(gr, Gs + block_ref_row(J) * GL + d0);
#pragma unroll
    for (int e = 0; e < 8; ++e) ex[e] = exp_ftz(g[e] - gr[e]);
  }
#pragma unroll
  for (int e = 0; e < 8; ++e) x[e] = q[e] * ex[e];
  store8(q_out, x);
  store8<true>(q_lo, x);
#pragma unroll
  for (int e = 0; e < 8; ++e) x[e] = co[e] * k[e] * ex[e];
  store8(bk_out, x);
  packed_col_rows8<K, false>(i, J, d0, g, k, x, Gs, KC, nullptr);
}
template <int VAR, int K>
__device__ __forceinline__ void build_scaled_rows8(int i, int J, int d0, const float* Gs, const bf16_t* qs, const bf16_t* ks,
                                                   const float* betas, const bf16_t* bs, bf16_t* q_out, bf16_t* q_lo,
                                                   bf16_t* bk_out, bf16_t* KC) {
  constexpr int KP = K + 8;
  float q[8], k[8], co[8];
  load8(q, qs + i * KP + d0);
  load8(k, ks + i * KP + d0);
  load_row_coef8<VAR, KP>(co, betas, bs, i, d0);
  build_scaled_rows8_of<K>(i, J, d0, Gs, q, k, co, q_out, q_lo, bk_out, KC);
}

// Packed per-block operands have 16 (I + 1) rows for block I (kPackedRows in all): the column
// form KC_I (rows j <= block I's last) from packed_row_offset(I), the row form RC_J (rows i >= 16 J,
// for D^c) from packed_rc_offset(J), row i at packed_rc_offset(J) + i − 16 J.
__device__ __forceinline__ int packed_rc_offset(int J) { return 64 * J - 8 * J * (J - 1); }

// One-pass packed builds (wy_prep, grad_chunk): a row octet of the chunk writes every packed row
// it gives, reading its k, q, G once. A row of block J gives 4 − J column rows and J + 1 row-form
// rows; slot r < C / 2 takes row r and slot r >= C / 2 row 3C/2 − 1 − r, so that a thread taking
// slots r and r + C / 2 meets blocks {0, 3} or {1, 2} (as even as it gets).
__device__ __forceinline__ int mirrored_row(int r) { return r < kChunk / 2 ? r : kChunk + kChunk / 2 - 1 - r; }

// Row i's rows of the row-form operands RC_J for the blocks J <= block(i) (layout:
// packed_rc_offset), channels d0..d0+7: q ⊙ e into RCq and (b ⊙ k) ⊙ e into RCbk, e = e^{G_i −
// G_ref(J)} (the products' rounding as build_scaled_rows8's).
template <int VAR, int K>
__device__ __forceinline__ void packed_rc_rows8(int i, int d0, const float* Gs, const bf16_t* qs, const bf16_t* ks,
                                                const float* betas, const bf16_t* bs, bf16_t* RCq, bf16_t* RCbk) {
  constexpr int KP = K + 8, GL = kGateLd<K>;
  float g[8], q[8], bk[8];
  load8(g, Gs + i * GL + d0);
  load8(q, qs + i * KP + d0);
  {
    float co[8];
    load_row_coef8<VAR, KP>(co, betas, bs, i, d0);
    load8(bk, ks + i * KP + d0);
#pragma unroll
    for (int e = 0; e < 8; ++e) bk[e] = co[e] * bk[e];
  }
#pragma unroll
  for (int J = 0; J < kChunk / kBlock; ++J) {
    if (J > i / kBlock) break;
    float gr[8], ex[8], x[8];
    load8(gr, Gs + block_ref_row(J) * GL + d0);
#pragma unroll
    for (int e = 0; e < 8; ++e) ex[e] = exp_ftz(g[e] - gr[e]);
    const int row = packed_rc_offset(J) + i - kBlock * J;
#pragma unroll
    for (int e = 0; e < 8; ++e) x[e] = q[e] * ex[e];
    store8(RCq + row * KP + d0, x);
#pragma unroll
    for (int e = 0; e < 8; ++e) x[e] = bk[e] * ex[e];
    store8(RCbk + row * KP + d0, x);
  }
}

// Warp tiles of the chunk-parallel kernels: a block of NT threads is 4 row blocks of 16 × NT / 128
// column groups. Of a C-row, N-wide output, warp w owns rows [warp_m0(), +16) and columns
// [warp_n0<N, NT>(), +N / (NT / 128)): kWarpTiles<N, NT> n8 tiles (8 warps, N = C: 32 columns).
template <int N, int NT = kThreads>
inline constexpr int kWarpTiles = N / 8 / (NT / 128);
__device__ __forceinline__ int warp_m0() { return 16 * ((threadIdx.x >> 5) & 3); }
template <int N, int NT = kThreads>
__device__ __forceinline__ int warp_n0() { return 8 * kWarpTiles<N, NT> * (threadIdx.x >> 7); }

// Channel gates, P and A in one k-loop (wy_prep): accP = R·KC_I + R_lo·KC_I and accA = R_A·KC_I
// over this warp's tile, each KC_I fragment loaded once for the three products, the next k-step's
// fragments loaded before this one's products issue (as warp_mma's PREFETCH). Against three
// separate products: KDA's wy_prep 1.062x (99 -> 79 registers), GDN2's 1.038x (H200,
// 2026-12-01, docs/measurements/2026-12-01-s14/). Row operands [C][K + 8]; packed:
// packed_col_rows8's layout. ZERO = false adds to accP and accA (a channel slice at a time).
template <int K, int NT, bool ZERO = true>
__device__ __forceinline__ void packed_cc_products3(float (&accP)[1][kWarpTiles<kChunk, NT>][4],
                                                    float (&accA)[1][kWarpTiles<kChunk, NT>][4], const bf16_t* R,
                                                    const bf16_t* R_lo, const bf16_t* R_A, const bf16_t* packed) {
  constexpr int KP = K + 8, NC = kWarpTiles<kChunk, NT>, NP = NC / 2;
  static_assert(NC % 2 == 0, "column tiles in pairs");
  if constexpr (ZERO) {
    frag_zero(accP);
    frag_zero(accA);
  }
  const int m0 = warp_m0(), n0 = warp_n0<kChunk, NT>(), I = m0 / kBlock, n_limit = kBlock * (I + 1);
  if (n0 >= n_limit) return;  // (uniform across the warp)
  const bf16_t* KC = packed + packed_row_offset(I) * KP;
  struct Frags {
    uint32_t a[3][4], b[NP][4];
  };
  auto load = [&](Frags& f, int k0) {
    load_a_frag<Lay::RowMajor>(f.a[0], R, KP, m0, k0);
    load_a_frag<Lay::RowMajor>(f.a[1], R_lo, KP, m0, k0);
    load_a_frag<Lay::RowMajor>(f.a[2], R_A, KP, m0, k0);
#pragma unroll
    for (int j = 0; j < NP; ++j)
      if (n0 + 16 * j < n_limit) load_b_frag2<Lay::ColMajor>(f.b[j], KC, KP, k0, n0 + 16 * j);
  };
  auto products = [&](const Frags& f) {
#pragma unroll
    for (int j = 0; j < NP; ++j) {
      if (n0 + 16 * j >= n_limit) break;
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        mma_bf16_16816(accP[0][2 * j + h], f.a[0], f.b[j][2 * h], f.b[j][2 * h + 1]);
        mma_bf16_16816(accP[0][2 * j + h], f.a[1], f.b[j][2 * h], f.b[j][2 * h + 1]);
        mma_bf16_16816(accA[0][2 * j + h], f.a[2], f.b[j][2 * h], f.b[j][2 * h + 1]);
      }
    }
  };
  Frags f0, f1;
  load(f0, 0);
#pragma unroll 1
  for (int k0 = 0; k0 < K; k0 += 32) {  // K: a multiple of 32
    load(f1, k0 + 16);
    products(f0);
    if (k0 + 32 < K) load(f0, k0 + 32);
    products(f1);
  }
}

// Value of a gated C×C entry on its mask (i > j, or i >= j with the diagonal); 0 elsewhere.
// Scalar gates multiply by e^{G_i − G_j} <= 1 there; masked entries are selected away, never
// multiplied (they may hold inf for channel gates).
template <int VAR, int K>
__device__ __forceinline__ float gated_entry(float x, const float* Gs, int i, int j, bool keep) {
  if (!keep) return 0.f;
  if constexpr (VT<VAR>::scalar_gate) return x * exp_ftz(Gs[i] - Gs[j]);
  else return x;
}

}  // namespace rewy::delta::cuda_impl
