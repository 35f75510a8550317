#include "kernels/delta/delta.h"

#include <cmath>

#include "kernels/delta/cpu/chunk.h"
#include "kernels/delta/cpu/naive.h"
#if REWY_WITH_CUDA
#include "kernels/delta/cuda/delta_cuda.h"
#endif

namespace rewy::delta {

Variant parse_variant(const std::string& s) {
  if (s == "deltanet") return Variant::DeltaNet;
  if (s == "gdn") return Variant::GDN;
  if (s == "kda") return Variant::KDA;
  if (s == "gdn2") return Variant::GDN2;
  REWY_FAIL("unknown op '{}': expected deltanet, gdn, kda or gdn2", s);
}
BackwardAlgo parse_backward(const std::string& s) {
  if (s == "rewy") return BackwardAlgo::ReWY;
  if (s == "baseline") return BackwardAlgo::Baseline;
  REWY_FAIL("unknown backward '{}': expected rewy or baseline", s);
}
Policy parse_policy(const std::string& s) {
  if (s == "recompute") return Policy::Recompute;
  if (s == "save") return Policy::Save;
  REWY_FAIL("unknown policy '{}': expected recompute or save", s);
}
Impl parse_impl(const std::string& s) {
  if (s == "naive") return Impl::Naive;
  if (s == "chunk") return Impl::Chunk;
  REWY_FAIL("unknown impl '{}': expected naive or chunk", s);
}
const char* name(Variant v) {
  switch (v) {
    case Variant::DeltaNet: return "deltanet";
    case Variant::GDN: return "gdn";
    case Variant::KDA: return "kda";
    case Variant::GDN2: return "gdn2";
  }
  return "?";
}
const char* name(BackwardAlgo b) { return b == BackwardAlgo::ReWY ? "rewy" : "baseline"; }
const char* name(Policy p) { return p == Policy::Recompute ? "recompute" : "save"; }
const char* name(Impl i) { return i == Impl::Naive ? "naive" : "chunk"; }


int64_t Dims::num_chunks(int C) const { return chunk_start(C).back(); }

std::vector<int64_t> Dims::chunk_start(int C) const {
  REWY_CHECK(C > 0, "chunk must be > 0, got {}", C);
  std::vector<int64_t> r(size_t(N + 1), 0);
  for (int64_t n = 0; n < N; ++n) r[n + 1] = r[n] + (seq_start[n + 1] - seq_start[n] + C - 1) / C;
  return r;
}

namespace {

std::string index_str(int64_t flat, const Shape& shape) {
  std::vector<int64_t> idx(shape.size());
  for (int d = int(shape.size()) - 1; d >= 0; --d) {
    idx[d] = flat % shape[d];
    flat /= shape[d];
  }
  return shape_str(idx);
}

// One device for every tensor; dtypes by device: CPU one of f32/f64 for all, CUDA bf16 operands
// with f32 gates and states (the CUDA kernels' contract).
void check_dtype_device(const Tensor& t, const char* name, const Tensor& q, bool f32_on_cuda) {
  if (!t.defined()) return;
  REWY_CHECK(t.device() == q.device(), "{} is on {} but q is on {}: all inputs must share one device", name,
             t.device().str(), q.device().str());
  if (q.device().is_cpu()) {
    REWY_CHECK(t.dtype() == DType::F32 || t.dtype() == DType::F64,
               "{} is {}: CPU delta-rule inputs must be f32 or f64 (Config::round_to_bf16 emulates bf16)", name,
               dtype_name(t.dtype()));
    REWY_CHECK(t.dtype() == q.dtype(), "{} is {} but q is {}: CPU inputs must share one dtype (f32 or f64)", name,
               dtype_name(t.dtype()), dtype_name(q.dtype()));
  } else {
    const DType want = f32_on_cuda ? DType::F32 : DType::BF16;
    REWY_CHECK(t.dtype() == want, "{} is {}, expected {} on CUDA", name, dtype_name(t.dtype()), dtype_name(want));
  }
}

// g is a log-decay: finite and <= 0, so G is non-increasing inside a chunk (the chunk path's
// exponent bounds, §6, rest on it). CPU only: reads the values.
void check_gate_values(const Tensor& g) {
  if (!g.defined()) return;
  const std::vector<double> v = g.to_vector();
  for (size_t i = 0; i < v.size(); ++i)
    REWY_CHECK(std::isfinite(v[i]) && v[i] <= 0.0, "g must be a finite log-decay <= 0, but g{} = {}",
               index_str(int64_t(i), g.shape()), v[i]);
}

}  // namespace

Dims check_inputs(const Config& cfg, const Inputs& in) {
  const auto slice_width = [](int w) { return w == 0 || w == 16 || w == 32 || w == 64 || w == 128; };
  REWY_CHECK(slice_width(cfg.state_slice), "Config::state_slice must be 0 (automatic), 16, 32, 64 or 128, got {}",
             cfg.state_slice);
  REWY_CHECK(slice_width(cfg.state_bwd_slice),
             "Config::state_bwd_slice must be 0 (automatic), 16, 32, 64 or 128, got {}", cfg.state_bwd_slice);
  REWY_CHECK(cfg.grad_warps == 0 || cfg.grad_warps == 8 || cfg.grad_warps == 16,
             "Config::grad_warps must be 0 (automatic), 8 or 16, got {}", cfg.grad_warps);
  REWY_CHECK(cfg.prep_warps == 0 || cfg.prep_warps == 8 || cfg.prep_warps == 16,
             "Config::prep_warps must be 0 (automatic), 8 or 16, got {}", cfg.prep_warps);
  REWY_CHECK(cfg.replay_warps == 0 || cfg.replay_warps == 8 || cfg.replay_warps == 16,
             "Config::replay_warps must be 0 (automatic), 8 or 16, got {}", cfg.replay_warps);
  REWY_CHECK(cfg.scan_segments >= 0, "Config::scan_segments must be 0 (by rule), 1 (none) or a count, got {}",
             cfg.scan_segments);
  REWY_CHECK(cfg.cut_fallback_segments >= 0,
             "Config::cut_fallback_segments must be 0 (none), 1 (the sequential forward) or a count, got {}",
             cfg.cut_fallback_segments);
  REWY_CHECK(cfg.backward_cut_segments >= 0,
             "Config::backward_cut_segments must be 0 (by rule), 1 (none) or a count, got {}", cfg.backward_cut_segments);
  const char* op = name(cfg.variant);
  REWY_CHECK(cfg.chunk > 0, "chunk must be > 0, got {}", cfg.chunk);
  REWY_CHECK(std::isfinite(cfg.scale), "scale must be finite (0 means 1/sqrt(K)), got {}", cfg.scale);
  REWY_CHECK(in.q.defined(), "q is missing (expected shape [B, T, H, K])");
  REWY_CHECK(in.q.dim() == 4, "q has shape {}, expected [B, T, H, K]", shape_str(in.q.shape()));
  Dims d;
  d.B = in.q.size(0), d.T = in.q.size(1), d.H = in.q.size(2), d.K = in.q.size(3);
  REWY_CHECK(d.B > 0 && d.T > 0 && d.H > 0 && d.K > 0, "q has shape {}: every size must be >= 1",
             shape_str(in.q.shape()));
  const std::string bth = fmt::format("{}, {}, {}", d.B, d.T, d.H);
  REWY_CHECK(in.v.defined(), "v is missing (expected shape [{}, V])", bth);
  REWY_CHECK(in.v.dim() == 4 && in.v.size(0) == d.B && in.v.size(1) == d.T && in.v.size(2) == d.H && in.v.size(3) > 0,
             "v has shape {}, expected [{}, V] with V >= 1", shape_str(in.v.shape()), bth);
  d.V = in.v.size(3);
  check_shape(in.k, in.q.shape(), "k");

  const Shape bth_shape{d.B, d.T, d.H}, bthk{d.B, d.T, d.H, d.K}, bthv{d.B, d.T, d.H, d.V};
  if (has_beta(cfg.variant)) {
    check_shape(in.beta, bth_shape, "beta");
    REWY_CHECK(!in.b.defined() && !in.w.defined(), "{} takes beta, not b and w", op);
  } else {
    REWY_CHECK(!in.beta.defined(), "{} takes b and w, not beta", op);
    check_shape(in.b, bthk, "b");
    check_shape(in.w, bthv, "w");
  }
  if (has_gate(cfg.variant))
    check_shape(in.g, channel_gate(cfg.variant) ? bthk : bth_shape, "g");
  else
    REWY_CHECK(!in.g.defined(), "{} takes no gate g", op);

  if (in.cu_seqlens.defined()) {
    const Tensor& cu = in.cu_seqlens;
    REWY_CHECK(cu.dtype() == DType::I32 || cu.dtype() == DType::I64, "cu_seqlens is {}, expected i32 or i64",
               dtype_name(cu.dtype()));
    REWY_CHECK(cu.dim() == 1 && cu.size(0) >= 2, "cu_seqlens has shape {}, expected [N + 1] with N >= 1",
               shape_str(cu.shape()));
    REWY_CHECK(cu.device().is_cpu() || cu.device() == in.q.device(), "cu_seqlens is on {}, expected cpu or {}",
               cu.device().str(), in.q.device().str());
    REWY_CHECK(d.B == 1, "cu_seqlens needs B == 1 (sequences packed along T), but q has B = {}", d.B);
    const std::vector<double> c = cu.to_vector();
    d.N = int64_t(c.size()) - 1;
    REWY_CHECK(c.front() == 0 && c.back() == double(d.T), "cu_seqlens must run from 0 to T = {}, got {} .. {}", d.T,
               int64_t(c.front()), int64_t(c.back()));
    for (size_t i = 0; i < c.size(); ++i) {
      REWY_CHECK(i == 0 || c[i] >= c[i - 1], "cu_seqlens must be non-decreasing, but cu_seqlens[{}] = {} < {}", i,
                 int64_t(c[i]), int64_t(c[i - 1]));
      d.seq_start.push_back(int64_t(c[i]));
    }
  } else {
    d.N = d.B;
    for (int64_t n = 0; n <= d.B; ++n) d.seq_start.push_back(n * d.T);
  }
  if (in.h0.defined()) check_shape(in.h0, {d.N, d.H, d.K, d.V}, "h0");

  check_dtype_device(in.q, "q", in.q, false);
  check_dtype_device(in.k, "k", in.q, false);
  check_dtype_device(in.v, "v", in.q, false);
  check_dtype_device(in.beta, "beta", in.q, false);
  check_dtype_device(in.b, "b", in.q, false);
  check_dtype_device(in.w, "w", in.q, false);
  check_dtype_device(in.g, "g", in.q, true);
  check_dtype_device(in.h0, "h0", in.q, true);
  if (in.q.device().is_cpu() && cfg.round_to_bf16)
    REWY_CHECK(cfg.impl == Impl::Chunk && in.q.dtype() == DType::F32,
               "round_to_bf16 needs the chunk implementation with f32 inputs (got {} with {})", name(cfg.impl),
               dtype_name(in.q.dtype()));
  return d;
}

void check_backward_inputs(const Config& cfg, const Inputs& in, const Dims& dims, const ForwardResult& fwd,
                           const Tensor& dout, const Tensor& dht) {
  check_shape(dout, in.v.shape(), "dout");
  check_dtype_device(dout, "dout", in.q, false);
  if (dht.defined()) {
    check_shape(dht, {dims.N, dims.H, dims.K, dims.V}, "dht");
    check_dtype_device(dht, "dht", in.q, true);
  }
  if (!in.q.device().is_cpu() || cfg.impl != Impl::Chunk) return;  // the CUDA side owns its Saved
  const Saved& s = fwd.saved;
  REWY_CHECK(s.policy == cfg.policy, "fwd was saved with policy {} but the backward runs with policy {}",
             name(s.policy), name(cfg.policy));
  const Shape bthc{dims.B, dims.T, dims.H, int64_t(cfg.chunk)};
  auto saved = [&](const Tensor& t, const Shape& shape, const char* what) {
    REWY_CHECK(t.defined(), "saved.{} is missing: pass the ForwardResult of forward() with the same config", what);
    check_shape(t, shape, what);
    check_dtype_device(t, what, in.q, false);
  };
  saved(s.Tinv, bthc, "Tinv");
  if (has_gate(cfg.variant)) saved(s.G, in.g.shape(), "G");
  if (cfg.policy == Policy::Save) {
    saved(s.W, in.k.shape(), "W");
    saved(s.U, in.v.shape(), "U");
    saved(s.E, in.v.shape(), "E");
    saved(s.P, bthc, "P");
    saved(s.Hs, {dims.num_chunks(cfg.chunk), dims.H, dims.K, dims.V}, "Hs");
  }
}

ForwardResult forward(const Config& cfg, const Inputs& in) {
  const Dims dims = check_inputs(cfg, in);
  if (in.q.device().is_cuda()) {
#if REWY_WITH_CUDA
    return cuda_impl::forward(cfg, in, dims);
#else
    REWY_FAIL("delta-rule inputs are on {} but rewy was built without CUDA", in.q.device().str());
#endif
  }
  check_gate_values(in.g);
  if (cfg.impl == Impl::Naive) return cpu::naive_forward(cfg, in, dims);
  if (in.q.dtype() == DType::F64) return cpu::chunk_forward<double>(cfg, in, dims);
  return cpu::chunk_forward<float>(cfg, in, dims);
}

Grads backward(const Config& cfg, const Inputs& in, const ForwardResult& fwd, const Tensor& dout,
               const Tensor& dht) {
  const Dims dims = check_inputs(cfg, in);
  check_backward_inputs(cfg, in, dims, fwd, dout, dht);
  if (in.q.device().is_cuda()) {
#if REWY_WITH_CUDA
    return cuda_impl::backward(cfg, in, dims, fwd, dout, dht);
#else
    REWY_FAIL("delta-rule inputs are on {} but rewy was built without CUDA", in.q.device().str());
#endif
  }
  check_gate_values(in.g);
  if (cfg.impl == Impl::Naive) return cpu::naive_backward(cfg, in, dims, dout, dht);
  if (in.q.dtype() == DType::F64) return cpu::chunk_backward<double>(cfg, in, dims, fwd, dout, dht);
  return cpu::chunk_backward<float>(cfg, in, dims, fwd, dout, dht);
}

int64_t multicast_state_launches() {
#if REWY_WITH_CUDA
  return cuda_impl::multicast_state_launches();
#else
  return 0;
#endif
}

int64_t register_pass_launches() {
#if REWY_WITH_CUDA
  return cuda_impl::register_pass_launches();
#else
  return 0;
#endif
}

int64_t one_kernel_forwards() {
#if REWY_WITH_CUDA
  return cuda_impl::one_kernel_forwards();
#else
  return 0;
#endif
}

int64_t overlapped_backwards() {
#if REWY_WITH_CUDA
  return cuda_impl::overlapped_backwards();
#else
  return 0;
#endif
}

int64_t prep_beside_forwards() {
#if REWY_WITH_CUDA
  return cuda_impl::prep_beside_forwards();
#else
  return 0;
#endif
}

int64_t unfused_forwards_keeping_tbeta() {
#if REWY_WITH_CUDA
  return cuda_impl::unfused_forwards_keeping_tbeta();
#else
  return 0;
#endif
}

int64_t fused_channel_forwards() {
#if REWY_WITH_CUDA
  return cuda_impl::fused_channel_forwards();
#else
  return 0;
#endif
}

int64_t segment_scan_forwards() {
#if REWY_WITH_CUDA
  return cuda_impl::segment_scan_forwards();
#else
  return 0;
#endif
}

int64_t two_pass_segment_forwards() {
#if REWY_WITH_CUDA
  return cuda_impl::two_pass_segment_forwards();
#else
  return 0;
#endif
}

int64_t decay_cut_forwards() {
#if REWY_WITH_CUDA
  return cuda_impl::decay_cut_forwards();
#else
  return 0;
#endif
}

int decay_cut_fell_back() {
#if REWY_WITH_CUDA
  return cuda_impl::decay_cut_fell_back();
#else
  return -1;
#endif
}

int64_t dk_state_backwards() {
#if REWY_WITH_CUDA
  return cuda_impl::dk_state_backwards();
#else
  return 0;
#endif
}

int64_t row_beta_backwards() {
#if REWY_WITH_CUDA
  return cuda_impl::row_beta_backwards();
#else
  return 0;
#endif
}

int64_t decay_cut_backwards() {
#if REWY_WITH_CUDA
  return cuda_impl::decay_cut_backwards();
#else
  return 0;
#endif
}

int decay_cut_backward_fell_back() {
#if REWY_WITH_CUDA
  return cuda_impl::decay_cut_backward_fell_back();
#else
  return -1;
#endif
}

}  // namespace rewy::delta
