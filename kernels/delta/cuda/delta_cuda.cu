// Host orchestration of the CUDA delta-rule kernels: buffers, chunk tables, launches, policies.
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "engine/copy.h"
#include "engine/cuda/check_cuda.h"
#include "kernels/delta/cuda/chunk_table.h"
#include "kernels/delta/cuda/delta_cuda.h"
#include "kernels/delta/cuda/launch.h"
#include "kernels/delta/cuda/state_slices.h"
#include "kernels/delta/cuda/tma.cuh"
#include "kernels/delta/rw_from_ru.h"
#include "kernels/delta/segments.h"

namespace rewy::delta::cuda_impl {
namespace {

ChunkTable build_chunk_table(const Dims& dims, Device dev, const Stream& s) {
  std::vector<double> tok, len, first;
  std::vector<int64_t> step_fwd, step_bwd, step_paired;  // the pass step at which each chunk is out
  for (int64_t n = 0; n < dims.N; ++n) {
    first.push_back(double(tok.size()));
    const int64_t count = (dims.seq_start[n + 1] - dims.seq_start[n] + kChunk - 1) / kChunk;
    for (int64_t t = dims.seq_start[n], i = 0; t < dims.seq_start[n + 1]; t += kChunk, ++i) {
      tok.push_back(double(t));
      len.push_back(double(std::min<int64_t>(kChunk, dims.seq_start[n + 1] - t)));
      step_fwd.push_back(i);
      step_bwd.push_back(count - 1 - i);
      step_paired.push_back(std::max(i, count - 1 - i));
    }
  }
  first.push_back(double(tok.size()));
  auto items = [&](const std::vector<int64_t>& step) {
    std::vector<int64_t> order(tok.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = int64_t(i);
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return step[a] < step[b]; });
    std::vector<double> v;
    for (int64_t c : order) v.insert(v.end(), {double(c), tok[c], len[c], double(step_fwd[c])});  // (w: its position)
    return v;
  };
  ChunkTable ct;
  ct.num_chunks = int(tok.size());
  ct.num_seqs = int(dims.N);
  // An empty table still gets one element so that the tensors are valid device pointers.
  auto upload = [&](std::vector<double> v) {
    if (v.empty()) v.push_back(0);
    return Tensor::from_vector(v, {int64_t(v.size())}, DType::I32).to(dev, &s);
  };
  ct.chunk_tok = upload(tok);
  ct.chunk_len = upload(len);
  ct.seq_chunk = upload(first);
  ct.grad_serial = upload(items(step_bwd));
  ct.grad_paired = upload(items(step_paired));
  ct.prep_order = upload(items(step_fwd));
  return ct;
}

// A layout's device tables are small and reused by every call with that layout: build(), which
// uploads (and synchronises), runs once per (device, layout) and T; at most 64 layouts are kept.
template <class T, class Build>
T cached_per_layout(int device, const std::vector<int64_t>& layout, Build&& build) {
  static std::mutex mu;
  static std::map<std::pair<int, std::vector<int64_t>>, T> cache;
  std::lock_guard<std::mutex> g(mu);
  auto key = std::make_pair(device, layout);
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  if (cache.size() >= 64) cache.clear();
  T value = build();
  cache.emplace(std::move(key), value);
  return value;
}

}  // namespace

ChunkTable make_chunk_table(const Dims& dims, Device dev, const Stream& s) {
  return cached_per_layout<ChunkTable>(dev.index, dims.seq_start, [&] { return build_chunk_table(dims, dev, s); });
}

namespace {

// The device-side gate checks' error words (kErrWords ints), one array per device in mapped
// pinned host memory: kernels store into them, the host reads them without a copy or a sync.
struct ErrorWords {
  volatile int* host = nullptr;
  int* device = nullptr;  // the same memory as the kernels address it
};
const ErrorWords& error_words(int device) {
  static std::mutex mu;
  static std::map<int, ErrorWords> words;
  std::lock_guard<std::mutex> g(mu);
  ErrorWords& w = words[device];
  if (!w.host) {
    int* h = nullptr;
    CUDA_CHECK(cudaHostAlloc(reinterpret_cast<void**>(&h), kErrWords * sizeof(int), cudaHostAllocMapped | cudaHostAllocPortable));
    for (int i = 0; i < kErrWords; ++i) h[i] = 0;
    CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&w.device), h, 0));
    w.host = h;
  }
  return w;
}

bool env_is_one(const char* name) {
  const char* e = std::getenv(name);
  return e && std::string(e) == "1";
}
// REWY_TEST_STALL_PASSES=1 (GPU test): the overlapped backward's grad_chunk waits for a count that
// never comes, so its wait must end in kErrPassStall.
bool stall_passes_for_test() { return env_is_one("REWY_TEST_STALL_PASSES"); }
// REWY_TEST_STALL_PREP=1 (GPU test): the forward's state pass beside wy_prep waits for flags that
// never come, so its wait must end in kErrPrepStall.
bool stall_prep_for_test() { return env_is_one("REWY_TEST_STALL_PREP"); }
// wy_prep's lead beside the forward's pass (DeltaParams::prep_lead; 0: none): DeltaNet's 16 chunks.
// Its Recompute forward at shapes 2, 3, 5 (the beside forwards at 2 and 5) 1.036x against none
// (1.000 at shape 3); lead 8 0.83x (the pass waited for wy_prep: flag waits 141 us a CTA at (2,
// 8192, 16)), 4 far slower (wy_prep's CTAs waited out their cap), 32 as 16; KDA and GDN2 1.002x
// at 16 (H200, 2026-12-06, docs/measurements/2026-12-06-s62/call2/). At (1, 32768, 32) the pass's
// last CTA ended 1196 us after the first started, 83 us after the mean CTA; with the lead 1123 and
// 42: the pass's CTAs finish more evenly. A lead must exceed the pass's stages plus kFenceEvery
// (the chunks a pass CTA waits for ahead of its step). REWY_PREP_LEAD=n or
// REWY_EXPERIMENTS=preplead4 (8, 16, 32; :variant as every switch) sets one, noplead none.
int prep_lead(int variant) {
  if (const char* e = std::getenv("REWY_PREP_LEAD")) return std::max(0, std::atoi(e));
  for (const int lead : {4, 8, 16, 32})
    if (experiment(("preplead" + std::to_string(lead)).c_str(), variant)) return lead;
  return variant == kDeltaNet && !experiment("noplead", variant) ? 16 : 0;
}
// REWY_BESIDE_CLOCK=1: each forward beside wy_prep synchronises and prints where its time went
// (DeltaParams::beside_clock): the pass's and wy_prep's spans from the pass's first start, the
// pass CTAs' mean span and flag waits, wy_prep's lead waits, and the pass's step by its phases
// (SM cycles a CTA and step, as REWY_KERNEL_TIMING=2 gives them for the pass alone, there summed
// over a pair's V-slices; the register pass's "data" is its wait for the stage, 0 for the others,
// "wait" the rest of the first phase). A measurement aid; it costs a sync.
unsigned long long* beside_clock_begin(cudaStream_t s) {
  if (!env_is_one("REWY_BESIDE_CLOCK")) return nullptr;
  static unsigned long long* device = nullptr;  // (one buffer for the process: the clock syncs each forward)
  constexpr size_t kWords = kClockWords + kMaxPhases;
  if (!device) CUDA_CHECK(cudaMalloc(&device, kWords * sizeof(unsigned long long)));
  unsigned long long init[kWords] = {};
  init[kPassStart] = init[kPrepStart] = ~0ull;
  CUDA_CHECK(cudaMemcpyAsync(device, init, sizeof(init), cudaMemcpyHostToDevice, s));
  CUDA_CHECK(cudaStreamSynchronize(s));  // (init is on this stack)
  return device;
}
void beside_clock_report(const unsigned long long* clock, cudaStream_t s, int64_t pass_ctas, int64_t prep_ctas,
                         int lead, int max_count, int variant, const Dims& d) {
  unsigned long long c[kClockWords + kMaxPhases];
  CUDA_CHECK(cudaMemcpyAsync(c, clock, sizeof(c), cudaMemcpyDeviceToHost, s));
  CUDA_CHECK(cudaStreamSynchronize(s));
  if (c[kPassStart] == ~0ull) {  // (GDN's decay cut, its own path taken: the sequential pass left at once)
    std::fprintf(stderr, "beside clock %s (B=%lld T=%lld H=%lld): the pass beside wy_prep did not run\n",
                 variant_name(variant), (long long)d.B, (long long)d.T, (long long)d.H);
    return;
  }
  const double steps = double(pass_ctas) * std::max(1, max_count);
  auto phase = [&](int i) { return double(c[kClockWords + i]) / steps; };
  const double t0 = double(c[kPassStart]), us = 1e-3;
  std::fprintf(stderr,
               "beside clock %s (B=%lld T=%lld H=%lld, %lld pass CTAs, lead %d): pass ends %.1f us, wy_prep starts %.1f "
               "ends %.1f us; pass CTA mean span %.1f us, flag waits %.1f us; wy_prep lead waits %.2f us a CTA, "
               "%llu capped; a pass CTA's step, SM cycles: data %.0f | wait %.0f | H^T %.0f | E|QH %.0f | KE|PE,o %.0f\n",
               variant_name(variant), (long long)d.B, (long long)d.T, (long long)d.H, (long long)pass_ctas, lead,
               (double(c[kPassEnd]) - t0) * us, (double(c[kPrepStart]) - t0) * us, (double(c[kPrepEnd]) - t0) * us,
               double(c[kPassSpans]) * us / double(pass_ctas), double(c[kPassWaits]) * us / double(pass_ctas),
               double(c[kPrepWaits]) * us / double(prep_ctas), c[kPrepCapped], phase(4), phase(0), phase(1), phase(2), phase(3));
}
// Whether grids may run side by side for the forward with wy_prep beside its pass: not with
// CUDA_LAUNCH_BLOCKING=1 (each launch returns only once its grid is done, so the pass would wait
// for a wy_prep not yet launched), not under a tool that runs grids one at a time, known by the
// variables it gives its child (compute-sanitizer: NV_SANITIZER_INJECTION_*; Nsight Compute:
// NV_NSIGHT_INJECTION_*, H200 with CUDA 13.0, docs/measurements/2026-12-03-s34/call2/tool_env.txt;
// any tool injected through CUDA_INJECTION64_PATH), nor with REWY_SERIAL_FORWARD=1 (for any other).
bool grids_side_by_side() {
  for (const char* tool_variable :
       {"CUDA_INJECTION64_PATH", "NV_SANITIZER_INJECTION_TRANSPORT_TYPE", "NV_NSIGHT_INJECTION_TRANSPORT_TYPE"}) {
    const char* value = std::getenv(tool_variable);
    if (value && *value) return false;
  }
  return !env_is_one("CUDA_LAUNCH_BLOCKING") && !env_is_one("REWY_SERIAL_FORWARD");
}
// How long a kernel waits for another's progress before it gives up (DeltaParams::pass_wait_ns:
// grad_chunk for the state passes' counts, kErrPassStall; the forward's pass for wy_prep's flags,
// kErrPrepStall; the decay cut's look-back, kErrSegmentStall): 10 s, far past any pass
// (milliseconds); REWY_PASS_WAIT_MS for the tests that make one stall. In ns.
unsigned long long pass_wait_ns() {
  const char* e = std::getenv("REWY_PASS_WAIT_MS");
  return static_cast<unsigned long long>(e ? std::max<int64_t>(1, std::atoll(e)) : int64_t(10000)) * 1000000ull;
}

