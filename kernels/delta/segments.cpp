#include "kernels/delta/segments.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace rewy::delta {

SegmentLayout segment_layout(const Dims& d, int chunk, int segments) {
  REWY_CHECK(chunk > 0, "segment_layout: chunk must be > 0, got {}", chunk);
  REWY_CHECK(segments >= 1, "segment_layout: segments must be >= 1, got {}", segments);
  SegmentLayout sl;
  sl.dims = d;
  sl.dims.seq_start.assign(1, d.seq_start.empty() ? 0 : d.seq_start[0]);
  sl.seg_first.assign(1, 0);
  for (int64_t n = 0; n < d.N; ++n) {
    const int64_t t0 = d.seq_start[n], t1 = d.seq_start[n + 1];
    const int64_t chunks = (t1 - t0 + chunk - 1) / chunk;
    const int64_t pieces = std::min<int64_t>(segments, chunks);
    int64_t at = t0;
    for (int64_t i = 0; i < pieces; ++i) {
      const int64_t len = chunks / pieces + (i < chunks % pieces ? 1 : 0);  // in chunks
      at = i + 1 == pieces ? t1 : at + len * chunk;
      sl.dims.seq_start.push_back(at);
    }
    sl.seg_first.push_back(sl.seg_first.back() + pieces);
  }
  sl.dims.N = sl.seg_first.back();
  return sl;
}

namespace {

// Both scans: per (sequence, head), X from `first` (the sequence's h0 or dht; zeros where
// undefined), then over its segments (REVERSE: last first) out[s] = X, X ← Φ_s X + local_s
// (REVERSE: Φ_sᵀ X); `last` gets X after them.
template <class F, bool REVERSE>
void scan_as(const Tensor& first, const Tensor& local, const Tensor& Phi, const std::vector<int64_t>& seg_first,
             Tensor& out, Tensor* last) {
  const int64_t N = int64_t(seg_first.size()) - 1, H = local.size(1), K = local.size(2), V = local.size(3);
  const F* const firstp = first.defined() ? first.data<F>() : nullptr;
  const F* const Lp = local.data<F>();
  const F* const Pp = Phi.data<F>();
  F* const outp = out.data<F>();
  F* const lastp = last ? last->data<F>() : nullptr;
  std::vector<F> X(size_t(K * V)), next(size_t(K * V));
  for (int64_t n = 0; n < N; ++n)
    for (int64_t h = 0; h < H; ++h) {
      const int64_t at0 = (n * H + h) * K * V;
      for (int64_t i = 0; i < K * V; ++i) X[size_t(i)] = firstp ? firstp[at0 + i] : F(0);
      const int64_t s0 = seg_first[size_t(n)], s1 = seg_first[size_t(n) + 1];
      for (int64_t i = 0; i < s1 - s0; ++i) {
        const int64_t s = REVERSE ? s1 - 1 - i : s0 + i;
        const int64_t at = (s * H + h) * K * V;
        std::copy(X.begin(), X.end(), outp + at);
        const F* const phi = Pp + (s * H + h) * K * K;
        for (int64_t r = 0; r < K; ++r)
          for (int64_t c = 0; c < V; ++c) {
            F acc = Lp[at + r * V + c];
            for (int64_t k = 0; k < K; ++k) acc += (REVERSE ? phi[k * K + r] : phi[r * K + k]) * X[size_t(k * V + c)];
            next[size_t(r * V + c)] = acc;
          }
        std::swap(X, next);
      }
      if (lastp) std::copy(X.begin(), X.end(), lastp + at0);
    }
}

// A four-dimensional operand of the segment scan's CPU twins: contiguous, on the CPU, of dtype dt and shape.
void expect_operand(const char* who, const Tensor& t, DType dt, const Shape& shape, const char* what) {
  REWY_CHECK(t.device().is_cpu() && t.dtype() == dt && t.shape() == shape && t.is_contiguous(),
             "{}: {} must be a contiguous CPU {} tensor of shape [{}, {}, {}, {}], got {}", who, what, dtype_name(dt),
             shape[0], shape[1], shape[2], shape[3], t.str());
}

// The shapes both scans take: L or M [Nseg, H, K, V], Phi [Nseg, H, K, K], the sequences' state
// (h0 or dht) [N, H, K, V] if defined; CPU, contiguous, one float dtype.
void check_scan_operands(const char* who, const Tensor& seq_state, const char* seq_name, const Tensor& local,
                         const char* local_name, const Tensor& Phi, const std::vector<int64_t>& seg_first) {
  REWY_CHECK(!seg_first.empty() && seg_first[0] == 0, "{}: seg_first must start at 0", who);
  for (size_t n = 0; n + 1 < seg_first.size(); ++n)
    REWY_CHECK(seg_first[n] <= seg_first[n + 1], "{}: seg_first must not decrease", who);
  const int64_t N = int64_t(seg_first.size()) - 1, Nseg = seg_first.back();
  REWY_CHECK(local.dim() == 4 && local.size(0) == Nseg, "{}: {} must be [{}, H, K, V], got {}", who, local_name, Nseg,
             local.str());
  const int64_t H = local.size(1), K = local.size(2), V = local.size(3);
  const DType dt = local.dtype();
  REWY_CHECK(dt == DType::F32 || dt == DType::F64, "{}: f32 or f64 on the CPU, got {}", who, local.str());
  expect_operand(who, local, dt, {Nseg, H, K, V}, local_name);
  expect_operand(who, Phi, dt, {Nseg, H, K, K}, "Phi");
  if (seq_state.defined()) expect_operand(who, seq_state, dt, {N, H, K, V}, seq_name);
}

}  // namespace

