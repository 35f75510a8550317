// The segment scan (kernels/delta/segments.h) on the CPU chunk path in f64, through the public
// forward and backward alone: each segment's end state from zero (L) and from the identity with
// v = 0 (Φ), the scan over segments, then the forward of every segment from its start reproduce the
// forward of the whole sequences, outputs and final states, for every variant; and the reverse scan
// with Φᵀ the backward's gradients. The forward's is the identity the CUDA forward's segment scan
// (Config::scan_segments) computes with its own passes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include "kernels/delta/random_inputs.h"
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

// Three ragged sequences (7, 3 and 1 chunks) with an initial state and a final state's gradient.
test::Case segment_case(Variant variant) {
  test::Case c;
  c.variant = variant;
  c.seqlens = {401, 192, 40};
  c.T = 633;
  c.H = 2, c.K = 16, c.V = 16;
  c.h0 = true, c.dht = true;
  return c;
}

// [Nseg, H, K, X]: `first`'s state [N, H, K, X] for each sequence's first segment, `other`'s
// [Nseg, H, K, X] elsewhere (f64).
Tensor per_segment_states(const std::vector<int64_t>& seg_first, const Tensor& first, const Tensor& other) {
  const int64_t nseg = seg_first.back(), block = other.numel() / std::max<int64_t>(nseg, 1);
  Tensor out = other.clone();
  double* const op = out.data<double>();
  const double* const fp = first.data<double>();
  for (size_t n = 0; n + 1 < seg_first.size(); ++n)
    if (seg_first[n] < seg_first[n + 1])
      std::copy(fp + int64_t(n) * block, fp + int64_t(n + 1) * block, op + seg_first[n] * block);
  return out;
}

// What the segment scan forms of a problem cut into `segments`: the layout, the inputs with the
// segments as sequences and no initial state, each segment's end state from zero (L) with its
// outputs (o_local) and map (Φ: from the identity with v = 0) with that homogeneous pass's outputs
// (Y [1, T, H, K]), and each segment's start state (the scan's). firsts_from_h0 (the CUDA
// two-pass form): each sequence's first segment runs from h0 (its L is its end state) and its
// homogeneous pass from zero (Φ = 0, Y = 0: the kernels do not run it), the scan from zero.
struct Pieces {
  SegmentLayout sl;
  Inputs local;
  Tensor o_local, L, Phi, Y, H_in, ht;
};
Pieces segment_pieces(const Config& cfg, const Inputs& in, int segments, bool firsts_from_h0 = false) {
  Pieces s;
  s.sl = segment_layout(check_inputs(cfg, in), cfg.chunk, segments);
  const int64_t N = int64_t(s.sl.seg_first.size()) - 1, nseg = s.sl.dims.N, H = in.q.size(2), K = in.q.size(3);
  s.local = in;
  s.local.cu_seqlens = seqlens_tensor(s.sl.dims.seq_start);
  if (firsts_from_h0)
    s.local.h0 = per_segment_states(s.sl.seg_first, in.h0, Tensor::zeros({nseg, H, K, in.v.size(3)}, DType::F64));
  else
    s.local.h0 = Tensor();
  const ForwardResult loc = forward(cfg, s.local);
  s.o_local = loc.o;
  s.L = loc.ht;
  Inputs homogeneous = s.local;
  homogeneous.v = Tensor::zeros(in.v.shape(), DType::F64);
  homogeneous.h0 = identity_states(nseg, H, K);
  if (firsts_from_h0)
    homogeneous.h0 = per_segment_states(s.sl.seg_first, Tensor::zeros({N, H, K, K}, DType::F64), homogeneous.h0);
  const ForwardResult hom = forward(cfg, homogeneous);
  s.Phi = hom.ht;
  s.Y = hom.o;
  scan_segments(firsts_from_h0 ? Tensor() : in.h0, s.L, s.Phi, s.sl.seg_first, s.H_in, &s.ht);
  return s;
}

// Each test: segment_case for its variant, fresh inputs, the CPU chunk path in f64.
class SegmentScan : public testing::TestWithParam<Variant> {
 protected:
  void SetUp() override {
    c = segment_case(GetParam());
    const uint64_t seed = test::fresh_seed();
    trace.emplace(__FILE__, __LINE__, c.str() + " seed " + std::to_string(seed));
    p = test::make_problem(c, seed);
    cfg = test::config(c.variant, Impl::Chunk);
  }
  test::Case c;
  test::Problem p;
  Config cfg;
  std::optional<testing::ScopedTrace> trace;
};