// Throws (and clears) an error some call's kernels stored for `device`; `who` names the call.
void raise_stored_errors(int device, const std::string& who) {
  volatile int* w = error_words(device).host;
  bool any = false;
  for (int i = 0; i < kErrWords; ++i) any |= w[i] != 0;
  if (!any) return;
  // A forward still running (the entry check can meet one part-way) stores its errors again from
  // its later blocks and kernels: wait for every kernel on the device so that this raise covers
  // them all and a later call does not raise the same error again (the error path only).
  CUDA_CHECK(cudaDeviceSynchronize());
  const bool positive = w[kErrPositiveGate] != 0, stalled = w[kErrPassStall] != 0, prep_stalled = w[kErrPrepStall] != 0;
  const bool segment_stalled = w[kErrSegmentStall] != 0;
  for (int i = 0; i < kErrWords; ++i) w[i] = 0;
  // (The wait's length is not named: REWY_PASS_WAIT_MS may have changed since that backward ran.)
  REWY_CHECK(!stalled,
             "{}: an overlapped backward's grad_chunk waited for the state passes' progress past its bound "
             "(REWY_PASS_WAIT_MS, 10 s by default) and gave up; that backward's gradients are void (rerun it "
             "with --serial-grad, Config::overlap_grad = false)",
             who);
  REWY_CHECK(!prep_stalled,
             "{}: a forward's state pass waited for wy_prep, launched beside it, past its bound (REWY_PASS_WAIT_MS, "
             "10 s by default) and gave up; that forward's outputs are void (wy_prep did not start beside the "
             "pass, as where a tool runs grids one at a time: rerun with REWY_SERIAL_FORWARD=1 or "
             "Config::prep_beside = false)",
             who);
  REWY_CHECK(!segment_stalled,
             "{}: a decay-cut forward's segment waited for its predecessor's end state past its bound "
             "(REWY_PASS_WAIT_MS, 10 s by default) and gave up; that forward's outputs are void (rerun it without "
             "the decay cut: Config::segment_form other than DecayCut)",
             who);
  REWY_CHECK(!positive, "{}: g holds positive log-decays; g must be <= 0", who);
  REWY_FAIL("{}: the log-decay g falls too fast inside a 16-token block (more than 80 in natural-log units "
            "between a block's first or last row and its middle row, e.g. per-step g below -10); the CUDA "
            "kernels do not support such gates; use --device cpu",
            who);
}

// A forward's checks: its end on the stream, then the error words.
class ForwardCheck final : public PendingCheck {
 public:
  ForwardCheck(int device, Variant v, cudaStream_t s) : device_(device), variant_(v) {
    CUDA_CHECK(cudaEventCreateWithFlags(&done_, cudaEventDisableTiming));
    CUDA_CHECK(cudaEventRecord(done_, s));
  }
  ~ForwardCheck() override { cudaEventDestroy(done_); }  // no throw from a destructor
  void wait_and_raise() const override {
    CUDA_CHECK(cudaEventSynchronize(done_));
    raise_stored_errors(device_, name(variant_));
  }

 private:
  int device_;
  Variant variant_;
  cudaEvent_t done_{};
};

// Errors of earlier calls whose kernels have run, raised at the next call's entry.
void raise_earlier_errors(int device) {
  raise_stored_errors(device, fmt::format("an earlier CUDA delta-rule call on cuda:{}", device));
}

template <class T> T* ptr(const Tensor& t) { return t.defined() ? static_cast<T*>(t.data_ptr()) : nullptr; }

void check_cuda_inputs(const Config& cfg, const Dims& d, const Inputs& in) {
  REWY_CHECK(cfg.chunk == kChunk, "the CUDA delta-rule kernels use chunk {} (got --chunk {})", kChunk, cfg.chunk);
  REWY_CHECK((d.K == 64 || d.K == 128) && (d.V == 64 || d.V == 128),
             "the CUDA delta-rule kernels support head dims K, V in {{64, 128}}, got K = {}, V = {}", d.K, d.V);
  auto need = [](const Tensor& t, DType dt, const char* name) {
    if (t.defined())
      REWY_CHECK(t.dtype() == dt, "{} must be {} on CUDA, got {}", name, dtype_name(dt), dtype_name(t.dtype()));
  };
  for (auto [t, n] : {std::pair{&in.q, "q"}, {&in.k, "k"}, {&in.v, "v"}, {&in.beta, "beta"}, {&in.b, "b"}, {&in.w, "w"}})
    need(*t, DType::BF16, n);
  need(in.g, DType::F32, "g");
  need(in.h0, DType::F32, "h0");
  REWY_CHECK(d.B * d.T < (int64_t(1) << 31) / std::max<int64_t>(d.H * std::max(d.K, d.V), 1),
             "too many tokens for 32-bit chunk tables");
}

enum class Pass { Forward, Backward };

// Every launch choice of one pass (forward, or backward with its replay), from Config and the sizes.
LaunchInfo launch_info(const Config& cfg, const Dims& d, const Stream& s, Pass pass) {
  LaunchInfo li;
  li.stream = static_cast<cudaStream_t>(s.handle);
  li.K = int(d.K);
  li.V = int(d.V);
  li.store_state = pass == Pass::Forward && cfg.policy == Policy::Save;
  const StateSlices slices = state_slices(cfg, d.N * d.H, d.V, pass == Pass::Backward, cuda_sm_count(s.device));
  li.bv = slices.bv;
  li.bwd_bv = slices.bwd_bv;
  if (cfg.grad_warps) li.grad_warps = cfg.grad_warps;  // else LaunchInfo's default
  // wy_prep at 16 warps: KDA's (one CTA an SM) 599 -> 579 µs, GDN2's 606 -> 622, DeltaNet's
  // 250 -> 275 (H200, 2026-11-30, shapes 0 and 3, docs/measurements/2026-11-30-s4/warps_*.txt);
  // since W and U share 𝒯's fragments GDN2's forward is 1.010x faster at 16 (KDA's 0.998x at 8,
  // DeltaNet's and GDN's 0.82x at 16; H200, 2026-12-01, shapes 0, 3, 5, docs/measurements/2026-12-01-s15/).
  // KDA's and GDN2's wy_prep in channel slices at 8 warps, two CTAs an SM, against the whole-K
  // kernel at 16: 391.9 -> 338.1 us (1.159x) and 412.1 -> 352.0 (1.171x) (H200, 2026-12-01,
  // shape 0, docs/measurements/2026-12-01-s17/call3-experiments/).
  if (cfg.prep_warps) li.prep_warps = cfg.prep_warps;
  else if (cfg.variant == Variant::KDA || cfg.variant == Variant::GDN2) li.prep_split = true;
  if (cfg.replay_warps) li.replay_warps = cfg.replay_warps;
  li.prep_overlap = cfg.prep_overlap;
  return li;
}

template <class F>
void dispatch_variant(Variant v, F&& f) {
  switch (v) {
    case Variant::DeltaNet: return f(std::integral_constant<int, kDeltaNet>{});
    case Variant::GDN: return f(std::integral_constant<int, kGDN>{});
    case Variant::KDA: return f(std::integral_constant<int, kKDA>{});
    case Variant::GDN2: return f(std::integral_constant<int, kGDN2>{});
  }
}

// The kernels' VariantId of v.
static_assert(int(Variant::DeltaNet) == kDeltaNet && int(Variant::GDN) == kGDN && int(Variant::KDA) == kKDA &&
                  int(Variant::GDN2) == kGDN2,
              "experiments.h's experiment(name, Variant) takes a Variant's value as its VariantId");
int variant_id(Variant v) {
  int id = 0;
  dispatch_variant(v, [&](auto vc) { id = decltype(vc)::value; });
  return id;
}

DeltaParams base_params(const Dims& d, const Inputs& in, const ChunkTable& ct, float scale) {
  DeltaParams p;
  p.H = int(d.H);
  p.tokens = d.B * d.T;
  p.num_chunks = ct.num_chunks;
  p.num_seqs = ct.num_seqs;
  p.chunk_tok = ptr<int>(ct.chunk_tok);
  p.chunk_len = ptr<int>(ct.chunk_len);
  p.seq_chunk = ptr<int>(ct.seq_chunk);
  p.scale = scale;
  p.q = ptr<bf16_t>(in.q);
  p.k = ptr<bf16_t>(in.k);
  p.v = ptr<bf16_t>(in.v);
  p.beta = ptr<bf16_t>(in.beta);
  p.b = ptr<bf16_t>(in.b);
  p.w = ptr<bf16_t>(in.w);
  p.g = ptr<float>(in.g);
  p.h0 = ptr<float>(in.h0);
  return p;
}

// The kernels read their inputs with 16-byte copies: a contiguous view that does not start on a
// 16-byte boundary (a slice at an odd offset) is copied to fresh memory, like a strided one.
Tensor kernel_ready(const Tensor& t, const Stream& s) {
  if (!t.defined()) return t;
  if (t.is_contiguous() && reinterpret_cast<uintptr_t>(t.data_ptr()) % 16 == 0) return t;
  return t.clone(&s);
}

Inputs contiguous_inputs(const Inputs& in, const Stream& s) {
  Inputs c = in;
  for (Tensor* t : {&c.q, &c.k, &c.v, &c.beta, &c.g, &c.b, &c.w, &c.h0}) *t = kernel_ready(*t, s);
  return c;
}

// The intermediates the kernels pass between them, held in a Saved: W, U, P, Q̂, K̄, e^γ always
// (P unless m holds it: the Recompute backward's replay takes the forward's); with_states (the
// Save policy's forward, the Recompute backward's replay) also E, the state snapshots Hs and, for
// gated variants, Q̂'s second bf16 term (state_bwd reads it). Without gates Q̂ = Q and K̄ = K: they
// are the (contiguous) inputs themselves, and wy_prep stores no copies. q_hat = false: no Q̂ and no
// second term (GDN's replay where state_bwd forms them from q: q_from_row_gates). k_bar = false:
// no K̄ (GDN's Save forward with row gates: save_row_gates). u = false: no U (the replay where
// its state pass forms E from 𝒯 Diag(β): fused_replay). w = false: no W (the replay whose
// state_bwd forms Wᵀ∂E from 𝒯 Diag(β) and k: replay_no_w).
void allocate_intermediates(Saved& m, const Config& cfg, const Dims& d, const ChunkTable& ct, bool with_states,
                            const Inputs& in, const Device& dev, const Stream& s, bool q_hat = true,
                            bool k_bar = true, bool u = true, bool w = true) {
  const int64_t B = d.B, T = d.T, H = d.H, K = d.K, V = d.V, NC = std::max(ct.num_chunks, 1);
  auto bf16 = [&](const Shape& shape) { return Tensor::empty(shape, DType::BF16, dev, &s); };
  if (w) m.W = bf16({B, T, H, K});
  if (u) m.U = bf16({B, T, H, V});
  if (!m.P.defined()) m.P = bf16({B, T, H, kChunk});
  if (q_hat) m.Qg = has_gate(cfg.variant) ? bf16({B, T, H, K}) : in.q;
  if (k_bar) m.Kg = has_gate(cfg.variant) ? bf16({B, T, H, K}) : in.k;
  m.gexp = Tensor::empty({NC, H, K}, DType::F32, dev, &s);
  if (with_states) {
    m.E = bf16({B, T, H, V});
    m.Hs = bf16({NC, H, K, V});
    if (has_gate(cfg.variant) && q_hat) m.Qlo = bf16({B, T, H, K});
  }
}