void scan_segments_reverse(const Tensor& dht, const Tensor& M, const Tensor& Phi, const std::vector<int64_t>& seg_first,
                           Tensor& dH_out, Tensor* dh0) {
  check_scan_operands("scan_segments_reverse", dht, "dht", M, "M", Phi, seg_first);
  const int64_t N = int64_t(seg_first.size()) - 1, H = M.size(1), K = M.size(2), V = M.size(3);
  dH_out = Tensor::empty({seg_first.back(), H, K, V}, M.dtype());
  if (dh0) *dh0 = Tensor::empty({N, H, K, V}, M.dtype());
  if (M.dtype() == DType::F64) scan_as<double, true>(dht, M, Phi, seg_first, dH_out, dh0);
  else scan_as<float, true>(dht, M, Phi, seg_first, dH_out, dh0);
}

void scan_segments(const Tensor& h0, const Tensor& L, const Tensor& Phi, const std::vector<int64_t>& seg_first,
                   Tensor& H_in, Tensor* ht) {
  check_scan_operands("scan_segments", h0, "h0", L, "L", Phi, seg_first);
  const int64_t N = int64_t(seg_first.size()) - 1, H = L.size(1), K = L.size(2), V = L.size(3);
  const DType dt = L.dtype();
  H_in = Tensor::empty({seg_first.back(), H, K, V}, dt);
  if (ht) *ht = Tensor::empty({N, H, K, V}, dt);
  if (dt == DType::F64) scan_as<double, false>(h0, L, Phi, seg_first, H_in, ht);
  else scan_as<float, false>(h0, L, Phi, seg_first, H_in, ht);
}

namespace {
template <class F>
void add_corrections_as(Tensor& o, const Tensor& Y, const Tensor& H_in, const SegmentLayout& sl) {
  const int64_t H = o.size(2), V = o.size(3), K = Y.size(3);
  F* const op = o.data<F>();
  const F* const yp = Y.data<F>();
  const F* const hp = H_in.data<F>();
  for (int64_t seg = 0; seg < sl.dims.N; ++seg)
    for (int64_t t = sl.dims.seq_start[seg]; t < sl.dims.seq_start[seg + 1]; ++t)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t v = 0; v < V; ++v) {
          F acc = 0;
          for (int64_t k = 0; k < K; ++k) acc += yp[(t * H + h) * K + k] * hp[((seg * H + h) * K + k) * V + v];
          op[(t * H + h) * V + v] += acc;
        }
}
}  // namespace

std::vector<double> chunk_decay_bounds(const Tensor& k, const Tensor& beta, const Tensor& g, const Dims& d, int chunk) {
  const char* who = "chunk_decay_bounds";
  REWY_CHECK(chunk > 0, "{}: chunk must be > 0, got {}", who, chunk);
  const int64_t B = d.B, T = d.T, H = d.H, K = d.K;
  auto cpu_f64 = [&](const Tensor& t, const Shape& shape, const char* what) {
    REWY_CHECK(t.device().is_cpu() && (t.dtype() == DType::F32 || t.dtype() == DType::F64) && t.shape() == shape,
               "{}: {} must be a CPU f32 or f64 tensor of shape [{}], got {}", who, what, fmt::join(shape, ", "), t.str());
    return t.to(DType::F64);
  };
  const Tensor kd = cpu_f64(k, {B, T, H, K}, "k"), bd = cpu_f64(beta, {B, T, H}, "beta");
  const Tensor gd = g.defined() ? cpu_f64(g, {B, T, H}, "g") : Tensor();
  const double* const kp = kd.data<double>();
  const double* const bp = bd.data<double>();
  const double* const gp = gd.defined() ? gd.data<double>() : nullptr;
  std::vector<double> bounds;
  bounds.reserve(size_t(d.num_chunks(chunk) * H));
  for (int64_t n = 0; n < d.N; ++n)
    for (int64_t t0 = d.seq_start[n]; t0 < d.seq_start[n + 1]; t0 += chunk) {
      const int64_t t1 = std::min<int64_t>(t0 + chunk, d.seq_start[n + 1]);
      for (int64_t h = 0; h < H; ++h) {
        double sum = 0;
        for (int64_t t = t0; t < t1; ++t) {
          double kk = 0;
          for (int64_t i = 0; i < K; ++i) kk += kp[(t * H + h) * K + i] * kp[(t * H + h) * K + i];
          sum += (gp ? gp[t * H + h] : 0.0) + std::log(std::max(1.0, std::abs(1.0 - bp[t * H + h] * kk)));
        }
        bounds.push_back(sum);
      }
    }
  return bounds;
}