// Each segment's outputs from zero plus Y H_in (add_segment_corrections: the two-pass form
// without its first segments from h0), [1, T, H, V] like o.
Tensor corrected_outputs(const Pieces& s, const Tensor& local_o) {
  Tensor o = local_o.clone();
  add_segment_corrections(o, s.Y, s.H_in, s.sl);
  return o;
}


// The segments' forwards from their scanned starts give the whole forward's outputs and final
// state; so do their outputs from zero corrected by Y H_in.
TEST_P(SegmentScan, ReproducesTheWholeForward) {
  const ForwardResult whole = forward(cfg, p.in);
  for (int segments : {2, 3, 5}) {
    const std::string what = std::to_string(segments) + " segments";
    const Pieces s = segment_pieces(cfg, p.in, segments);
    ASSERT_GT(s.sl.dims.N, int64_t(c.seqlens.size()));
    Inputs from_starts = s.local;
    from_starts.h0 = s.H_in;
    EXPECT_LE(test::rel_err(forward(cfg, from_starts).o, whole.o), 1e-12) << what;
    EXPECT_LE(test::rel_err(s.ht, whole.ht), 1e-12) << what;
    EXPECT_LE(test::rel_err(corrected_outputs(s, s.o_local), whole.o), 1e-12) << what << ", corrected";
    // The segments' own forwards from zero differ (the scan carries the earlier segments' states).
    EXPECT_GT(test::rel_err(s.o_local, whole.o), 1e-3) << what;
  }
}

// The backward by the same cut: each segment's ∂H at its start from a zero ∂H at its end (M, its
// own outputs' gradients alone), the reverse scan ∂H_in(s) = Φ_sᵀ ∂H_out(s) + M_s from dht, then
// every segment's backward from its start state (the forward scan's) with its ∂H_out give the
// whole backward's gradients, dh0 included.
TEST_P(SegmentScan, ReproducesTheWholeBackward) {
  const Grads whole = test::run_backward(cfg, p);
  for (int segments : {2, 3, 5}) {
    const std::string what = std::to_string(segments) + " segments";
    const Pieces s = segment_pieces(cfg, p.in, segments);
    Inputs seg_in = s.local;
    seg_in.h0 = s.H_in;
    const ForwardResult f = forward(cfg, seg_in);
    const Tensor zero_dht = Tensor::zeros({s.sl.dims.N, c.H, c.K, c.V}, DType::F64);
    const Tensor M = backward(cfg, seg_in, f, p.dout, zero_dht).dh0;
    Tensor dH_out, dh0;
    scan_segments_reverse(p.dht, M, s.Phi, s.sl.seg_first, dH_out, &dh0);
    Grads g = backward(cfg, seg_in, f, p.dout, dH_out);
    // Each sequence's first segment's ∂h0 is the sequence's: the scan's, and that segment's own.
    for (size_t n = 0; n + 1 < s.sl.seg_first.size(); ++n)
      EXPECT_LE(test::rel_err(g.dh0.select(0, s.sl.seg_first[n]), dh0.select(0, int64_t(n))), 1e-12) << what;
    g.dh0 = dh0;
    test::expect_grads_close(g, whole, 1e-11, what);
    // Without the scan's ∂H_out the segments' gradients differ.
    EXPECT_GT(test::rel_err(backward(cfg, seg_in, f, p.dout, zero_dht).dk, whole.dk), 1e-3) << what;
  }
}

// The CUDA two-pass form (Config::segment_form = TwoPass): each sequence's first segment runs
// from h0 (its outputs final, its end state H_in of the next segment), the others from zero; the
// homogeneous pass runs the others from the identity (Y, Φ) and the first segments from zero
// (they need neither: the kernels do not run them); the scan from zero (a first segment's H_in is
// then zero, the next one's its L) and o += Y H_in give the whole forward.
TEST_P(SegmentScan, TwoPassFormWithFirstSegmentsFromH0) {
  const ForwardResult whole = forward(cfg, p.in);
  ASSERT_TRUE(p.in.h0.defined());
  const Tensor zero_state = Tensor::zeros({c.H, c.K, c.V}, DType::F64);
  for (int segments : {2, 3, 5}) {
    const std::string what = std::to_string(segments) + " segments";
    const Pieces s = segment_pieces(cfg, p.in, segments, true);
    EXPECT_LE(test::rel_err(s.ht, whole.ht), 1e-12) << what;
    for (size_t n = 0; n + 1 < s.sl.seg_first.size(); ++n)
      EXPECT_EQ(test::rel_err(s.H_in.select(0, s.sl.seg_first[n]), zero_state), 0.0) << what;
    EXPECT_LE(test::rel_err(corrected_outputs(s, s.o_local), whole.o), 1e-12) << what;
    // The first segments' outputs from h0 are final already; the others' are not.
    EXPECT_GT(test::rel_err(s.o_local, whole.o), 1e-3) << what;
  }
}