void bind_intermediates(DeltaParams& p, const Saved& m) {
  p.Tinv = ptr<bf16_t>(m.Tinv);
  p.W = ptr<bf16_t>(m.W);
  p.U = ptr<bf16_t>(m.U);
  p.E = ptr<bf16_t>(m.E);
  p.P = ptr<bf16_t>(m.P);
  p.Hs = ptr<bf16_t>(m.Hs);
  p.Qg = ptr<bf16_t>(m.Qg);
  p.Qlo = ptr<bf16_t>(m.Qlo);
  p.Kg = ptr<bf16_t>(m.Kg);
  p.gexp = ptr<float>(m.gexp);
  p.gate_rows = ptr<float>(m.gate_rows);
}

// GDN's row gates, e^{G_i} and e^{γ − G_i} f32 [num_chunks][H][2][C].
Tensor empty_gate_rows(const ChunkTable& ct, int64_t H, const Device& dev, const Stream& s) {
  return Tensor::empty({std::max(ct.num_chunks, 1), H, 2 * kChunk}, DType::F32, dev, &s);
}
// ... for the state pass (fused_gate), bound to p.
Tensor bind_gate_rows(DeltaParams& p, const ChunkTable& ct, int64_t H, const Device& dev, const Stream& s) {
  Tensor rows = empty_gate_rows(ct, H, dev, s);
  p.gate_rows = ptr<float>(rows);
  return rows;
}

std::atomic<int64_t> g_multicast_launches{0};
std::atomic<int64_t> g_register_passes{0};
std::atomic<int64_t> g_one_kernel_forwards{0};
std::atomic<int64_t> g_overlapped_backwards{0};
std::atomic<int64_t> g_prep_beside_forwards{0};
std::atomic<int64_t> g_unfused_forwards_keeping_tbeta{0};
std::atomic<int64_t> g_fused_channel_forwards{0};
std::atomic<int64_t> g_segment_scan_forwards{0};
std::atomic<int64_t> g_two_pass_segment_forwards{0};
std::atomic<int64_t> g_decay_cut_forwards{0};
// The last decay cut with a fallback: its flags and the look-back word's place (decay_cut_fell_back).
// ... and the backward's (decay_cut_backward_fell_back).
struct LastCut {
  Tensor flags;  // undefined: none had a fallback
  int64_t word = 0;
};
std::mutex g_last_cut_mutex;
// Function-local, so built after the device allocator (at the first cut, whose inputs are on the
// device already) and destroyed before it: namespace-scope ones outlived the allocator and crashed
// the process at exit (status 139 after every test had passed).
LastCut& last_cut(bool backward) {
  static LastCut forward_cut, backward_cut;
  return backward ? backward_cut : forward_cut;
}
std::atomic<int64_t> g_decay_cut_backwards{0};
std::atomic<int64_t> g_dk_state_backwards{0};
std::atomic<int64_t> g_row_beta_backwards{0};
// 1 where the word of `cut` is set (its fallback ran), 0 where not, -1 where none is recorded.
int fell_back(const LastCut& cut) {
  std::lock_guard<std::mutex> g(g_last_cut_mutex);
  if (!cut.flags.defined()) return -1;
  return cut.flags.to(cpu()).data<int>()[cut.word] != 0 ? 1 : 0;
}

// The tensor maps of the state pass's shared tiles W, K̄, Q̂, P, when every tile's base is set and
// 16-byte aligned (TMA's rule; views of a misaligned input keep the plain kernel). row_gates
// (fused_gate): the pass reads k and q in K̄'s and Q̂'s place.
bool token_state_maps(tma::StateMaps& maps, const DeltaParams& p, const Dims& d, bool row_gates) {
  const bf16_t* const kb = row_gates ? p.k : p.Kg;
  const bf16_t* const qh = row_gates ? p.q : p.Qg;
  const bf16_t* bases[] = {p.W, kb, qh, p.P};
  for (const bf16_t* b : bases)
    if (!b || reinterpret_cast<uintptr_t>(b) % 16 != 0) return false;
  const int64_t rows = d.B * d.T;
  maps.W = tma::make_token_map(p.W, rows, d.H, d.K);
  maps.Kb = tma::make_token_map(kb, rows, d.H, d.K);
  maps.Qh = tma::make_token_map(qh, rows, d.H, d.K);
  maps.P = tma::make_token_map(p.P, rows, d.H, kChunk);
  return true;
}
// The cluster pass's maps (LaunchInfo::maps), when they serve: the state pass runs in V-slices
// narrower than V, and token_state_maps has them.
bool state_maps(tma::StateMaps& maps, const Config& cfg, const DeltaParams& p, const Dims& d, const LaunchInfo& li,
                bool row_gates) {
  return cfg.multicast_state_tiles && li.bv < d.V && token_state_maps(maps, p, d, row_gates);
}

float resolve_scale(const Config& cfg, const Dims& d) {
  return cfg.scale != 0.0 ? float(cfg.scale) : float(1.0 / std::sqrt(double(d.K)));
}

// GDN's Save forward keeps the rows' gates instead of Q̂, its second term and K̄ (3 x [C][K] bf16 a
// chunk less written) where both state passes take them: its output pass and state_bwd on wgmma
// (V-slices of 64 and 128), state_bwd forming Q̂ from q as in the Recompute backward. fwd: the
// forward's launch choices.
bool save_row_gates(const Config& cfg, const Dims& d, const Stream& s, const LaunchInfo& fwd) {
  if (cfg.variant != Variant::GDN || cfg.policy != Policy::Save) return false;
  const int bwd_slice = std::min<int>(launch_info(cfg, d, s, Pass::Backward).bwd_bv, int(d.V));
  return std::min<int>(fwd.bv, int(d.V)) % 64 == 0 && bwd_slice % 64 == 0;
}

// Config::scan_segments: how many segments the forward cuts each sequence into (1: none). Where
// it applies: the Recompute forward of DeltaNet and GDN at K = V = 128 whose passes can take
// V-slices of 64 or 128 (the fused forms the map pass and the scan build on), and KDA's fused form
// and GDN2's in the two-pass form alone (below, at the function's start). With count 0 the
// rule picks by form (Config::segment_form, else the two-pass form):
// - The two-pass form (DeltaNet's and GDN's default): its plane pass runs about 2 S CTAs a pair
//   (the first segments' second plane is not run), one an SM, so segment-head pairs near 64, at
//   most 16 pairs: 1.324x DeltaNet's Recompute forward, 1.312x GDN's at (1, 16384, 16) (0.5268 ->
//   0.3978, 0.5348 -> 0.4076 ms; backward unchanged), at 32 pairs (seg2p32: (2, 8192, 16) and
//   (1, 32768, 32)) 0.80-0.92x as counted (H200, 2026-12-05, docs/measurements/2026-12-05-s49/call1/).
// - GDN's decay cut (Config::segment_form = DecayCut, or REWY_EXPERIMENTS=dcut): one pass of one
//   CTA a segment and head (plus the warm-up chunks from its cut), so segment-head pairs near 128,
//   at up to 32 pairs. At the benchmark's gates 1.168x / 1.867x / 1.294x GDN's forward at (2,
//   8192, 16), (1, 16384, 16), (1, 32768, 32) (0.3337 -> 0.2856, 0.5350 -> 0.2866, 1.3013 ->
//   1.0059 ms; docs/measurements/2026-12-05-s49/call2/, where a segment with no cut ran from its
//   sequence's start). Not the default: where a head's decay is weak (GDN's heads with A e^{dt}
//   near 0.001 a token need 300 chunks to cut) no segment cuts; each then looks back (waits for
//   its predecessor's end state), the chain that of the sequential forward but at whole-V
//   slices: at per-token log-decay -0.002 0.569x / 0.403x / 0.596x the default at those shapes,
//   at the benchmark's gates 1.190x / 1.491x / 1.301x (the look-back's build, H100, 2026-12-05,
//   docs/measurements/2026-12-05-s50/call1/). DeltaNet's bound never cuts.
// - ... with a fallback (the default at up to 32 pairs, REWY_EXPERIMENTS=nodcut turning it off, or
//   Config::cut_fallback_segments): the old default there, the two-pass form at up to 16 pairs,
//   the sequential forward with wy_prep beside it at 17-32. The plan runs first, from k, β and g,
//   walking at most 8 chunks back (kCutReachWithFallback); both paths' kernels are launched, and
//   its look-back word (set where any segment would look back) lets one of them run, the other's
//   CTAs leaving at once: the cut's speed where every head cuts within 8 chunks, the fallback's
//   plus the plan and the empty launches where one does not, no host synchronisation. Measured
//   against the two-pass/sequential default (H200, 2026-12-05, docs/measurements/2026-12-05-s53/
//   call1/) at (2, 8192, 16), (1, 16384, 16), (1, 32768, 32): 1.228x / 1.514x / 1.482x at the
//   benchmark's gates, 0.910x / 0.929x / 0.994x at weak decay (per-token log-decay in
//   [-0.002, 0): the plan and the empty launches, about 30 µs). With the plan's loads batched
//   (its forward 25 -> 16 µs, backward 46 -> 22 µs by ncu): forward 1.221x / 1.493x / 1.353x at the
//   benchmark's gates, 0.941x / 0.955x / 0.979x at weak decay; backward 1.010x / 1.169x / 1.085x
//   and 1.003x / 0.962x / 0.993x (H100, 2026-12-05, docs/measurements/2026-12-05-s54/call4/,
//   against REWY_EXPERIMENTS=nodcut in the same call). At GDN's initial gates a 16-head
//   layer cuts whole in about 9% of cases, computed: the gain is for strongly decaying heads, such
//   as the benchmark's.
// - The three-pass form (REWY_EXPERIMENTS=segscan, segscan64, segscan32p): three passes' work
//   where the sequential forward does one, 1.21-1.24x at (1, 16384, 16), below the two-pass
//   form's (same call). segscan: at most 16 pairs, segments × pairs near 128, segscan64 near 64,
//   segscan32p segscan's count at up to 32 pairs.
// At least 8 chunks a segment (the longest sequence's count decides). REWY_EXPERIMENTS=noseg: no
// segments (the sequential forward, to time against).
// Whether a sequence of d is empty (a repeated cu_seqlens entry). Such a sequence has no segment
// (segment_layout), so no segment's pass would carry its h0 to ht, nor dht to its ∂h0: calls with
// one take the sequential passes.
static bool has_empty_sequence(const Dims& d) {
  for (int64_t n = 0; n < d.N; ++n)
    if (d.seq_start[n + 1] == d.seq_start[n]) return true;
  return false;
}
// The longest sequence of d, in chunks (the segment counts' bound: at least 8 chunks a segment).
static int64_t longest_chunks(const Dims& d) {
  int64_t longest = 0;
  for (int64_t n = 0; n < d.N; ++n) longest = std::max(longest, (d.seq_start[n + 1] - d.seq_start[n] + kChunk - 1) / kChunk);
  return longest;
}
struct SegmentChoice {
  int count = 1;  // segments a sequence (1: no segment scan)
  SegmentForm form = SegmentForm::ThreePass;
  // DecayCut's fallback where a segment would look back: 0 none (the look-back), 1 the sequential
  // forward, S >= 2 the two-pass form over S segments a sequence (Config::cut_fallback_segments).
  int fallback = 0;
};
SegmentChoice scan_segment_choice(const Config& cfg, const Dims& d, int var, int64_t sms) {
  // KDA's fused form (Config::fuse_kda_forward, wy_prep_split: prep_warps 0), and GDN2's (the
  // g2fuse form: E = 𝒯 (Y_U − Y_W H)), take the two-pass form alone: where asked (scan_segments
  // with the form Auto or TwoPass) or, by rule, under REWY_EXPERIMENTS=kseg2p at up to 32 pairs
  // (their default there runs whole-V or 64-wide chains of one pass beside wy_prep_split, 32
  // CTAs). Not yet timed; counted from GDN's planes: about 1.3-1.4x KDA's forward at (2, 8192, 16),
  // (1, 16384, 16), (1, 32768, 32).
  const bool channel = ((var == kKDA && cfg.fuse_kda_forward) || var == kGDN2) && cfg.prep_warps == 0;
  if (cfg.policy != Policy::Recompute || !(fuses_wu(var) || channel) || d.K != 128 || d.V != 128 ||
      cfg.multicast_state_tiles || (cfg.state_slice != 0 && cfg.state_slice < 64) || cfg.scan_segments == 1)
    return {};
  const int64_t longest = longest_chunks(d);
  if (has_empty_sequence(d) || longest < 2) return {};
  const bool cut_applies = var == kGDN;
  const bool three_pass = experiment("segscan", var) || experiment("segscan64", var) || experiment("segscan32p", var);
  SegmentForm form = cfg.segment_form;
  if (form == SegmentForm::Auto)
    form = three_pass                                  ? SegmentForm::ThreePass
           : cut_applies && experiment("dcut", var) ? SegmentForm::DecayCut
                                                       : SegmentForm::TwoPass;
  if (form == SegmentForm::DecayCut && !cut_applies) return {};
  const int64_t pairs = d.N * d.H;
  // The counts (state_slices.h's segment_count): the planes and the cut's pass run one CTA an SM,
  // so their grids stay within the device's SMs. (The three-pass experiments keep their own.)
  const int64_t planes_count = segment_count(pairs, longest, 2, 64, sms);
  if (channel) {  // the two-pass form alone
    if (cfg.segment_form != SegmentForm::Auto && cfg.segment_form != SegmentForm::TwoPass) return {};
    if (cfg.scan_segments > 1) return {cfg.scan_segments, SegmentForm::TwoPass};
    if (!experiment("kseg2p", var) || pairs == 0 || pairs > 32) return {};
    return planes_count >= 2 ? SegmentChoice{int(planes_count), SegmentForm::TwoPass} : SegmentChoice{};
  }
  if (cfg.scan_segments > 1)  // (check_inputs rejects a negative cut_fallback_segments)
    return {cfg.scan_segments, form, form == SegmentForm::DecayCut ? cfg.cut_fallback_segments : 0};
  if (experiment("noseg", var)) return {};
  const auto count_for = [&](int64_t target) { return std::min<int64_t>((target + pairs - 1) / pairs, longest / 8); };
  const int64_t cut_count = segment_count(pairs, longest, 1, 128, sms);
  // GDN's decay cut at up to 32 pairs (the default; REWY_EXPERIMENTS=nodcut, or the form TwoPass,
  // turns it off) with the old default as its fallback where any segment would look back: the
  // two-pass form at up to 16 pairs, the sequential forward (wy_prep beside it) at 17-32.
  if (cut_applies && cfg.segment_form == SegmentForm::Auto && !three_pass && !experiment("nodcut", var) && pairs > 0 &&
      pairs <= 32) {
    const int64_t two_pass_count = pairs <= 16 ? planes_count : 1;
    if (cut_count >= 2 && (pairs > 16 || two_pass_count >= 2))
      return {int(cut_count), SegmentForm::DecayCut, int(two_pass_count)};
  }
  const bool upto32 = form == SegmentForm::DecayCut ||
                      (form == SegmentForm::TwoPass ? experiment("seg2p32", var) : experiment("segscan32p", var));
  const int64_t target = form == SegmentForm::TwoPass || experiment("segscan64", var) ? 64 : 128;
  if (pairs == 0 || pairs > (upto32 ? 32 : 16)) return {};
  const int64_t count = form == SegmentForm::TwoPass    ? planes_count
                        : form == SegmentForm::DecayCut ? cut_count
                                                        : count_for(target);
  return count >= 2 ? SegmentChoice{int(count), form} : SegmentChoice{};
}

