#include "kernels/delta/segments.h"

#include <algorithm>

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

template <class F>
void scan_segments_as(const Tensor& h0, const Tensor& L, const Tensor& Phi, const std::vector<int64_t>& seg_first,
                      Tensor& H_in, Tensor* ht) {
  const int64_t N = int64_t(seg_first.size()) - 1, H = L.size(1), K = L.size(2), V = L.size(3);
  const F* const h0p = h0.defined() ? h0.data<F>() : nullptr;
  const F* const Lp = L.data<F>();
  const F* const Pp = Phi.data<F>();
  F* const Hp = H_in.data<F>();
  F* const htp = ht ? ht->data<F>() : nullptr;
  std::vector<F> S(size_t(K * V)), next(size_t(K * V));
  for (int64_t n = 0; n < N; ++n)
    for (int64_t h = 0; h < H; ++h) {
      const int64_t at0 = (n * H + h) * K * V;
      for (int64_t i = 0; i < K * V; ++i) S[size_t(i)] = h0p ? h0p[at0 + i] : F(0);
      for (int64_t s = seg_first[size_t(n)]; s < seg_first[size_t(n) + 1]; ++s) {
        const int64_t at = (s * H + h) * K * V;
        std::copy(S.begin(), S.end(), Hp + at);
        const F* const phi = Pp + (s * H + h) * K * K;
        for (int64_t r = 0; r < K; ++r)
          for (int64_t c = 0; c < V; ++c) {
            F acc = Lp[at + r * V + c];
            for (int64_t k = 0; k < K; ++k) acc += phi[r * K + k] * S[size_t(k * V + c)];
            next[size_t(r * V + c)] = acc;
          }
        std::swap(S, next);
      }
      if (htp) std::copy(S.begin(), S.end(), htp + at0);
    }
}

}  // namespace

void scan_segments(const Tensor& h0, const Tensor& L, const Tensor& Phi, const std::vector<int64_t>& seg_first,
                   Tensor& H_in, Tensor* ht) {
  REWY_CHECK(!seg_first.empty() && seg_first[0] == 0, "scan_segments: seg_first must start at 0");
  const int64_t N = int64_t(seg_first.size()) - 1, Nseg = seg_first.back();
  REWY_CHECK(L.dim() == 4 && L.size(0) == Nseg, "scan_segments: L must be [{}, H, K, V], got {}", Nseg, L.str());
  const int64_t H = L.size(1), K = L.size(2), V = L.size(3);
  const DType dt = L.dtype();
  REWY_CHECK(dt == DType::F32 || dt == DType::F64, "scan_segments: f32 or f64 on the CPU, got {}", L.str());
  auto expect = [&](const Tensor& t, const Shape& shape, const char* what) {
    REWY_CHECK(t.device().is_cpu() && t.dtype() == dt && t.shape() == shape && t.is_contiguous(),
               "scan_segments: {} must be a contiguous CPU {} tensor of shape [{}, {}, {}, {}], got {}", what,
               dtype_name(dt), shape[0], shape[1], shape[2], shape[3], t.str());
  };
  expect(L, {Nseg, H, K, V}, "L");
  expect(Phi, {Nseg, H, K, K}, "Phi");
  if (h0.defined()) expect(h0, {N, H, K, V}, "h0");
  for (size_t n = 0; n + 1 < seg_first.size(); ++n)
    REWY_CHECK(seg_first[n] <= seg_first[n + 1], "scan_segments: seg_first must not decrease");
  H_in = Tensor::empty({Nseg, H, K, V}, dt);
  if (ht) *ht = Tensor::empty({N, H, K, V}, dt);
  if (dt == DType::F64) scan_segments_as<double>(h0, L, Phi, seg_first, H_in, ht);
  else scan_segments_as<float>(h0, L, Phi, seg_first, H_in, ht);
}

}  // namespace rewy::delta