// The decay cut (GDN at the benchmark's gates, logsigmoid(N(0, 1)) / 16 a step: about e^-3.2 a
// chunk of 64): every segment's pass from its plan (decay_cut_starts: from zero at its cut, from
// h0 at its sequence's start, or, looking back, from the state its predecessors reach) gives the
// whole forward's outputs on the segment's own tokens, head by head, within the bound's
// tolerance; no warm-up is longer than its segment; some segments do start after their
// sequence's start and some look back (else the test would not test them); at a loose tolerance
// (e^-1) the dropped state shows in the outputs (so the comparison sees a cut); with no tolerance
// no segment cuts and the outputs agree to rounding. DeltaNet's bound never cuts.
// GDN at three sequences of 1600, 900 and 100 tokens, two heads, h0 and dht, cut into segments of
// a third of each sequence, with each chunk's decay bound.
class DecayCut : public testing::Test {
 protected:
  test::Case c = [] {
    test::Case c;
    c.variant = Variant::GDN;
    c.seqlens = {1600, 900, 100};
    c.T = 2600;
    c.H = 2, c.K = 16, c.V = 16;
    c.h0 = true, c.dht = true;
    return c;
  }();
  const uint64_t seed = test::fresh_seed();
  testing::ScopedTrace trace{__FILE__, __LINE__, c.str() + " seed " + std::to_string(seed)};
  const test::Problem p = test::make_problem(c, seed);
  const Config cfg = test::config(c.variant, Impl::Chunk);
  const Dims d = check_inputs(cfg, p.in);
  const std::vector<double> bounds = chunk_decay_bounds(p.in.k, p.in.beta, p.in.g, d, cfg.chunk);
  const SegmentLayout sl = segment_layout(d, cfg.chunk, 3);
  const std::vector<int64_t> chunk0 = d.chunk_start(cfg.chunk);
  // Chunk `chunk`'s first token, the chunk in sequence n or its end.
  int64_t chunk_token(size_t n, int64_t chunk) const {
    return std::min(d.seq_start[n] + (chunk - chunk0[n]) * cfg.chunk, d.seq_start[n + 1]);
  }
  // Head h's inputs x over tokens [t0, t1), as a one-sequence, one-head problem's.
  Tensor part(const Tensor& x, int64_t t0, int64_t t1, int64_t h) const {
    return x.slice(1, t0, t1).slice(2, h, h + 1).contiguous();
  }
  Inputs inputs(int64_t t0, int64_t t1, int64_t h) const {
    Inputs in;
    in.q = part(p.in.q, t0, t1, h), in.k = part(p.in.k, t0, t1, h), in.v = part(p.in.v, t0, t1, h);
    in.beta = part(p.in.beta, t0, t1, h), in.g = part(p.in.g, t0, t1, h);
    return in;
  }
  // Head h's state of sequence n at token tok, its h0 run to there: a look-back's start (h0 at the
  // sequence's start) [1, 1, K, V].
  Tensor state_at(size_t n, int64_t h, int64_t tok) const {
    const Tensor h0 = p.in.h0.select(0, int64_t(n)).slice(0, h, h + 1).contiguous().view({1, 1, c.K, c.V});
    if (tok == d.seq_start[n]) return h0;
    Inputs in = inputs(d.seq_start[n], tok, h);
    in.h0 = h0;
    return forward(cfg, in).ht;
  }
  // Head h's state gradient ∂H of sequence n at token tok, the whole backward's there: a
  // look-forward's start (dht at the sequence's end) [1, 1, K, V].
  Tensor dstate_at(size_t n, int64_t h, int64_t tok) const {
    const Tensor dht = p.dht.select(0, int64_t(n)).slice(0, h, h + 1).contiguous().view({1, 1, c.K, c.V});
    if (tok == d.seq_start[n + 1]) return dht;
    Inputs in = inputs(tok, d.seq_start[n + 1], h);
    in.h0 = state_at(n, h, tok);
    const ForwardResult f = forward(cfg, in);
    return backward(cfg, in, f, part(p.dout, tok, d.seq_start[n + 1], h), dht).dh0;
  }
  // Segment s's first token for head h by its plan `start` (decay_cut_starts), and its start state
  // (undefined: zero, from a cut after its sequence's start).
  std::pair<int64_t, Tensor> run_start(size_t n, int64_t s, int64_t h, int64_t start) const {
    if (start == kLookBack) return {sl.dims.seq_start[s], state_at(n, h, sl.dims.seq_start[s])};
    const int64_t t0 = chunk_token(n, start);
    return {t0, t0 == d.seq_start[n] ? state_at(n, h, t0) : Tensor()};
  }
};