// A segment layout's index on dev, i32: seg_first [N + 1], then each segment's flag, 1 where it
// ends its sequence [num segments], then each segment's sequence where it is that sequence's
// first, else −1, then each segment's sequence, then that sequence's first segment [num
// segments each] (SegmentScanParams::seg_first, DeltaParams::seg_last, seg_seq, seg_owner,
// seg_lead); uploaded once per layout, as the chunk tables are.
Tensor segment_index(const std::vector<int64_t>& seg_first, Device dev, const Stream& s) {
  return cached_per_layout<Tensor>(dev.index, seg_first, [&] {
    std::vector<double> last, seq, owner, lead;  // each segment's, in segment order
    for (size_t n = 0; n + 1 < seg_first.size(); ++n)
      for (int64_t i = seg_first[n]; i < seg_first[n + 1]; ++i) {
        last.push_back(i + 1 == seg_first[n + 1] ? 1 : 0);
        seq.push_back(i == seg_first[n] ? double(n) : -1.0);
        owner.push_back(double(n));
        lead.push_back(double(seg_first[n]));
      }
    std::vector<double> v(seg_first.begin(), seg_first.end());
    for (const auto* part : {&last, &seq, &owner, &lead}) v.insert(v.end(), part->begin(), part->end());
    return Tensor::from_vector(v, {int64_t(v.size())}, DType::I32).to(dev, &s);
  });
}

// The Recompute forward's kept set: 𝒯 and P (FLA's KDA/GDN2 keep Akk, Aqk and G; the replay
// rebuilds the rest) and, where Tbeta is given, 𝒯 Diag(β) (the replay's state pass forms E from
// it: Recompute backward 1.022x DeltaNet, 1.012x GDN at shapes 0, 3, 4, 5; H200, 2026-12-04,
// experiment keeptb, docs/measurements/2026-12-04-s42/call4/) with e^γ and GDN's row gates (4 MB
// at (8, 2048, 16); the same values wy_replay would form, so that the backward runs no wy_replay:
// 1.010x GDN, 1.004x DeltaNet, forward unchanged; experiment keepgates,
// docs/measurements/2026-12-04-s43/call1/). Every other tensor of sv is dropped.
// row_betas: defined where Tbeta is 𝒯 (beta_on_rows: the forward wrote no 𝒯 Diag(β)).
void keep_recompute_set(Saved& sv, const Tensor& Tbeta, const Tensor& gate_rows, const Tensor& row_betas = Tensor()) {
  Saved kept;
  kept.policy = sv.policy;
  kept.Tinv = sv.Tinv;
  kept.P = sv.P;
  if (Tbeta.defined()) {
    kept.Tbeta = Tbeta;
    kept.row_betas = row_betas;
    kept.gexp = sv.gexp;
    kept.gate_rows = gate_rows;
  }
  sv = kept;
}

// β on the rows (DeltaNet, GDN, KDA): the fused forward's wy_prep writes 𝒯 and β of the rows (256
// bytes a chunk), no 𝒯 Diag(β) (8 KB of its 56 at K = 128), and the passes that read 𝒯 Diag(β)
// read 𝒯 and take β on the rows they scale, staged with their tiles (DeltaParams::row_betas): the
// forward's and the replay's E, and state_bwd's X. The Recompute backward then keeps 𝒯 and the
// rows' β (Saved::row_betas), one [B, T, H, C] bf16 tensor less. wy_prep alone 96.8 -> 88.2 µs
// (DeltaNet, (8, 2048, 16)), 366.6 -> 322.8 (DeltaNet, (8, 4096, 32)), GDN 102.1 -> 94.0 and
// 389.2 -> 345.6, KDA's wy_prep_split 273.1 -> 263.4 and 1063.8 -> 1028.0, the passes unchanged;
// Recompute forward 1.05 / 1.03 / 1.06x DeltaNet at shapes 0, 1, 4, GDN 1.02-1.06x at all six, KDA
// 1.02-1.03x at shapes 0, 1, 4, the backward within 0.995-1.007x there (H100, 2026-12-06, experiment
// tbrows, docs/measurements/2026-12-06-s60/call3/). Not DeltaNet's at up to 32 pairs: there its
// backward's passes are chains, on which X's new row scaling sits (backward 0.97-0.99x at shapes 2,
// 3, 5), and its forward gained 0.98-1.02x. (Each β loaded from p.beta at a step's start instead
// waited behind the pass's tile stream: forward 0.74x, call2/ there.) REWY_EXPERIMENTS=notbrows:
// 𝒯 Diag(β) as before.
bool beta_on_rows(int var, int64_t pairs) { return !experiment("notbrows", var) && (var != kDeltaNet || pairs > 32); }
Tensor bind_row_betas(DeltaParams& p, const ChunkTable& ct, int64_t H, Device dev, const Stream& s) {
  Tensor t = Tensor::empty({std::max(ct.num_chunks, 1), H, kChunk}, DType::F32, dev, &s);
  p.row_betas = ptr<float>(t);
  return t;
}

}  // namespace

// The Recompute backward's replay state pass forms E from 𝒯 Diag(β), k and v where nothing
// reads U (fused_replay at its slice li.bv): wy_replay writes 𝒯 Diag(β) and, for state_bwd at
// V-slices of 16 and 32 (mma.sync), W; no U.
static bool replay_fused(const Config& cfg, const Dims& d, const LaunchInfo& li) {
  return fused_replay(variant_id(cfg.variant), int(d.K), int(d.V), false, true, std::min<int>(li.bv, int(d.V)));
}
// Nor W where state_bwd runs on wgmma (V-slices of 64 and 128): it forms Wᵀ∂E from 𝒯 Diag(β)
// and k (state_bwd_wg_kernel's TBW). Recompute backward 1.004-1.075x DeltaNet (geomean 1.042),
// 1.005-1.040x GDN (1.024) at the six shapes; wy_replay at shape 0 63 -> 33 us (DeltaNet), 72 ->
// 34 us (GDN), state_bwd 142 -> 136 us, 152 -> 170 us (H200, 2026-12-04, experiment nowr,
// docs/measurements/2026-12-04-s42/call3/). With the forward's 𝒯 Diag(β) and gates kept
// (Saved::Tbeta), the replay then runs no wy_replay.
static bool replay_forms_no_w(const Config& cfg, const Dims& d, const LaunchInfo& li) {
  return replay_fused(cfg, d, li) && std::min<int>(li.bwd_bv, int(d.V)) % 64 == 0;
}

