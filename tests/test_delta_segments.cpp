// The segment scan (kernels/delta/segments.h) on the CPU chunk path in f64, through the public
// forward alone: each segment's end state from zero (L) and from the identity with v = 0 (Φ), the
// scan over segments, then the forward of every segment from its start reproduce the forward of
// the whole sequences, outputs and final states, for every variant. This is the identity the CUDA
// forward's segment scan (Config::scan_segments) computes with its own passes.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "kernels/delta/segments.h"
#include "test_delta_util.h"

namespace rewy::delta {
namespace {

Dims varlen_dims(const std::vector<int64_t>& lens) {
  Dims d;
  d.B = 1, d.H = 2, d.K = 16, d.V = 16;
  d.seq_start = {0};
  for (int64_t n : lens) d.seq_start.push_back(d.seq_start.back() + n);
  d.T = d.seq_start.back();
  d.N = int64_t(lens.size());
  return d;
}

TEST(SegmentLayout, CutsSequencesIntoWholeChunks) {
  // 401 tokens: 7 chunks (the last of 17 tokens); 192: 3; 40: 1; 0: none.
  const Dims d = varlen_dims({401, 192, 40, 0});
  const SegmentLayout sl = segment_layout(d, 64, 4);
  // 7 chunks in 4: 2, 2, 2, 1 (the earlier ones a chunk longer), the last ending at the sequence's end.
  const std::vector<int64_t> want = {0, 128, 256, 384, 401, 465, 529, 593, 633};
  EXPECT_EQ(sl.dims.seq_start, want);
  EXPECT_EQ(sl.seg_first, (std::vector<int64_t>{0, 4, 7, 8, 8}));
  EXPECT_EQ(sl.dims.N, 8);
  EXPECT_EQ(sl.dims.T, d.T);
  // The chunks are the same ones: their count and starts agree.
  EXPECT_EQ(sl.dims.num_chunks(64), d.num_chunks(64));
  // One segment a sequence: the layout itself, less the empty sequence.
  const SegmentLayout one = segment_layout(d, 64, 1);
  EXPECT_EQ(one.dims.seq_start, (std::vector<int64_t>{0, 401, 593, 633}));
  EXPECT_EQ(one.seg_first, (std::vector<int64_t>{0, 1, 2, 3, 3}));
  EXPECT_THROW(segment_layout(d, 64, 0), Error);
}

Tensor identity_states(int64_t N, int64_t H, int64_t K) {
  std::vector<double> v(size_t(N * H * K * K), 0.0);
  for (int64_t i = 0; i < N * H; ++i)
    for (int64_t r = 0; r < K; ++r) v[size_t((i * K + r) * K + r)] = 1.0;
  return Tensor::from_vector(v, {N, H, K, K}, DType::F64);
}

Tensor seqlens_tensor(const std::vector<int64_t>& starts) {
  return Tensor::from_vector(std::vector<double>(starts.begin(), starts.end()), {int64_t(starts.size())}, DType::I64);
}

class SegmentScan : public testing::TestWithParam<Variant> {};

TEST_P(SegmentScan, ReproducesTheWholeForward) {
  const Variant variant = GetParam();
  test::Case c;
  c.variant = variant;
  c.seqlens = {401, 192, 40};
  c.T = 633;
  c.H = 2, c.K = 16, c.V = 16;
  c.h0 = true;
  const uint64_t seed = test::fresh_seed();
  SCOPED_TRACE(c.str() + " seed " + std::to_string(seed));
  const test::Problem p = test::make_problem(c, seed);
  const Config cfg = test::config(variant, Impl::Chunk);
  const ForwardResult whole = forward(cfg, p.in);
  const Dims d = check_inputs(cfg, p.in);

  for (int segments : {2, 3, 5}) {
    const SegmentLayout sl = segment_layout(d, cfg.chunk, segments);
    ASSERT_GT(sl.dims.N, d.N);
    const Tensor cu = seqlens_tensor(sl.dims.seq_start);
    Inputs local = p.in;  // each segment from zero: L
    local.cu_seqlens = cu;
    local.h0 = Tensor();
    const Tensor L = forward(cfg, local).ht;
    Inputs homogeneous = local;  // from the identity with v = 0: Φ
    homogeneous.v = Tensor::zeros(p.in.v.shape(), DType::F64);
    homogeneous.h0 = identity_states(sl.dims.N, c.H, c.K);
    const Tensor Phi = forward(cfg, homogeneous).ht;
    Tensor H_in, ht;
    scan_segments(p.in.h0, L, Phi, sl.seg_first, H_in, &ht);
    Inputs from_starts = local;
    from_starts.h0 = H_in;
    const ForwardResult seg = forward(cfg, from_starts);
    const std::string what = std::to_string(segments) + " segments";
    EXPECT_LE(test::rel_err(seg.o, whole.o), 1e-12) << what;
    EXPECT_LE(test::rel_err(ht, whole.ht), 1e-12) << what;
    // The segments' own forwards from zero differ (the scan carries the earlier segments' states).
    EXPECT_GT(test::rel_err(forward(cfg, local).o, whole.o), 1e-3) << what;
  }
}

INSTANTIATE_TEST_SUITE_P(AllVariants, SegmentScan, testing::ValuesIn(test::all_variants()), test::variant_name);

TEST(SegmentScanErrors, NameTheMisShapedTensor) {
  const std::vector<int64_t> seg_first = {0, 2};
  const Tensor L = Tensor::zeros({2, 1, 4, 4}, DType::F64);
  Tensor H_in;
  EXPECT_THROW(scan_segments(Tensor(), L, Tensor::zeros({2, 1, 4, 3}, DType::F64), seg_first, H_in, nullptr), Error);
  EXPECT_THROW(scan_segments(Tensor::zeros({2, 1, 4, 4}, DType::F64), L, Tensor::zeros({2, 1, 4, 4}, DType::F64),
                             seg_first, H_in, nullptr),
               Error);  // h0 has one sequence's rows, not two
  EXPECT_THROW(scan_segments(Tensor(), Tensor::zeros({3, 1, 4, 4}, DType::F64), Tensor::zeros({3, 1, 4, 4}, DType::F64),
                             seg_first, H_in, nullptr),
               Error);  // three segments where seg_first has two
  try {
    scan_segments(Tensor(), L, Tensor::zeros({2, 1, 4, 3}, DType::F64), seg_first, H_in, nullptr);
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("Phi"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace rewy::delta