TEST_F(DecayCut, SegmentsFromTheirCutGiveTheWholeForward) {
  const ForwardResult whole = forward(cfg, p.in);
  for (double log_tolerance : {std::log(0x1p-30), -1.0, -1e300}) {
    const bool loose = log_tolerance == -1.0, none = log_tolerance < -1e3;
    const std::vector<int64_t> starts = decay_cut_starts(bounds, sl, c.H, cfg.chunk, log_tolerance);
    int cuts = 0, looks = 0;
    double worst = 0;
    for (size_t n = 0; n + 1 < sl.seg_first.size(); ++n)
      for (int64_t s = sl.seg_first[n]; s < sl.seg_first[n + 1]; ++s)
        for (int64_t h = 0; h < c.H; ++h) {
          const int64_t start = starts[size_t(s * c.H + h)];
          const auto [t0, h0] = run_start(n, s, h, start);
          const int64_t own0 = sl.dims.seq_start[s], t1 = sl.dims.seq_start[s + 1];
          looks += start == kLookBack ? 1 : 0;
          cuts += start != kLookBack && t0 != d.seq_start[n] ? 1 : 0;
          if (start != kLookBack) {
            EXPECT_LE(own0 - t0, (t1 - own0 + cfg.chunk - 1) / cfg.chunk * cfg.chunk)  // (in whole chunks)
                << "segment " << s << ": a warm-up longer than the segment";
          }
          Inputs in = inputs(t0, t1, h);
          in.h0 = h0;
          const Tensor o = forward(cfg, in).o.slice(1, own0 - t0, t1 - t0);
          const Tensor want = whole.o.slice(1, own0, t1).slice(2, h, h + 1);
          const double err = test::rel_err(o.contiguous(), want.contiguous());
          worst = std::max(worst, err);
          if (!loose) {
            EXPECT_LE(err, none ? 1e-12 : 1e-7) << "segment " << s << ", head " << h << " from chunk " << start;
          }
        }
    if (none) {
      EXPECT_EQ(cuts, 0);
    } else {
      EXPECT_GT(cuts, 2) << "no segment started after its sequence's start: the cut went untested";
    }
    if (!loose) {  // (the 900- and 100-token sequences' segments are shorter than their warm-up)
      EXPECT_GT(looks, 2) << "no segment looked back: the look-back went untested";
    }
    if (loose) {
      EXPECT_GT(worst, 1e-6) << "a cut one chunk back left the outputs unchanged: the comparison cannot see a cut";
    }
  }
  // DeltaNet: no decay, a bound of at least 1 a token: no cut at any tolerance; each sequence's
  // first segment from h0, the others look back.
  const std::vector<double> flat = chunk_decay_bounds(p.in.k, p.in.beta, Tensor(), d, cfg.chunk);
  for (double b : flat) EXPECT_GE(b, 0.0);
  const std::vector<int64_t> dn = decay_cut_starts(flat, sl, c.H, cfg.chunk, std::log(0x1p-30));
  for (size_t n = 0; n + 1 < sl.seg_first.size(); ++n)
    for (int64_t s = sl.seg_first[n]; s < sl.seg_first[n + 1]; ++s)
      EXPECT_EQ(dn[size_t(s * c.H)], s == sl.seg_first[n] ? chunk0[n] : kLookBack);
}