// The decay cut's tensors and fields on p (whose sequences are the layout's segments): the plan
// [segments, H] and the look-back's end states and flags (kSegWords words after one a segment
// and head), the segment index's owners, first segments and last-segment flags, the tolerance,
// and with a fallback the walk's reach (kCutReachWithFallback chunks: a head whose decay has not cut by then
// takes the fallback) and the plan's word as p's path (value 0).
struct DecayCutTensors {
  Tensor plan, seg_end, seg_flags, index;
  Tensor stop;        // (the backward's)
  Tensor seq_chunk;   // (the backward's: its segments' chunk table, held while its launches may read it)
};
// What the forward's and the backward's cut share: the plan [segments, H], the flags (kSegWords
// words after one a segment and head), the segment index (its last-segment flags, first
// segments' sequences, owners and first segments), the tolerance, the reach, and with a fallback
// the plan's word as p's path (value 0); `last` records the word for the fell-back queries.
static void bind_cut_plan(DeltaParams& p, const SegmentLayout& sl, const Dims& d, bool fallback, DecayCutTensors& t,
                          LastCut& last, Device dev, const Stream& s) {
  const int64_t segs = sl.dims.N;
  t.plan = Tensor::empty({segs, d.H}, DType::I32, dev, &s);
  t.seg_flags = Tensor::empty({segs * d.H + kSegWords}, DType::I32, dev, &s);
  t.index = segment_index(sl.seg_first, dev, s);
  const int* const seg_last = ptr<int>(t.index) + (d.N + 1);  // the index's arrays (segment_index)
  p.decay_log_tolerance = float(std::log(0x1p-30));  // below fp32 rounding of the state (Config::segment_form)
  p.cut_reach = fallback ? int(kCutReachWithFallback) : 0;
  p.seg_plan = ptr<int>(t.plan);
  p.seg_flags = reinterpret_cast<unsigned*>(ptr<int>(t.seg_flags));
  p.seg_last = seg_last;  // (its last segment writes the final state, or starts from dht)
  p.seg_seq = seg_last + segs;
  p.seg_owner = seg_last + 2 * segs;
  p.seg_lead = seg_last + 3 * segs;
  if (fallback) {
    p.path_flag = p.seg_flags + segs * d.H + kLookedBack;
    p.path_value = 0;
  }
  std::lock_guard<std::mutex> g(g_last_cut_mutex);
  last.flags = fallback ? t.seg_flags : Tensor();
  last.word = segs * d.H + kLookedBack;
}
static DecayCutTensors bind_decay_cut(DeltaParams& p, const SegmentLayout& sl, const Dims& d, const Tensor& ht, bool fallback,
                               Device dev, const Stream& s) {
  DecayCutTensors t;
  bind_cut_plan(p, sl, d, fallback, t, last_cut(false), dev, s);
  t.seg_end = Tensor::empty({sl.dims.N, d.H, d.K, d.V}, DType::F32, dev, &s);
  p.seg_end = ptr<float>(t.seg_end);
  p.pass_wait_ns = pass_wait_ns();
  p.ht = ptr<float>(ht);
  g_decay_cut_forwards.fetch_add(1, std::memory_order_relaxed);
  return t;
}

// The segment scan's tensors over a layout (whose segments p's launches take as their sequences,
// from ct): L, Φ and H_in [segments, H, ...], the segment index and, for the two-pass form, Y
// [B, T, H, K]; and the launches' params: sc over the call's sequences (h0 its start, or with
// two_pass none: each sequence's first segment ran from it, first_exact), p.seg_y, p.seg_seq and
// the longest segment (two_pass), or p.seg_last where no final state is kept (the three-pass
// form: the last segments' maps would serve only the final state).
struct ScanTensors {
  Tensor L, Phi, H_in, Y, index;
};
static SegmentPass bind_segment_scan(DeltaParams p, const SegmentLayout& sl, const ChunkTable& ct, const Dims& d,
                                     const Tensor& h0, const Tensor& ht, bool two_pass, ScanTensors& t, Device dev,
                                     const Stream& s) {
  const int64_t segs = sl.dims.N;
  t.L = Tensor::empty({segs, d.H, d.K, d.V}, DType::F32, dev, &s);
  t.Phi = Tensor::empty({segs, d.H, d.K, d.K}, DType::F32, dev, &s);
  t.H_in = Tensor::empty({segs, d.H, d.K, d.V}, DType::F32, dev, &s);
  t.index = segment_index(sl.seg_first, dev, s);
  const int* const seg_last = ptr<int>(t.index) + (d.N + 1);  // the index's arrays (segment_index)
  p.num_seqs = ct.num_seqs;
  p.seq_chunk = ptr<int>(ct.seq_chunk);
  SegmentPass pass;
  SegmentScanParams& sc = pass.sc;
  sc.N = int(d.N);
  sc.H = int(d.H);
  sc.seg_first = ptr<int>(t.index);
  sc.h0 = two_pass ? nullptr : ptr<float>(h0);
  sc.L = ptr<float>(t.L);
  sc.Phi = ptr<float>(t.Phi);
  sc.H_in = ptr<float>(t.H_in);
  sc.ht = ptr<float>(ht);
  sc.first_exact = two_pass;
  if (two_pass) {
    t.Y = Tensor::empty({d.B, d.T, d.H, d.K}, DType::BF16, dev, &s);
    p.seg_y = ptr<bf16_t>(t.Y);
    p.seg_seq = seg_last + segs;
    const std::vector<int64_t> first_chunk = sl.dims.chunk_start(kChunk);
    for (int64_t i = 0; i < segs; ++i) pass.max_chunks = std::max<int>(pass.max_chunks, int(first_chunk[i + 1] - first_chunk[i]));
  } else if (!ht.defined()) {
    p.seg_last = seg_last;
  }
  pass.p = p;
  return pass;
}

// The forward by the segment scan (Config::scan_segments; scan_segment_choice says where): the
// kernels run on the segments as the call's sequences (launch_segmented_forward). Segments end at
// chunk boundaries, so the chunks and every per-chunk tensor are those of the whole sequences: the
// Recompute backward takes what this keeps (𝒯, P, 𝒯 Diag(β), e^γ, GDN's row gates: the fused
// forward's set) with the call's own layout.
static ForwardResult segmented_forward(const Config& cfg, const Inputs& in, const Dims& d, SegmentChoice choice,
                                       Device dev, const Stream& s) {
  const SegmentLayout sl = segment_layout(d, kChunk, choice.count);
  const ChunkTable ct = make_chunk_table(sl.dims, dev, s);
  const int var = variant_id(cfg.variant);
  LaunchInfo li = launch_info(cfg, sl.dims, s, Pass::Forward);
  li.bv = std::max(li.bv, 64);  // the fused forms' whole panels
  // KDA and GDN2: their fused form (E from 𝒯 Diag(β), K ⊙ Γ and v in the pass, wy_prep_split
  // writing K ⊙ Γ in W's slot; GDN2's from 𝒯, Y_W and Y_U, in W's and U's), the two-pass form alone
  // (scan_segment_choice).
  const bool kda = var == kKDA, gdn2 = var == kGDN2;
  REWY_CHECK(ct.num_chunks > 0 && (kda || gdn2 ? li.prep_split && d.K == 128 && d.V == 128 && choice.form == SegmentForm::TwoPass
                                       : fused_wu(var, true, false, li.bv) &&
                                             fused_replay(var, int(d.K), int(d.V), false, true, li.bv)),
             "the segment scan needs DeltaNet's or GDN's fused forward at K = V = 128, or KDA's or GDN2's fused form in "
             "two passes");
  g_segment_scan_forwards.fetch_add(1, std::memory_order_relaxed);

  ForwardResult r;
  Saved& sv = r.saved;
  sv.policy = cfg.policy;
  sv.Tinv = Tensor::empty({d.B, d.T, d.H, kChunk}, DType::BF16, dev, &s);
  const bool row_gates = fused_gate(var, true, false, li.bv);
  // The fused forms read neither W nor U, nor, with the rows' gates, Q̂ or K̄ (forward's rule);
  // KDA's reads Q̂, K̄ and K ⊙ Γ (in W's place), no U; GDN2's Y_W and Y_U in W's and U's.
  allocate_intermediates(sv, cfg, d, ct, false, in, dev, s, !row_gates, !row_gates, gdn2, kda || gdn2);
  r.o = Tensor::empty({d.B, d.T, d.H, d.V}, DType::BF16, dev, &s);
  if (cfg.output_final_state) r.ht = Tensor::empty({d.N, d.H, d.K, d.V}, DType::F32, dev, &s);
  DeltaParams p = base_params(sl.dims, in, ct, resolve_scale(cfg, d));
  bind_intermediates(p, sv);
  p.o = ptr<bf16_t>(r.o);
  p.error_flag = error_words(dev.index).device;
  // (GDN2's pass reads 𝒯 in 𝒯 Diag(β)'s place: its β is in Y_W and Y_U. With β on the rows, so do the
  // others', which take β on the rows.)
  const bool tb_rows = !gdn2 && beta_on_rows(var, d.N * d.H);
  const Tensor Tbeta = gdn2 || tb_rows ? Tensor() : Tensor::empty({d.B, d.T, d.H, kChunk}, DType::BF16, dev, &s);
  p.Tbeta = gdn2 || tb_rows ? p.Tinv : ptr<bf16_t>(Tbeta);
  const Tensor row_betas = tb_rows ? bind_row_betas(p, ct, d.H, dev, s) : Tensor();
  Tensor gate_rows;
  if (row_gates) gate_rows = bind_gate_rows(p, ct, d.H, dev, s);

  ScanTensors scan, fallback_scan;  // the scan's over the call's layout, or over the fallback's
  SegmentPass main, fallback;       // the launches' params (fallback: the decay cut's two-pass form)
  DecayCutTensors cut;              // the decay cut's (bind_decay_cut)
  if (choice.form == SegmentForm::DecayCut) {
    REWY_CHECK(choice.fallback != 1, "the decay cut ahead of the sequential forward runs in forward()");
    // Its fallback: the two-pass form over its own layout, run where the plan set the look-back
    // word (kLookedBack), the cut's pass where it did not. The chunks and every per-chunk tensor
    // are the same under either layout (segment_layout).
    if (choice.fallback > 1) {
      const SegmentLayout fsl = segment_layout(d, kChunk, choice.fallback);
      fallback = bind_segment_scan(p, fsl, make_chunk_table(fsl.dims, dev, s), d, in.h0, r.ht, true, fallback_scan, dev, s);
    }
    main.p = p;
    cut = bind_decay_cut(main.p, sl, d, r.ht, choice.fallback > 1, dev, s);
    fallback.p.path_flag = fallback.sc.path_flag = main.p.path_flag;
    fallback.p.path_value = fallback.sc.path_value = 1;
  } else {
    const bool two_pass = choice.form == SegmentForm::TwoPass;
    if (two_pass) g_two_pass_segment_forwards.fetch_add(1, std::memory_order_relaxed);
    main = bind_segment_scan(p, sl, ct, d, in.h0, r.ht, two_pass, scan, dev, s);
  }
  dispatch_variant(cfg.variant, [&](auto vc) {
    launch_segmented_forward<decltype(vc)::value>(main.p, li, main.sc, main.max_chunks,
                                                  choice.fallback > 1 ? &fallback : nullptr);
  });

  r.pending = std::make_shared<ForwardCheck>(dev.index, cfg.variant, static_cast<cudaStream_t>(s.handle));
  // (Their replay does not read 𝒯 Diag(β). With β on the rows, DeltaNet's and GDN's reads 𝒯 in its place.)
  keep_recompute_set(sv, kda || gdn2 ? Tensor() : tb_rows ? sv.Tinv : Tbeta, gate_rows, kda ? Tensor() : row_betas);
  return r;
}