namespace {

// decay_cut_starts (back_in_time) and decay_cut_ends: for each segment and head, the chunks next
// to the segment walked away from it, nearest first, no more of them than the segment is long (nor
// than max_reach where it is above 0) and none outside its sequence, until their bounds sum to log_tolerance: back in time, the
// segment starts at the chunk reached; forward, it ends after it. Where none reaches it: the
// sequence's edge if the segment is at it (from h0, from dht), else the neighbour's state
// (kLookBack, kLookForward).
std::vector<int64_t> decay_cut_plan(const std::vector<double>& bounds, const SegmentLayout& sl, int64_t H, int chunk,
                                    double log_tolerance, bool back_in_time, int64_t max_reach, const char* who) {
  const std::vector<int64_t> first_chunk = sl.dims.chunk_start(chunk);  // each segment's first chunk
  REWY_CHECK(int64_t(bounds.size()) == first_chunk.back() * H, "{}: {} bounds for {} chunks of {} heads", who,
             bounds.size(), first_chunk.back(), H);
  static_assert(kLookBack == kLookForward, "one code for the neighbour's state");
  std::vector<int64_t> plan(size_t(sl.dims.N * H));
  for (size_t n = 0; n + 1 < sl.seg_first.size(); ++n)
    for (int64_t s = sl.seg_first[n]; s < sl.seg_first[n + 1]; ++s) {
      const int64_t seq0 = first_chunk[size_t(sl.seg_first[n])], seq1 = first_chunk[size_t(sl.seg_first[n + 1])];
      const int64_t c0 = first_chunk[size_t(s)], c1 = first_chunk[size_t(s) + 1];
      const int64_t edge = back_in_time ? seq0 : seq1, own_edge = back_in_time ? c0 : c1;
      int64_t reach = std::min(c1 - c0, back_in_time ? c0 - seq0 : seq1 - c1);  // chunks walked at most
      if (max_reach > 0) reach = std::min(reach, max_reach);
      for (int64_t h = 0; h < H; ++h) {
        int64_t at = own_edge == edge ? edge : kLookBack;
        double sum = 0;
        for (int64_t i = 0; i < reach; ++i) {
          const int64_t c = back_in_time ? c0 - 1 - i : c1 + i;
          sum += bounds[size_t(c * H + h)];
          if (sum <= log_tolerance) {
            at = back_in_time ? c : c + 1;
            break;
          }
        }
        plan[size_t(s * H + h)] = at;
      }
    }
  return plan;
}

}  // namespace

std::vector<int64_t> decay_cut_starts(const std::vector<double>& bounds, const SegmentLayout& sl, int64_t H, int chunk,
                                      double log_tolerance, int64_t max_reach) {
  return decay_cut_plan(bounds, sl, H, chunk, log_tolerance, true, max_reach, "decay_cut_starts");
}

std::vector<int64_t> decay_cut_ends(const std::vector<double>& bounds, const SegmentLayout& sl, int64_t H, int chunk,
                                    double log_tolerance, int64_t max_reach) {
  return decay_cut_plan(bounds, sl, H, chunk, log_tolerance, false, max_reach, "decay_cut_ends");
}

void add_segment_corrections(Tensor& o, const Tensor& Y, const Tensor& H_in, const SegmentLayout& sl) {
  const char* who = "add_segment_corrections";
  REWY_CHECK(o.dim() == 4, "{}: o must be [B, T, H, V], got {}", who, o.str());
  const int64_t B = o.size(0), T = o.size(1), H = o.size(2), V = o.size(3);
  const DType dt = o.dtype();
  REWY_CHECK(dt == DType::F32 || dt == DType::F64, "{}: f32 or f64 on the CPU, got {}", who, o.str());
  REWY_CHECK(int64_t(sl.dims.seq_start.size()) == sl.dims.N + 1 && sl.dims.seq_start.back() <= B * T,
             "{}: the layout's {} segments, ending at token {}, do not fit o's {} tokens", who, sl.dims.N,
             sl.dims.seq_start.empty() ? 0 : sl.dims.seq_start.back(), B * T);
  REWY_CHECK(Y.dim() == 4, "{}: Y must be [{}, {}, {}, K], got {}", who, B, T, H, Y.str());
  const int64_t K = Y.size(3);
  expect_operand(who, o, dt, {B, T, H, V}, "o");
  expect_operand(who, Y, dt, {B, T, H, K}, "Y");
  expect_operand(who, H_in, dt, {sl.dims.N, H, K, V}, "H_in");
  if (dt == DType::F64) add_corrections_as<double>(o, Y, H_in, sl);
  else add_corrections_as<float>(o, Y, H_in, sl);
}

}  // namespace rewy::delta