// The CUDA plan's reach with a fallback (kCutReachWithFallback) covers the walks at the benchmark's
// gates (logsigmoid(N(0, 1)) / 16 a token, about −3.2 a 64-token chunk: 7 chunks to 2^-30), or the
// fallback would run on every benchmark call (a reach of 4 did so, unseen by the other tests, whose
// plans used the same reach): GDN at the benchmark's head size, 8 heads of 48 chunks in 4 segments,
// both walks. At least 90% of the segment edges' unbounded walks end within the reach (nearly
// all do), and a reach of half of it would have cut at none.
TEST(DecayCutReach, CoversTheBenchmarksGates) {
  RandomSpec sp;
  sp.variant = Variant::GDN;
  sp.T = 64 * 48, sp.H = 8, sp.K = 128, sp.V = 128;
  sp.gates = Gates::Bench;
  sp.seed = test::fresh_seed();
  SCOPED_TRACE("seed " + std::to_string(sp.seed));
  const RandomCase rc = make_random_case(sp);
  Config cfg;
  cfg.variant = Variant::GDN;
  const Dims d = check_inputs(cfg, rc.in);
  const std::vector<double> bounds = chunk_decay_bounds(rc.in.k, rc.in.beta, rc.in.g, d, 64);
  const SegmentLayout sl = segment_layout(d, 64, 4);
  const std::vector<int64_t> edge = sl.dims.chunk_start(64);  // each segment's first chunk, and the end
  const double tol = std::log(0x1p-30);
  for (const bool back : {true, false}) {
    auto plan = [&](int64_t reach) {
      return back ? decay_cut_starts(bounds, sl, sp.H, 64, tol, reach) : decay_cut_ends(bounds, sl, sp.H, 64, tol, reach);
    };
    const std::vector<int64_t> unbounded = plan(0), bounded = plan(kCutReachWithFallback),
                               half = plan(kCutReachWithFallback / 2);
    int walks = 0, within = 0, within_half = 0;
    std::vector<int64_t> lengths;
    for (int64_t s = 0; s < sl.dims.N; ++s) {
      if (back ? s == 0 : s + 1 == sl.dims.N) continue;  // (the sequence's edge: from h0, from dht)
      for (int64_t h = 0; h < sp.H; ++h) {
        const size_t i = size_t(s * sp.H + h);
        ASSERT_NE(unbounded[i], kLookBack) << (back ? "start" : "end") << " of segment " << s << ": no cut in 12 chunks";
        lengths.push_back(back ? edge[size_t(s)] - unbounded[i] : unbounded[i] - edge[size_t(s) + 1]);
        ++walks;
        within += bounded[i] != kLookBack ? 1 : 0;
        within_half += half[i] != kLookBack ? 1 : 0;
      }
    }
    std::sort(lengths.begin(), lengths.end());
    const std::string what = back ? "starts" : "ends";
    EXPECT_GE(within, walks * 9 / 10) << what << ": " << within << " of " << walks << " walks within the reach";
    EXPECT_EQ(within_half, 0) << what << ": a walk of " << kCutReachWithFallback / 2 << " chunks cut";
    EXPECT_GE(lengths[lengths.size() / 2], 6) << what << ": the median walk, chunks";
    EXPECT_LE(lengths[lengths.size() / 2], kCutReachWithFallback) << what << ": the median walk, chunks";
  }
}