ForwardResult forward(const Config& cfg, const Inputs& in_raw, const Dims& d) {
  const Device dev = in_raw.q.device();
  require_supported_gpu(dev);
  DeviceGuard guard(dev);
  check_cuda_inputs(cfg, d, in_raw);
  raise_earlier_errors(dev.index);
  const Stream s = Stream::default_for(dev);
  const Inputs in = contiguous_inputs(in_raw, s);
  const SegmentChoice seg = scan_segment_choice(cfg, d, variant_id(cfg.variant), cuda_sm_count(dev));
  // The decay cut ahead of this forward, its fallback (SegmentChoice::fallback 1): both are
  // launched, the plan's word picks (launch_cut_first).
  const bool cut_first = seg.count > 1 && seg.form == SegmentForm::DecayCut && seg.fallback == 1;
  if (seg.count > 1 && !cut_first) return segmented_forward(cfg, in, d, seg, dev, s);
  const ChunkTable ct = make_chunk_table(d, dev, s);

  ForwardResult r;
  Saved& sv = r.saved;
  sv.policy = cfg.policy;
  const bool save = cfg.policy == Policy::Save;
  sv.Tinv = Tensor::empty({d.B, d.T, d.H, kChunk}, DType::BF16, dev, &s);
  LaunchInfo li = launch_info(cfg, d, s, Pass::Forward);
  if (cut_first) li.bv = std::max(li.bv, 64);  // (the fused forward: the cut's wy_prep writes its set)
  const int var = variant_id(cfg.variant);
  // wy_prep beside the state pass (Config::prep_beside: the Recompute forward, and DeltaNet's Save
  // forward where the pass's slices are 64 or wider; prep_beside_save: every Save forward): where
  // the pairs are few, the pass's CTAs (one an SM) leave most SMs idle while wy_prep, before it,
  // runs alone. The pass takes the narrowest V-slice that keeps it to 64 CTAs (DeltaNet, GDN) or 32
  // (KDA, GDN2: their wy_prep is the longer), and beside runs only where the pass leaves at least
  // half the device's SMs to wy_prep (a pass that filled them would wait for a wy_prep that cannot
  // start). Recompute forward 0.98-1.26x the serial one at (2, 8192, 16), (1, 16384, 16),
  // (1, 32768, 32), geomean 1.05-1.10x a variant; the Save forward 0.88-1.30x, of which DeltaNet's
  // at slices of 64 (32 pairs) 1.25x / 1.28x in two rounds, unchanged elsewhere (H200, 2026-12-03,
  // docs/measurements/2026-12-03-s34/call1/, call4/). Lost (call2/ there): beside at 33-64 pairs,
  // the pass in whole-V slices (at (4, 4096, 16) DeltaNet 0.96x, KDA/GDN2 0.71-0.73x), and KDA's
  // and GDN2's pass at up to 64 CTAs (0.80-0.95x).
  const int64_t pairs = d.N * d.H;
  // DeltaNet's Recompute forward at K = V = 128 as wy_prep's kernel without q and P (𝒯 and the
  // rows' β alone, kPrepTOnlyExp) and one kernel (fwd_fused.cuh's PFORM: a producer warpgroup
  // brings k, q, v and 𝒯 by TMA and forms P = tril(Q Kᵀ) on chip beside the register pass's
  // consumers), where the pass would not run beside wy_prep (more than 64 V-slices of 64). Against
  // wy_prep and the register pass: Recompute forward 1.128x / 1.122x at (8, 2048, 16), 1.079x /
  // 1.084x at (4, 4096, 16) (V-slices of 64: two CTAs a pair), 1.117x / 1.120x at (8, 4096, 32)
  // (two rounds); wy_prep 95.5 -> 71.8 us at shape 0 (no q read, no P written), the one kernel
  // 130.6 us where the pass took 131.9 (H100, 2026-12-06, docs/measurements/2026-12-06-s65/call1/).
  // At 32 pairs it ran at 0.99x the pass beside wy_prep, which stays there.
  // REWY_EXPERIMENTS=noffwdp keeps the split form; ffwdp takes the one kernel at every pair count,
  // GDN's too (its producer also scans the gates, scales P and stages the row gates), and ffwdpg
  // GDN's by DeltaNet's rule. Correct and slower, so not GDN's default: its Recompute forward 0.98x
  // at (8, 2048, 16), 0.89x at (4, 4096, 16), 0.97x at (8, 4096, 32) against wy_prep_fused4 and
  // its pass, though its 𝒯-only wy_prep took 81 us at shape 0 (fused4 about 101): the one kernel
  // 149 us there, its producer 7.5k cycles a chunk of which P (with the gates) 3.9k (H200,
  // 2026-12-06, docs/measurements/2026-12-06-s66/call1/).
  // ffwd: the one kernel with the solve on its producer (P, 𝒯 and β all on chip; no prep kernel):
  // 0.34-0.71x where it runs (its producer's solve is the chain: fwd_fused.cuh says what it measured).
  const bool ffwd_solve = experiment("ffwd", var);
  const bool pform = !ffwd_solve && (experiment("ffwdp", var) ||
                                     ((cfg.variant == Variant::DeltaNet || experiment("ffwdpg", var)) &&
                                      pairs * (d.V / 64) > 64 && !experiment("noffwdp", var)));
  // (GDN's: the P-forming form alone.)
  const bool has_form = cfg.variant == Variant::DeltaNet ? ffwd_solve || pform : cfg.variant == Variant::GDN && pform;
  const bool try_one_kernel = has_form && !save && d.K == 128 && d.V == 128 && std::min<int>(li.bv, int(d.V)) % 64 == 0;
  const bool save_if_wide = save && !cfg.prep_beside_save && cfg.variant == Variant::DeltaNet;
  bool beside = !try_one_kernel && cfg.prep_beside && (!save || cfg.prep_beside_save || save_if_wide) &&
                ct.num_chunks > 0 && !cfg.multicast_state_tiles && pairs * (d.V / 64) <= 64 && grids_side_by_side();
  if (beside) {
    const int64_t cap = channel_gate(cfg.variant) ? 32 : 64;
    int64_t w = cfg.state_slice ? li.bv : cut_first ? 64 : 16;
    while (!cfg.state_slice && w < d.V && pairs * (d.V / w) > cap) w *= 2;
    const int64_t slice = std::min(w, d.V);
    beside = 2 * pairs * (d.V / slice) <= cuda_sm_count(dev) && (!save_if_wide || slice >= 64);
    if (beside) li.bv = int(w);
  }
  const bool saved_rows = save_row_gates(cfg, d, s, li);
  if (saved_rows) beside = false;  // (the pass with GDN's saved row gates has no beside form)
  const int slice = std::min<int>(li.bv, int(d.V));
  // KDA's Recompute forward at V-slices of 64 and 128 forms E in the state pass from 𝒯 Diag(β),
  // K ⊙ Γ and v, as DeltaNet's fused pass does (state_fwd_body's KFUSE): wy_prep in channel slices
  // writes K ⊙ Γ in W's place and 𝒯 Diag(β), no U, and drops its W,U products (15% of its
  // cycles). At (8, 2048, 16) 0.4106 -> 0.3725 ms, at (8, 4096, 32) 1.5578 -> 1.4084 (1.10x and
  // 1.11x); beside wy_prep, where the pass is the chain and wy_prep's savings hide, it lost: (1,
  // 16384, 16) 0.5579 -> 0.6306, (1, 32768, 32) 1.8944 -> 2.0072 (H200, 2026-12-04, experiment
  // kfuse, docs/measurements/2026-12-04-s46/call2/), so not there. Config::fuse_kda_forward;
  // REWY_EXPERIMENTS=nokfuse times the unfused form too. GDN2 under REWY_EXPERIMENTS=g2fuse: its
  // wy_prep writes Y_W and Y_U (b and w do not factor out as row scales) and the pass forms
  // E = 𝒯 (Y_U − Y_W H) from them and 𝒯 (p.Tbeta pointing at p.Tinv: 𝒯 Diag(β) with β = 1).
  const bool fusable = !li.store_state && slice % 64 == 0 && li.prep_split && !beside;
  const bool kfuse = fusable && ((cfg.variant == Variant::KDA && cfg.fuse_kda_forward && !experiment("nokfuse", var)) ||
                                 (cfg.variant == Variant::GDN2 && experiment("g2fuse", var)));
  if (kfuse) g_fused_channel_forwards.fetch_add(1, std::memory_order_relaxed);
  const bool fused_scalar = fused_wu(var, true, li.store_state, slice);
  const bool fused = fused_scalar || kfuse;  // (kfuse: 𝒯 Diag(β) in p.Tbeta too)
  li.one_kernel = try_one_kernel && fused_scalar && !cut_first && !saved_rows && !li.store_state;
  li.one_kernel_pform = li.one_kernel && pform;
  const bool fused_rows = fused_gate(var, true, li.store_state, slice);  // (saved_rows: bound from sv)
  // What DeltaNet's and GDN's fused forward never reads is not allocated: W and U (wy_prep writes
  // 𝒯 Diag(β) in their place and the pass forms E from it, k and v) and, with the rows' gates, GDN's
  // Q̂ and K̄ (the pass scales q and k): four [B, T, H, 128] bf16 tensors for GDN, 1.07 GB at
  // (8, 4096, 32). (DeltaNet's Q̂ and K̄ are q and k.)
  allocate_intermediates(sv, cfg, d, ct, save, in, dev, s, !saved_rows && !fused_rows, !saved_rows && !fused_rows,
                         !fused_scalar && (!kfuse || cfg.variant == Variant::GDN2), !fused_scalar);
  if (saved_rows) sv.gate_rows = empty_gate_rows(ct, d.H, dev, s);
  r.o = Tensor::empty({d.B, d.T, d.H, d.V}, DType::BF16, dev, &s);
  if (cfg.output_final_state) r.ht = Tensor::empty({d.N, d.H, d.K, d.V}, DType::F32, dev, &s);

  DeltaParams p = base_params(d, in, ct, resolve_scale(cfg, d));
  bind_intermediates(p, sv);
  p.o = ptr<bf16_t>(r.o);
  p.ht = ptr<float>(r.ht);
  p.error_flag = error_words(dev.index).device;
  // The fused forward's 𝒯 Diag(β) (fused_wu) and GDN's row gates (fused_gate), read by the state
  // pass. Or kept for the backward: the unfused Recompute forward (DeltaNet and GDN at V-slices of
  // 16 and 32) whose backward's replay is fused and forms no W has its wy_prep write them too, as
  // the fused forward does, so that the backward runs no wy_replay. At (1, 16384, 16) (slices of
  // 32, the replay's 64) wy_replay_tb took 29.5 / 32.6 us and the backward after a forward that
  // kept them was 1.028x DeltaNet's and GDN's (H200, 2026-12-04, docs/measurements/2026-12-04-s43/call4/).
  Tensor Tbeta, gate_rows, row_betas;
  const bool keep_for_replay =
      !save && !fused && fuses_wu(var) && replay_forms_no_w(cfg, d, launch_info(cfg, d, s, Pass::Backward));
  // β on the rows (beta_on_rows): no 𝒯 Diag(β) at all; the passes read 𝒯 and take β on the rows, the backward's too.
  const bool tb_rows = (fused || keep_for_replay) && cfg.variant != Variant::GDN2 && beta_on_rows(var, d.N * d.H);
  if (kfuse && cfg.variant == Variant::GDN2) {
    p.Tbeta = p.Tinv;
  } else if (tb_rows) {
    if (fused) p.Tbeta = p.Tinv;  // (the unfused forward's wy_prep writes the rows' β alone for the replay)
    row_betas = bind_row_betas(p, ct, d.H, dev, s);
    Tbeta = sv.Tinv;
  } else if (fused || keep_for_replay) {
    Tbeta = Tensor::empty({d.B, d.T, d.H, kChunk}, DType::BF16, dev, &s);
    (fused ? p.Tbeta : p.Tbeta_kept) = ptr<bf16_t>(Tbeta);
  }
  if (fused_rows) gate_rows = bind_gate_rows(p, ct, d.H, dev, s);
  if (keep_for_replay) {
    if (cfg.variant == Variant::GDN) {
      gate_rows = empty_gate_rows(ct, d.H, dev, s);
      p.gate_rows_kept = ptr<float>(gate_rows);
    }
    g_unfused_forwards_keeping_tbeta.fetch_add(1, std::memory_order_relaxed);
  }
  const bool row_gates = fused_rows || saved_rows;
  tma::StateMaps maps;
  if (state_maps(maps, cfg, p, d, li, row_gates)) li.maps = &maps;
  Tensor prep_done;  // the flags of wy_prep beside the pass (zeroed before the pass's launch)
  Tensor beside_maps;  // KDA's and GDN2's beside pass: its tensor maps in device memory
  if (beside) {  // p.prep_done set: launch_forward puts wy_prep beside the pass
    const int64_t words = int64_t(ct.num_chunks) * d.H + kPrepWords;
    // REWY_TEST_STALL_PREP=1 (GPU test): wy_prep flags a second copy that the pass never reads.
    p.prep_stall_for_test = stall_prep_for_test();
    prep_done = Tensor::zeros({p.prep_stall_for_test ? 2 * words : words}, DType::I32, dev, &s);
    p.prep_done = ptr<unsigned>(prep_done);
    p.prep_items = reinterpret_cast<const int4*>(ct.prep_order.data_ptr());
    p.pass_wait_ns = pass_wait_ns();
    p.prep_lead = prep_lead(var);
    // KDA's and GDN2's pass beside wy_prep (state_fwd_body) takes its W, K̄, Q̂ and P by TMA boxes
    // (WgStateStage::prefetch_beside): Recompute forward at (2, 8192, 16) and (1, 32768, 32) KDA
    // 1.041x / 1.024x, GDN2 1.039x / 1.032x (means of two rounds; KDA 1.044x / 1.032x in three
    // more), every GPU test passing (H100, 2026-12-06, docs/measurements/2026-12-06-s63/call3b/).
    // REWY_EXPERIMENTS=notmabeside keeps cp.async.
    tma::StateMaps pass_maps;
    if (channel_gate(cfg.variant) && !experiment("notmabeside", var) && token_state_maps(pass_maps, p, d, row_gates)) {
      beside_maps = Tensor::empty({int64_t(sizeof(pass_maps) / 4)}, DType::I32, dev, &s);
      REWY_CHECK(reinterpret_cast<uintptr_t>(beside_maps.data_ptr()) % 64 == 0, "tensor maps need 64-byte alignment");
      CUDA_CHECK(cudaMemcpyAsync(beside_maps.data_ptr(), &pass_maps, sizeof(pass_maps), cudaMemcpyHostToDevice,
                                 static_cast<cudaStream_t>(s.handle)));
      p.beside_maps = reinterpret_cast<const tma::StateMaps*>(beside_maps.data_ptr());
    }
    p.prep_pass_ctas = int(pairs * (d.V / slice));
    p.prep_max_count = int(longest_chunks(d));
    p.beside_clock = beside_clock_begin(static_cast<cudaStream_t>(s.handle));
    g_prep_beside_forwards.fetch_add(1, std::memory_order_relaxed);
  }
  // The decay cut ahead (cut_first): its own params over the segment layout, the sequential
  // forward's kernels on the plan's word at value 1.
  DecayCutTensors cut;
  DeltaParams cut_p;
  LaunchInfo cut_li;
  if (cut_first && ct.num_chunks > 0) {
    REWY_CHECK(fused_scalar && fused_rows && !save && p.Tbeta && !saved_rows,
               "the decay cut ahead of the sequential forward: GDN's fused Recompute forward");
    const SegmentLayout sl = segment_layout(d, kChunk, seg.count);
    const ChunkTable cut_ct = make_chunk_table(sl.dims, dev, s);
    cut_p = p;  // the call's tensors (𝒯, P, 𝒯 Diag(β), e^γ, row gates, o, ht); the segments' layout
    cut_p.num_seqs = cut_ct.num_seqs;
    cut_p.seq_chunk = ptr<int>(cut_ct.seq_chunk);
    cut_p.prep_done = nullptr;
    cut_p.prep_items = nullptr;
    cut_p.prep_stall_for_test = false;
    cut = bind_decay_cut(cut_p, sl, d, r.ht, true, dev, s);
    p.path_flag = cut_p.path_flag;
    p.path_value = 1;
    cut_li = launch_info(cfg, sl.dims, s, Pass::Forward);
    cut_li.bv = int(d.V);  // (WARM: whole-V slices)
    g_segment_scan_forwards.fetch_add(1, std::memory_order_relaxed);
  }
  if (ct.num_chunks > 0)
    dispatch_variant(cfg.variant, [&](auto vc) {
      if (cut_first) launch_cut_first<decltype(vc)::value>(cut_p, cut_li);
      launch_forward<decltype(vc)::value>(p, li);
    });
  else if (r.ht.defined())  // no tokens: the state passes straight through
    r.ht.copy_from(in.h0.defined() ? in.h0 : Tensor::zeros(r.ht.shape(), DType::F32, dev, &s), &s);

  if (p.beside_clock && ct.num_chunks > 0)
    beside_clock_report(p.beside_clock, static_cast<cudaStream_t>(s.handle), p.prep_pass_ctas,
                        int64_t(ct.num_chunks) * d.H, p.prep_lead, p.prep_max_count, var, d);
  r.pending = std::make_shared<ForwardCheck>(dev.index, cfg.variant, static_cast<cudaStream_t>(s.handle));
  // (𝒯 Diag(β) kept only for DeltaNet and GDN, whose replay reads it: KDA's fused form's goes.)
  if (!save) keep_recompute_set(sv, fuses_wu(var) ? Tbeta : Tensor(), gate_rows, fuses_wu(var) ? row_betas : Tensor());
  return r;
}

