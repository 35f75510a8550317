// Input validation of the delta-rule entry points: every missing, mis-shaped, mistyped or
// superfluous tensor is an error that names it; plus Dims and the name parsers.
#include "test_delta_util.h"

using namespace rewy;
using namespace rewy::delta;
using namespace rewy::delta::test;

namespace {

// Runs f and expects a rewy::Error whose message contains `needle`.
template <typename F>
void expect_error(F&& f, const std::string& needle) {
  try {
    f();
    ADD_FAILURE() << "no error, expected one containing \"" << needle << "\"";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << "message: " << e.what();
  }
}

Problem small(Variant v, bool varlen = false) {
  Case c;
  c.variant = v, c.B = 2, c.T = 64, c.H = 3, c.K = 8, c.V = 12;
  if (varlen) c.B = 1, c.seqlens = {30, 34};
  return make_problem(c, fresh_seed());
}

Dims check(Variant v, const Inputs& in) { return check_inputs(config(v, Impl::Chunk), in); }

TEST(DeltaInputs, EachMissingTensorIsNamed) {
  for (Variant v : all_variants()) {
    SCOPED_TRACE(name(v));
    const Problem p = small(v);
    const std::pair<Tensor Inputs::*, const char*> required[] = {
        {&Inputs::q, "q is missing"}, {&Inputs::k, "k is missing"}, {&Inputs::v, "v is missing"},
        {&Inputs::beta, "beta is missing"}, {&Inputs::g, "g is missing"}, {&Inputs::b, "b is missing"},
        {&Inputs::w, "w is missing"}};
    for (const auto& [field, msg] : required) {
      if (!(p.in.*field).defined()) continue;  // not used by this variant
      Inputs in = p.in;
      in.*field = Tensor();
      expect_error([&] { check(v, in); }, msg);
    }
  }
}

TEST(DeltaInputs, EachMisShapedTensorIsNamedWithTheExpectedShape) {
  const Problem gdn = small(Variant::GDN);
  Inputs in = gdn.in;
  in.beta = in.beta.view({2, 64, 3, 1});
  expect_error([&] { check(Variant::GDN, in); }, "beta has shape [2, 64, 3, 1], expected [2, 64, 3]");
  in = gdn.in;
  in.k = Tensor::zeros({2, 64, 3, 9}, DType::F64);
  expect_error([&] { check(Variant::GDN, in); }, "k has shape [2, 64, 3, 9], expected [2, 64, 3, 8]");
  in = gdn.in;
  in.v = Tensor::zeros({2, 63, 3, 12}, DType::F64);
  expect_error([&] { check(Variant::GDN, in); }, "v has shape [2, 63, 3, 12], expected [2, 64, 3, V]");
  in = gdn.in;
  in.q = in.q.view({2, 64, 24});
  expect_error([&] { check(Variant::GDN, in); }, "q has shape [2, 64, 24], expected [B, T, H, K]");
  in = gdn.in;
  in.h0 = Tensor::zeros({2, 3, 12, 8}, DType::F64);
  expect_error([&] { check(Variant::GDN, in); }, "h0 has shape [2, 3, 12, 8], expected [2, 3, 8, 12]");
  in = gdn.in;
  in.g = Tensor::zeros({2, 64, 3, 8}, DType::F64);  // a KDA gate given to GDN
  expect_error([&] { check(Variant::GDN, in); }, "g has shape [2, 64, 3, 8], expected [2, 64, 3]");

  const Problem kda = small(Variant::KDA);
  in = kda.in;
  in.g = gdn.in.g;  // a GDN gate given to KDA
  expect_error([&] { check(Variant::KDA, in); }, "g has shape [2, 64, 3], expected [2, 64, 3, 8]");

  const Problem gdn2 = small(Variant::GDN2);
  in = gdn2.in;
  in.b = gdn2.in.w;
  expect_error([&] { check(Variant::GDN2, in); }, "b has shape [2, 64, 3, 12], expected [2, 64, 3, 8]");
  in = gdn2.in;
  in.w = gdn2.in.b;
  expect_error([&] { check(Variant::GDN2, in); }, "w has shape [2, 64, 3, 8], expected [2, 64, 3, 12]");
}

TEST(DeltaInputs, TensorsAVariantDoesNotTakeAreErrors) {
  const Problem gdn = small(Variant::GDN), gdn2 = small(Variant::GDN2);
  Inputs in = gdn2.in;
  in.beta = gdn.in.beta;
  expect_error([&] { check(Variant::GDN2, in); }, "gdn2 takes b and w, not beta");
  in = gdn.in;
  expect_error([&] { check(Variant::DeltaNet, in); }, "deltanet takes no gate g");
  in = small(Variant::KDA).in;
  in.b = gdn2.in.b;
  expect_error([&] { check(Variant::KDA, in); }, "kda takes beta, not b and w");
  in = gdn.in;
  in.w = gdn2.in.w;
  expect_error([&] { check(Variant::GDN, in); }, "gdn takes beta, not b and w");
}

TEST(DeltaInputs, DtypesAndDevices) {
  const Problem p = small(Variant::GDN);
  Inputs in = p.in;
  in.v = in.v.to(DType::F32);
  expect_error([&] { check(Variant::GDN, in); }, "v is f32 but q is f64: CPU inputs must share one dtype");
  in = p.in;
  in.h0 = in.h0.to(DType::F32);
  expect_error([&] { check(Variant::GDN, in); }, "h0 is f32 but q is f64");
  in = p.in;
  for (Tensor* t : {&in.q, &in.k, &in.v, &in.beta, &in.g, &in.h0}) *t = t->to(DType::BF16);
  expect_error([&] { check(Variant::GDN, in); }, "q is bf16: CPU delta-rule inputs must be f32 or f64");
  in = p.in;
  in.q = in.q.to(DType::I32);
  expect_error([&] { check(Variant::GDN, in); }, "q is i32");
}

TEST(DeltaInputs, CuSeqlens) {
  const Problem p = small(Variant::KDA, true);
  Dims d = check(Variant::KDA, p.in);
  EXPECT_EQ(d.N, 2);
  EXPECT_EQ(d.seq_start, (std::vector<int64_t>{0, 30, 64}));
  EXPECT_EQ(d.num_chunks(16), 2 + 3);
  EXPECT_EQ(d.chunk_start(16), (std::vector<int64_t>{0, 2, 5}));
  EXPECT_EQ(d.num_chunks(64), 2);

  Inputs in = p.in;
  in.cu_seqlens = Tensor::from_vector({0, 40, 30, 64}, {4}, DType::I64);
  in.h0 = Tensor();
  expect_error([&] { check(Variant::KDA, in); }, "cu_seqlens must be non-decreasing, but cu_seqlens[2] = 30 < 40");
  in.cu_seqlens = Tensor::from_vector({0, 30, 60}, {3}, DType::I32);
  expect_error([&] { check(Variant::KDA, in); }, "cu_seqlens must run from 0 to T = 64, got 0 .. 60");
  in.cu_seqlens = Tensor::from_vector({0, 30, 64}, {3}, DType::F32);
  expect_error([&] { check(Variant::KDA, in); }, "cu_seqlens is f32, expected i32 or i64");
  in.cu_seqlens = Tensor::from_vector({64}, {1}, DType::I64);
  expect_error([&] { check(Variant::KDA, in); }, "cu_seqlens has shape [1], expected [N + 1]");
  in = p.in;
  in.h0 = Tensor::zeros({1, 3, 8, 12}, DType::F64);  // one state per sequence: N = 2
  expect_error([&] { check(Variant::KDA, in); }, "h0 has shape [1, 3, 8, 12], expected [2, 3, 8, 12]");

  const Problem batched = small(Variant::KDA);
  in = batched.in;
  in.cu_seqlens = Tensor::from_vector({0, 30, 64}, {3}, DType::I64);
  expect_error([&] { check(Variant::KDA, in); }, "cu_seqlens needs B == 1");
  d = check(Variant::KDA, batched.in);
  EXPECT_EQ(d.N, 2);
  EXPECT_EQ(d.seq_start, (std::vector<int64_t>{0, 64, 128}));
  EXPECT_EQ(d.num_chunks(64), 2);
  EXPECT_EQ(d.num_chunks(63), 4);
}

TEST(DeltaInputs, ConfigAndGateValues) {
  const Problem p = small(Variant::KDA);
  Config cfg = config(Variant::KDA, Impl::Chunk, BackwardAlgo::ReWY, Policy::Recompute, 0);
  expect_error([&] { check_inputs(cfg, p.in); }, "chunk must be > 0, got 0");
  cfg.chunk = 64;
  cfg.state_slice = 48;
  expect_error([&] { check_inputs(cfg, p.in); }, "Config::state_slice must be 0 (automatic), 16, 32, 64 or 128, got 48");
  cfg.state_slice = 64;
  EXPECT_NO_THROW(check_inputs(cfg, p.in));  // the CPU path ignores the CUDA slice width
  cfg.state_slice = 0;
  cfg.state_bwd_slice = 24;
  expect_error([&] { check_inputs(cfg, p.in); }, "Config::state_bwd_slice must be 0 (automatic), 16, 32, 64 or 128, got 24");
  cfg.state_bwd_slice = 0;
  cfg.grad_warps = 12;
  expect_error([&] { check_inputs(cfg, p.in); }, "Config::grad_warps must be 0 (automatic), 8 or 16, got 12");
  cfg.grad_warps = 8;
  EXPECT_NO_THROW(check_inputs(cfg, p.in));
  cfg.grad_warps = 0;
  cfg.prep_warps = 4;
  expect_error([&] { check_inputs(cfg, p.in); }, "Config::prep_warps must be 0 (automatic), 8 or 16, got 4");
  cfg.prep_warps = 0;
  cfg.replay_warps = 32;
  expect_error([&] { check_inputs(cfg, p.in); }, "Config::replay_warps must be 0 (automatic), 8 or 16, got 32");
  cfg.replay_warps = 0;
  cfg.scan_segments = -1;
  expect_error([&] { check_inputs(cfg, p.in); }, "Config::scan_segments must be 0 (by rule), 1 (none) or a count, got -1");
  cfg.scan_segments = 3;
  cfg.cut_fallback_segments = -2;
  expect_error([&] { check_inputs(cfg, p.in); },
               "Config::cut_fallback_segments must be 0 (none), 1 (the sequential forward) or a count, got -2");
  cfg.cut_fallback_segments = 2;
  cfg.backward_cut_segments = -3;
  expect_error([&] { check_inputs(cfg, p.in); },
               "Config::backward_cut_segments must be 0 (by rule), 1 (none) or a count, got -3");
  cfg.backward_cut_segments = 4;
  EXPECT_NO_THROW(check_inputs(cfg, p.in));  // (counts the CPU path ignores)
  cfg.scan_segments = cfg.cut_fallback_segments = cfg.backward_cut_segments = 0;
  Inputs in = p.in;
  std::vector<double> g = in.g.to_vector();
  g[((1 * 64 + 5) * 3 + 2) * 8 + 7] = 0.25;
  in.g = Tensor::from_vector(g, in.g.shape(), DType::F64);
  expect_error([&] { forward(cfg, in); }, "g must be a finite log-decay <= 0, but g[1, 5, 2, 7] = 0.25");
  g[((1 * 64 + 5) * 3 + 2) * 8 + 7] = std::nan("");
  in.g = Tensor::from_vector(g, in.g.shape(), DType::F64);
  expect_error([&] { forward(cfg, in); }, "g must be a finite log-decay <= 0, but g[1, 5, 2, 7] = nan");
}

TEST(DeltaInputs, BackwardExtras) {
  const Problem p = small(Variant::GDN2);
  Config cfg = config(Variant::GDN2, Impl::Chunk);
  const ForwardResult f = forward(cfg, p.in);
  expect_error([&] { backward(cfg, p.in, f, p.dht, p.dht); }, "dout has shape [2, 3, 8, 12], expected [2, 64, 3, 12]");
  expect_error([&] { backward(cfg, p.in, f, p.dout, p.dout); }, "dht has shape [2, 64, 3, 12], expected [2, 3, 8, 12]");
  expect_error([&] { backward(cfg, p.in, f, Tensor(), p.dht); }, "dout is missing");
  expect_error([&] { backward(cfg, p.in, f, p.dout.to(DType::F32), p.dht); }, "dout is f32 but q is f64");
  ForwardResult bad = f;
  bad.saved.Tinv = Tensor();
  expect_error([&] { backward(cfg, p.in, bad, p.dout, p.dht); }, "saved.Tinv is missing");
  cfg.policy = Policy::Save;
  expect_error([&] { backward(cfg, p.in, f, p.dout, p.dht); },
               "fwd was saved with policy recompute but the backward runs with policy save");
  Config save = cfg;
  const ForwardResult fs = forward(save, p.in);
  bad = fs;
  bad.saved.Hs = Tensor::zeros({1, 3, 8, 12}, DType::F64);
  expect_error([&] { backward(save, p.in, bad, p.dout, p.dht); }, "Hs has shape [1, 3, 8, 12], expected [2, 3, 8, 12]");
  cfg.chunk = 32;  // the saved 𝒯 is [B, T, H, 64]
  cfg.policy = Policy::Recompute;
  expect_error([&] { backward(cfg, p.in, f, p.dout, p.dht); }, "Tinv has shape [2, 64, 3, 64], expected [2, 64, 3, 32]");
  // The naive path saves nothing and needs nothing.
  const Config naive = config(Variant::GDN2, Impl::Naive);
  EXPECT_NO_THROW(backward(naive, p.in, ForwardResult{}, p.dout, p.dht));
}

TEST(DeltaInputs, NamesRoundTrip) {
  for (Variant v : all_variants()) EXPECT_EQ(parse_variant(name(v)), v);
  for (BackwardAlgo b : {BackwardAlgo::ReWY, BackwardAlgo::Baseline}) EXPECT_EQ(parse_backward(name(b)), b);
  for (Policy p : {Policy::Recompute, Policy::Save}) EXPECT_EQ(parse_policy(name(p)), p);
  for (Impl i : {Impl::Naive, Impl::Chunk}) EXPECT_EQ(parse_impl(name(i)), i);
  expect_error([] { parse_variant("gla"); }, "unknown op 'gla'");
  expect_error([] { parse_backward("fla"); }, "unknown backward 'fla'");
}

}  // namespace