// A reach (the CUDA plan's where the cut has a fallback) bounds the walk, back in time
// (decay_cut_starts) and forward (decay_cut_ends): a plan with it cuts where the plan without it
// cuts within that many chunks of the segment's edge, and takes the neighbour's state (a segment
// not at its sequence's edge) where that cut lay farther or none was found; a segment at its
// sequence's edge starts (ends) there either way. At a tolerance of one and a half chunks' mean
// bound most cuts need two chunks, so some plans change at a reach of 1 (else the reach would not
// be tested).
TEST_F(DecayCut, ReachBoundsTheWalk) {
  double mean = 0;
  for (double b : bounds) mean += b / double(bounds.size());
  ASSERT_LT(mean, 0.0);
  const std::vector<int64_t> seg_chunk0 = sl.dims.chunk_start(cfg.chunk);  // each segment's first chunk, and the end
  for (const bool back : {true, false})
    for (double tol : {std::log(0x1p-30), 1.5 * mean})
      for (int64_t reach : {int64_t(1), kCutReachWithFallback}) {
        auto plan = [&](int64_t r) {
          return back ? decay_cut_starts(bounds, sl, c.H, cfg.chunk, tol, r) : decay_cut_ends(bounds, sl, c.H, cfg.chunk, tol, r);
        };
        const std::vector<int64_t> unbounded = plan(0), bounded = plan(reach);
        int changed = 0;
        for (size_t n = 0; n + 1 < sl.seg_first.size(); ++n)
          for (int64_t s = sl.seg_first[n]; s < sl.seg_first[n + 1]; ++s)
            for (int64_t h = 0; h < c.H; ++h) {
              const size_t i = size_t(s * c.H + h);
              const bool at_edge = back ? s == sl.seg_first[n] : s + 1 == sl.seg_first[n + 1];
              const int64_t walked = back ? seg_chunk0[size_t(s)] - unbounded[i] : unbounded[i] - seg_chunk0[size_t(s) + 1];
              const bool within = unbounded[i] != kLookBack && walked <= reach;
              const std::string where = fmt::format("{} segment {} head {} reach {}", back ? "start" : "end", s, h, reach);
              if (at_edge || within) {
                EXPECT_EQ(bounded[i], unbounded[i]) << where;
              } else {
                EXPECT_EQ(bounded[i], kLookBack) << where << ": past the reach";
                changed += bounded[i] != unbounded[i] ? 1 : 0;
              }
            }
        if (tol == 1.5 * mean && reach == 1) {
          EXPECT_GT(changed, 0) << (back ? "starts" : "ends") << ": no plan needed more than one chunk";
        }
      }
}