// Config::backward_cut_segments: how many segments the backward's decay cut cuts each sequence
// into (1: none). Where it applies: GDN's Recompute backward at K = V = 128 whose replay is fused
// and forms no W and whose state_bwd forms Q̂ from q (state_bwd_wg's TBW and QRAW: V-slices of 64
// and 128), without the tiles' clusters. With count 0, the default: at up to 32 pairs whose longest
// sequence has at least 256 chunks, segment-head pairs near 128 (its two passes one after the
// other, one CTA an SM each), at least 8 chunks a segment; REWY_EXPERIMENTS=nodcut: none. Measured
// (H200, 2026-12-05, docs/measurements/2026-12-05-s53/call1/), the backward against the default
// passes at (2, 8192, 16), (1, 16384, 16), (1, 32768, 32): 0.996x / 1.198x / 1.120x at the
// benchmark's gates, 0.930x / 0.938x / 0.990x at weak decay (the plan and the empty launches):
// at 128 chunks the default's chains are short enough that the cut gains nothing, hence the
// 256-chunk bound (grad_chunk runs after the cut's passes, not beside them).
static int backward_cut_choice(const Config& cfg, const Dims& d, const Saved& sv, const DeltaParams& p,
                               const LaunchInfo& li, int64_t sms) {
  if (cfg.variant != Variant::GDN || sv.policy != Policy::Recompute || d.K != 128 || d.V != 128 || li.maps ||
      p.num_chunks == 0 || p.W || p.Qg || !p.Tbeta || !p.gate_rows || std::min<int>(li.bwd_bv, int(d.V)) % 64 != 0 ||
      cfg.backward_cut_segments == 1)
    return 1;
  const int64_t longest = longest_chunks(d);
  if (has_empty_sequence(d) || longest < 2) return 1;
  if (cfg.backward_cut_segments > 1) return cfg.backward_cut_segments;
  const int64_t pairs = d.N * d.H;
  if (experiment("nodcut", kGDN) || pairs == 0 || pairs > 32 || longest < 256) return 1;
  return int(segment_count(pairs, longest, 1, 128, sms));
}

// The backward's decay cut over sl: its params from the call's (p: every tensor, count and wait the
// default passes take), the plan's tensors in t, and p's default passes put on the plan's word at
// value 1. replay_slices, bwd_slices: the default passes' V-slices (the cut's count weights).
static BackwardCut bind_backward_cut(DeltaParams& p, const SegmentLayout& sl, const Dims& d, int replay_slices,
                                     int bwd_slices, DecayCutTensors& t, Device dev, const Stream& s) {
  const ChunkTable ct = make_chunk_table(sl.dims, dev, s);
  BackwardCut cut;
  DeltaParams& c = cut.p;
  c = p;
  c.num_seqs = ct.num_seqs;
  c.seq_chunk = ptr<int>(ct.seq_chunk);
  t.seq_chunk = ct.seq_chunk;  // (the layout cache alone would hold it after this returns)
  bind_cut_plan(c, sl, d, true, t, last_cut(true), dev, s);
  t.stop = Tensor::empty({sl.dims.N, d.H}, DType::I32, dev, &s);
  c.seg_stop = ptr<int>(t.stop);
  p.path_flag = c.path_flag;
  p.path_value = 1;
  cut.replay_weight = unsigned(replay_slices);
  cut.bwd_weight = unsigned(bwd_slices);
  g_decay_cut_backwards.fetch_add(1, std::memory_order_relaxed);
  return cut;
}

// GDN's Recompute backward with state_bwd on wgmma (V-slices of 64 and 128): state_bwd forms Q̂
// and its second term from q and the replay's row gates, so the replay writes neither (GDN's
// replay always writes the row gates: fused_gate holds for its state pass). wy_replay 151.8 ->
// 118.9 us, state_bwd 176.8 -> 155.9, the backward 1.056x / 1.023x / 1.010x at shapes 0, 3, 5
// (H200, 2026-12-01, `EXPERIMENTS=qraw2 bash scripts/device-experiments.sh`,
// docs/measurements/2026-12-01-s19/).
static bool q_from_row_gates(const Config& cfg, const LaunchInfo& li) {
  return cfg.variant == Variant::GDN && li.bwd_bv % 64 == 0;
}