// The backward's decay cut (decay_cut_ends, with the forward's decay_cut_starts): every segment's
// backward over its chunks from its forward start to its backward cut (from h0 at its sequence's
// start, from the state there where it looks back, from dht at its end, from the whole backward's
// ∂H at its end where it looks forward, else from zero state and zero ∂H; no cool-down longer
// than the segment) gives the whole backward's
// gradients on the segment's own tokens, head by head, within the tolerance, and a sequence's
// ∂h0 where the run starts at h0; some segments' backward does stop before their sequence's end;
// some segments look forward (else the test would not test it); at a loose tolerance the dropped
// ∂H shows; with none no segment cuts and the gradients agree to rounding.
TEST_F(DecayCut, SegmentsBetweenTheirCutsGiveTheWholeBackward) {
  ASSERT_TRUE(p.dht.defined());
  const Grads whole = test::run_backward(cfg, p);
  for (double log_tolerance : {std::log(0x1p-30), -1.0, -1e300}) {
    const bool loose = log_tolerance == -1.0, none = log_tolerance < -1e3;
    const std::vector<int64_t> starts = decay_cut_starts(bounds, sl, c.H, cfg.chunk, log_tolerance);
    const std::vector<int64_t> ends = decay_cut_ends(bounds, sl, c.H, cfg.chunk, log_tolerance);
    int cuts = 0, looks = 0;
    double worst = 0;
    for (size_t n = 0; n + 1 < sl.seg_first.size(); ++n)
      for (int64_t s = sl.seg_first[n]; s < sl.seg_first[n + 1]; ++s)
        for (int64_t h = 0; h < c.H; ++h) {
          const auto [t0, h0] = run_start(n, s, h, starts[size_t(s * c.H + h)]);
          const int64_t end = ends[size_t(s * c.H + h)];
          const int64_t own0 = sl.dims.seq_start[s], own1 = sl.dims.seq_start[s + 1];
          const bool forward_look = end == kLookForward;
          const int64_t t1 = forward_look ? own1 : chunk_token(n, end);
          ASSERT_LE(t0, own0);
          ASSERT_GE(t1, own1);
          if (!forward_look) {
            EXPECT_LE(t1 - own1, (own1 - own0 + cfg.chunk - 1) / cfg.chunk * cfg.chunk)  // (in whole chunks)
                << "segment " << s << ": a cool-down longer than the segment";
          }
          const bool from_h0 = t0 == d.seq_start[n], to_end = t1 == d.seq_start[n + 1];
          cuts += to_end || forward_look ? 0 : 1;
          looks += forward_look ? 1 : 0;
          Inputs in = inputs(t0, t1, h);
          in.h0 = h0;
          const ForwardResult f = forward(cfg, in);
          const Tensor dht_run = forward_look || to_end ? dstate_at(n, h, t1) : Tensor();
          const Grads g = backward(cfg, in, f, part(p.dout, t0, t1, h), dht_run);
          const std::pair<const char*, std::pair<Tensor, Tensor>> pairs[] = {
              {"dq", {g.dq, whole.dq}}, {"dk", {g.dk, whole.dk}}, {"dv", {g.dv, whole.dv}},
              {"dbeta", {g.dbeta, whole.dbeta}}, {"dg", {g.dg, whole.dg}}};
          for (const auto& [name, pr] : pairs) {
            const Tensor got = pr.first.slice(1, own0 - t0, own1 - t0).contiguous();
            const Tensor want = pr.second.slice(1, own0, own1).slice(2, h, h + 1).contiguous();
            const double err = test::rel_err(got, want);
            worst = std::max(worst, err);
            if (!loose) {
              EXPECT_LE(err, none ? 1e-12 : 1e-7) << name << ", segment " << s << ", head " << h << ", chunks "
                                                   << starts[size_t(s * c.H + h)] << "-" << ends[size_t(s * c.H + h)];
            }
          }
          if (from_h0 && !loose) {
            const Tensor want = whole.dh0.select(0, int64_t(n)).slice(0, h, h + 1).contiguous().view({1, 1, c.K, c.V});
            EXPECT_LE(test::rel_err(g.dh0, want), none ? 1e-12 : 1e-7) << "dh0, segment " << s << ", head " << h;
          }
        }
    if (none) {
      EXPECT_EQ(cuts, 0);
    } else {
      EXPECT_GT(cuts, 2) << "no segment's backward stopped before its sequence's end: the cut went untested";
    }
    if (!loose) {  // (the 900- and 100-token sequences' segments are shorter than their cool-down)
      EXPECT_GT(looks, 2) << "no segment looked forward: the look-forward went untested";
    }
    if (loose) {
      EXPECT_GT(worst, 1e-6) << "cuts one chunk away left the gradients unchanged: the comparison cannot see a cut";
    }
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
  EXPECT_THROW(scan_segments_reverse(Tensor(), Tensor::zeros({2, 1, 4, 4}, DType::F32),
                                     Tensor::zeros({2, 1, 4, 4}, DType::F64), seg_first, H_in, nullptr),
               Error);  // M in f32, Φ in f64
  auto message = [&](auto&& call) {
    try {
      call();
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message([&] { scan_segments(Tensor(), L, Tensor::zeros({2, 1, 4, 3}, DType::F64), seg_first, H_in, nullptr); })
                .find("Phi"),
            std::string::npos);
  EXPECT_NE(message([&] {
              scan_segments_reverse(Tensor::zeros({1, 1, 4, 5}, DType::F64), L, Tensor::zeros({2, 1, 4, 4}, DType::F64),
                                    seg_first, H_in, nullptr);
            }).find("dht"),
            std::string::npos);
  // The correction's operands: Y, H_in and o name themselves.
  const SegmentLayout sl = segment_layout(varlen_dims({128, 64}), 64, 2);  // three segments (H = 2, K = V = 16)
  Tensor o = Tensor::zeros({1, 192, 2, 16}, DType::F64);
  const Tensor Y = Tensor::zeros({1, 192, 2, 16}, DType::F64);
  const Tensor H3 = Tensor::zeros({3, 2, 16, 16}, DType::F64);
  EXPECT_EQ(message([&] { add_segment_corrections(o, Y, H3, sl); }), "no error");
  EXPECT_NE(message([&] { add_segment_corrections(o, Y, Tensor::zeros({2, 2, 16, 16}, DType::F64), sl); }).find("H_in"),
            std::string::npos);  // two segments' states where the layout has three
  EXPECT_NE(message([&] { add_segment_corrections(o, Tensor::zeros({1, 191, 2, 16}, DType::F64), H3, sl); }).find("Y"),
            std::string::npos);  // a token short
  EXPECT_NE(message([&] { add_segment_corrections(o, Y.to(DType::F32), H3, sl); }).find("Y"), std::string::npos);
  Tensor short_o = Tensor::zeros({1, 100, 2, 16}, DType::F64);
  EXPECT_NE(message([&] { add_segment_corrections(short_o, Y, H3, sl); }).find("tokens"), std::string::npos);
}

}  // namespace
}  // namespace rewy::delta