Grads backward(const Config& cfg, const Inputs& in_raw, const Dims& d, const ForwardResult& fwd, const Tensor& dout,
               const Tensor& dht) {
  const Device dev = in_raw.q.device();
  require_supported_gpu(dev);
  DeviceGuard guard(dev);
  check_cuda_inputs(cfg, d, in_raw);
  REWY_CHECK(dout.dtype() == DType::BF16, "dout must be bf16 on CUDA, got {}", dtype_name(dout.dtype()));
  if (dht.defined()) REWY_CHECK(dht.dtype() == DType::F32, "dht must be f32 on CUDA, got {}", dtype_name(dht.dtype()));
  raise_earlier_errors(dev.index);
  const Stream s = Stream::default_for(dev);
  const Inputs in = contiguous_inputs(in_raw, s);
  const ChunkTable ct = make_chunk_table(d, dev, s);
  const int64_t B = d.B, T = d.T, H = d.H, K = d.K, V = d.V;
  const Saved& sv = fwd.saved;
  REWY_CHECK(sv.Tinv.defined() && sv.P.defined(),
             "backward: the forward result holds no saved 𝒯 and P (was it computed on CUDA?)");

  DeltaParams p = base_params(d, in, ct, resolve_scale(cfg, d));
  p.error_flag = error_words(dev.index).device;  // grad_chunk's kErrPassStall
  const Tensor dO = kernel_ready(dout, s);
  const Tensor dHT = kernel_ready(dht, s);
  Config as_saved = cfg;  // the policy the forward ran under decides the backward's launches
  as_saved.policy = sv.policy;
  LaunchInfo li = launch_info(as_saved, d, s, Pass::Backward);
  li.overlap_passes = sv.policy == Policy::Recompute && cfg.concurrent_state_passes;

  Saved replay;  // Recompute: the replay's intermediates
  const bool replay_tbeta = sv.policy == Policy::Recompute && replay_fused(cfg, d, li);
  const bool replay_no_w = sv.policy == Policy::Recompute && replay_forms_no_w(cfg, d, li);  // (implies replay_tbeta)
  // The forward kept its 𝒯 Diag(β) (Saved::Tbeta), e^γ and GDN's row gates beside it: the replay
  // reads them and runs no wy_replay.
  li.tbeta_saved = replay_no_w && sv.Tbeta.defined();
  // The replay's and state_bwd's CTAs (one per pair and V-slice each): side by side where both fit
  // at once (state_slices' paired rule), else the replay ends before most of state_bwd starts.
  // (The Save policy's branch below may narrow li.bwd_bv: read it after that.)
  const int64_t sms = cuda_sm_count(dev);
  auto pass_slices = [&] {  // (the replay's, state_bwd's)
    return std::pair<int, int>{sv.policy == Policy::Recompute ? int(V / std::min<int64_t>(li.bv, V)) : 0,
                               int(V / std::min<int64_t>(li.bwd_bv, V))};
  };
  auto passes_side_by_side = [&] {
    const auto [replay_slices, bwd_slices] = pass_slices();
    return li.overlap_passes && passes_fit_together(d.N * H, replay_slices, bwd_slices, sms);
  };
  // Config::dk_state_term: DeltaNet's state term of ∂K̄ (E ∂H⁺ᵀ) formed by state_bwd, which then
  // runs after the replay (it reads the replay's E) and writes it in place of ∂H⁺ for grad_chunk.
  // Auto: where the passes would not run side by side anyway.
  const bool dk_state_auto =
      cfg.dk_state_term == DkStateTerm::Auto && !experiment("nodkstate", kDeltaNet) && !passes_side_by_side();
  const bool dk_state = (cfg.dk_state_term == DkStateTerm::On || dk_state_auto) &&
                        rewy_dk_state_term(cfg.variant, int(d.K), int(d.V)) && replay_no_w &&
                        cfg.backward == BackwardAlgo::ReWY && li.bwd_bv >= d.V && li.grad_warps == 16;
  if (dk_state) {
    li.overlap_passes = false;
    g_dk_state_backwards.fetch_add(1, std::memory_order_relaxed);
  }
  REWY_CHECK(!li.tbeta_saved || (sv.gexp.defined() && (cfg.variant != Variant::GDN || sv.gate_rows.defined())),
             "backward: the Recompute forward result keeps 𝒯 Diag(β) without its e^γ or row gates");
  Tensor replay_Tbeta;
  if (sv.policy == Policy::Save) {
    REWY_CHECK(sv.W.defined() && sv.E.defined() && sv.gexp.defined() &&
                   ((sv.Qg.defined() && (sv.Qlo.defined() || !has_gate(cfg.variant))) || sv.gate_rows.defined()),
               "backward: the Save policy's forward result lacks its saved tensors");
    // Saved row gates serve state_bwd on wgmma alone (it forms Q̂ from q): a backward whose
    // configuration chose a narrower slice than its forward's takes 64.
    if (sv.gate_rows.defined() && std::min<int>(li.bwd_bv, int(d.V)) % 64 != 0) li.bwd_bv = 64;
  } else {
    replay.Tinv = sv.Tinv;
    replay.P = sv.P;
    allocate_intermediates(replay, cfg, d, ct, true, in, dev, s, !q_from_row_gates(cfg, li), true, !replay_tbeta,
                           !replay_no_w);
    if (replay_tbeta) replay_Tbeta = li.tbeta_saved ? sv.Tbeta : Tensor::empty({B, T, H, kChunk}, DType::BF16, dev, &s);
    if (li.tbeta_saved) replay.gexp = sv.gexp;
  }
  bind_intermediates(p, sv.policy == Policy::Save ? sv : replay);
  p.Tbeta = ptr<bf16_t>(replay_Tbeta);
  if (li.tbeta_saved && sv.row_betas.defined()) {  // the forward's 𝒯: β on the rows
    p.row_betas = ptr<float>(sv.row_betas);
    g_row_beta_backwards.fetch_add(1, std::memory_order_relaxed);
  }

  Grads gr;
  gr.dq = Tensor::empty({B, T, H, K}, DType::BF16, dev, &s);
  gr.dk = Tensor::empty({B, T, H, K}, DType::BF16, dev, &s);
  gr.dv = Tensor::empty({B, T, H, V}, DType::BF16, dev, &s);
  if (has_beta(cfg.variant)) gr.dbeta = Tensor::empty({B, T, H}, DType::BF16, dev, &s);
  if (has_gate(cfg.variant)) gr.dg = Tensor::empty(in.g.shape(), DType::F32, dev, &s);
  if (cfg.variant == Variant::GDN2) {
    gr.db = Tensor::empty({B, T, H, K}, DType::BF16, dev, &s);
    gr.dw = Tensor::empty({B, T, H, V}, DType::BF16, dev, &s);
  }
  if (in.h0.defined()) gr.dh0 = Tensor::empty({d.N, H, K, V}, DType::F32, dev, &s);
  Tensor dE = Tensor::empty({B, T, H, V}, DType::BF16, dev, &s);
  Tensor dHs = dk_state ? Tensor() : Tensor::empty({std::max(ct.num_chunks, 1), H, K, V}, DType::BF16, dev, &s);
  Tensor dKs = dk_state ? Tensor::empty({B, T, H, K}, DType::BF16, dev, &s) : Tensor();

  p.dout = ptr<bf16_t>(dO);
  p.dht = ptr<float>(dHT);
  p.dE = ptr<bf16_t>(dE);
  p.dHs = ptr<bf16_t>(dHs);
  p.dKs = ptr<bf16_t>(dKs);
  p.dq = ptr<bf16_t>(gr.dq);
  p.dk = ptr<bf16_t>(gr.dk);
  p.dv = ptr<bf16_t>(gr.dv);
  p.dbeta = ptr<bf16_t>(gr.dbeta);
  p.db = ptr<bf16_t>(gr.db);
  p.dw = ptr<bf16_t>(gr.dw);
  p.dg = ptr<float>(gr.dg);
  p.dh0 = ptr<float>(gr.dh0);
  // grad_chunk beside the state passes where their CTAs leave it at least 32 SMs (a quarter of
  // the H200's 132), where the two passes run side by side, and for the channel gates (their grad_chunk the
  // heavier part) everywhere. The whole backward, overlapped / after state_bwd: with 36 free
  // (Recompute, 16 pairs) 1.115x DeltaNet, 1.147x GDN, 1.121x KDA, 1.119x GDN2; with 68 (Save, 32
  // pairs) 1.14-1.21x (H200, 2026-12-01, bench_delta --serial-grad,
  // docs/measurements/2026-12-01-s20/call2-overlap/). With 4 free (chunks counted at the step's
  // end): side by side at 32 pairs 1.019-1.058x; at 64-256 pairs DeltaNet 0.971-0.991x, GDN
  // 0.959-1.013x, KDA 0.995-1.014x, GDN2 1.006-1.030x (H200, 2026-12-02, REWY_EXPERIMENTS=
  // countend,overlapall, docs/measurements/2026-12-02-s21/call2-sweeps/).
  const auto [replay_slices, bwd_slices] = pass_slices();
  const bool paired = passes_side_by_side();
  const int64_t pass_ctas = d.N * H * (paired ? replay_slices + bwd_slices : bwd_slices);
  li.overlap_grad = cfg.overlap_grad && ct.num_chunks > 0 && (sms - pass_ctas >= 32 || paired || channel_gate(cfg.variant));
  // Its counts (zeroed before the first kernel: a programmatic dependent's prerequisite is the
  // kernel just before it) and grad_chunk's chunk order.
  Tensor pass_done;
  if (li.overlap_grad) {
    pass_done = Tensor::zeros({2 * int64_t(ct.num_chunks) * H + 2}, DType::I32, dev, &s);
    p.pass_done = ptr<unsigned>(pass_done);
    p.grad_done = p.pass_done + 2 * int64_t(ct.num_chunks) * H;
    p.pass_stalled = p.grad_done + 1;
    p.pass_wait_ns = pass_wait_ns();
    p.replay_slices = replay_slices + (stall_passes_for_test() ? 1 : 0);  // a count that never comes
    p.bwd_slices = bwd_slices;
    p.grad_items = reinterpret_cast<const int4*>((paired ? ct.grad_paired : ct.grad_serial).data_ptr());
    g_overlapped_backwards.fetch_add(1, std::memory_order_relaxed);
  }

  // The replay's state pass (li.bv; state_bwd keeps its own loads): GDN's row gates (fused_gate)
  // from wy_replay, and the tensor maps of its shared tiles.
  Tensor gate_rows;
  const bool row_gates = sv.policy == Policy::Recompute && fused_gate(variant_id(cfg.variant), false, true, li.bv);
  if (row_gates) {
    if (li.tbeta_saved) p.gate_rows = ptr<float>(sv.gate_rows);  // (the forward's)
    else gate_rows = bind_gate_rows(p, ct, H, dev, s);
  }
  tma::StateMaps maps;
  if (sv.policy == Policy::Recompute && state_maps(maps, cfg, p, d, li, row_gates)) li.maps = &maps;
  // The decay cut of the two state passes (backward_cut_choice), its plan's word choosing them or
  // the default ones.
  const int cut_count = backward_cut_choice(cfg, d, sv, p, li, sms);
  DecayCutTensors cut_tensors;
  BackwardCut cut;
  if (cut_count > 1)
    cut = bind_backward_cut(p, segment_layout(d, kChunk, cut_count), d, replay_slices, bwd_slices, cut_tensors, dev, s);
  if (ct.num_chunks > 0) {
    dispatch_variant(cfg.variant, [&](auto vc) {
      constexpr int VAR = decltype(vc)::value;
      if (sv.policy == Policy::Recompute) launch_replay<VAR>(p, li, cut_count > 1 ? &cut : nullptr);
      launch_backward<VAR>(p, li, cfg.backward == BackwardAlgo::ReWY);
    });
  } else if (gr.dh0.defined()) {  // no tokens: the state passes straight through
    gr.dh0.copy_from(dHT.defined() ? dHT : Tensor::zeros(gr.dh0.shape(), DType::F32, dev, &s), &s);
  }
  fwd.verify();  // after the launches: waits only for the forward, which the stream ran first
  return gr;
}

void count_multicast_launch() { g_multicast_launches.fetch_add(1, std::memory_order_relaxed); }
int64_t multicast_state_launches() { return g_multicast_launches.load(std::memory_order_relaxed); }
void count_register_pass() { g_register_passes.fetch_add(1, std::memory_order_relaxed); }
int64_t register_pass_launches() { return g_register_passes.load(std::memory_order_relaxed); }
void count_one_kernel_forward() { g_one_kernel_forwards.fetch_add(1, std::memory_order_relaxed); }
int64_t one_kernel_forwards() { return g_one_kernel_forwards.load(std::memory_order_relaxed); }
int64_t overlapped_backwards() { return g_overlapped_backwards.load(std::memory_order_relaxed); }
int64_t prep_beside_forwards() { return g_prep_beside_forwards.load(std::memory_order_relaxed); }
int64_t unfused_forwards_keeping_tbeta() { return g_unfused_forwards_keeping_tbeta.load(std::memory_order_relaxed); }
int64_t fused_channel_forwards() { return g_fused_channel_forwards.load(std::memory_order_relaxed); }
int64_t segment_scan_forwards() { return g_segment_scan_forwards.load(std::memory_order_relaxed); }
int64_t two_pass_segment_forwards() { return g_two_pass_segment_forwards.load(std::memory_order_relaxed); }
int64_t decay_cut_forwards() { return g_decay_cut_forwards.load(std::memory_order_relaxed); }
int decay_cut_fell_back() { return fell_back(last_cut(false)); }
int64_t decay_cut_backwards() { return g_decay_cut_backwards.load(std::memory_order_relaxed); }
int64_t dk_state_backwards() { return g_dk_state_backwards.load(std::memory_order_relaxed); }
int64_t row_beta_backwards() { return g_row_beta_backwards.load(std::memory_order_relaxed); }
int decay_cut_backward_fell_back() { return fell_back(last_cut(true)); }

}  // namespace rewy::delta::cuda_impl
