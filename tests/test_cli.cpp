// The `rewy` binary as a user runs it (a subprocess): help, bad arguments, and `rewy op` round trips
// through HDF5 compared with calling the delta-rule operators directly, plus its input errors.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>

#include "engine/io/h5.h"
#include "kernels/delta/delta.h"
#include "test_io_util.h"

using namespace rewy;
using rewy::test::rewy_cli;
namespace fs = std::filesystem;

namespace {

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

TEST(Cli, HelpListsSubcommands) {
  test::CliResult r = rewy_cli("--help");
  EXPECT_EQ(r.code, 0) << r.out;
  for (const char* sub : {"info", "demo", "op"}) EXPECT_TRUE(has(r.out, sub)) << sub << " not in:\n" << r.out;
  r = rewy_cli("op --help");
  EXPECT_EQ(r.code, 0) << r.out;
  for (const char* flag :
       {"--in", "--out", "--op", "--impl", "--backward", "--policy", "--chunk", "--scale", "--device", "--bf16-twin"})
    EXPECT_TRUE(has(r.out, flag)) << flag << " not in:\n" << r.out;
}

TEST(Cli, BadArgumentsFailWithAMessage) {
  struct Case {
    const char* args;
    const char* says;
  };
  for (const Case& c : {Case{"", "subcommand"}, Case{"frobnicate", "frobnicate"}, Case{"info --frobnicate", "--frobnicate"},
                        Case{"op --in a.h5 --out b.h5", "--op"}, Case{"op --in a.h5 --out b.h5 --op gdn3", "gdn3"},
                        Case{"op --in a.h5 --out b.h5 --op gdn --chunk 0", "--chunk"},
                        Case{"op --in a.h5 --out b.h5 --op gdn --device tpu", "tpu"}}) {
    const test::CliResult r = rewy_cli(c.args);
    EXPECT_NE(r.code, 0) << "rewy " << c.args << "\n" << r.out;
    EXPECT_TRUE(has(r.out, c.says)) << "rewy " << c.args << " should mention '" << c.says << "':\n" << r.out;
  }
}

// ---------------------------------------------------------------------------------------------
// rewy op

struct Problem {
  delta::Variant variant;
  DType dt;
  int64_t B, T, H, K, V;
  std::vector<int64_t> cu_seqlens;  // empty: N = B sequences of length T
  bool states;                       // h0 and dht
};

class OpTest : public test::FileTest {
 protected:
  Tensor normal(const Shape& s, DType dt, double scale = 1.0) {
    std::normal_distribution<double> d;
    std::vector<double> v(size_t(shape_numel(s)));
    for (auto& x : v) x = d(rng_) * scale;
    return Tensor::from_vector(v, s, dt);
  }
  Tensor uniform(const Shape& s, DType dt, double lo, double hi) {
    std::uniform_real_distribution<double> d(lo, hi);
    std::vector<double> v(size_t(shape_numel(s)));
    for (auto& x : v) x = d(rng_);
    return Tensor::from_vector(v, s, dt);
  }
  // Keys of unit norm per (token, head) keep the recurrence contractive (‖b ⊙ k‖·‖k‖ < 2).
  Tensor unit_keys(const Shape& s, DType dt) {
    std::vector<double> v = normal(s, DType::F64).to_vector();
    const int64_t K = s.back();
    for (size_t i = 0; i < v.size(); i += size_t(K)) {
      double n = 0;
      for (int64_t j = 0; j < K; ++j) n += v[i + j] * v[i + j];
      for (int64_t j = 0; j < K; ++j) v[i + j] /= std::sqrt(n);
    }
    return Tensor::from_vector(v, s, dt);
  }

  // Random inputs of the shapes rewy op expects (gates in their natural ranges).
  std::map<std::string, Tensor> inputs(const Problem& p) {
    const int64_t N = p.cu_seqlens.empty() ? p.B : int64_t(p.cu_seqlens.size()) - 1;
    const Shape bthk = {p.B, p.T, p.H, p.K}, bthv = {p.B, p.T, p.H, p.V}, bth = {p.B, p.T, p.H};
    std::map<std::string, Tensor> m;
    m["q"] = normal(bthk, p.dt);
    m["k"] = unit_keys(bthk, p.dt);
    m["v"] = normal(bthv, p.dt);
    m["do"] = normal(bthv, p.dt);
    if (delta::has_beta(p.variant)) m["beta"] = uniform(bth, p.dt, 0.05, 0.95);
    if (delta::has_gate(p.variant)) m["g"] = uniform(delta::channel_gate(p.variant) ? bthk : bth, p.dt, -0.3, -0.01);
    if (p.variant == delta::Variant::GDN2) {
      m["b"] = uniform(bthk, p.dt, 0.05, 0.95);
      m["w"] = uniform(bthv, p.dt, 0.05, 0.95);
    }
    if (p.states) {
      m["h0"] = normal({N, p.H, p.K, p.V}, p.dt, 0.5);
      m["dht"] = normal({N, p.H, p.K, p.V}, p.dt, 0.5);
    }
    if (!p.cu_seqlens.empty())
      m["cu_seqlens"] = Tensor::from_vector(std::vector<double>(p.cu_seqlens.begin(), p.cu_seqlens.end()),
                                            {int64_t(p.cu_seqlens.size())}, DType::I32);
    return m;
  }
  void write(const std::string& path, const std::map<std::string, Tensor>& m) {
    io::H5File f = io::H5File::create(path);
    for (const auto& [name, t] : m) f.write(name, t);
    f.close();
  }
  static Tensor get(const std::map<std::string, Tensor>& m, const char* name) {
    auto it = m.find(name);
    return it == m.end() ? Tensor{} : it->second;
  }
};

// rewy op writes what delta::forward/backward return for the same inputs and configuration.
// Both sides run the same deterministic CPU code on bit-identical inputs (HDF5 stores them
// exactly); the only slack allowed is a reassociated sum (threaded BLAS), bounded by a few
// dozen ulps of the largest value: 64·eps·max|ref|.
TEST_F(OpTest, RoundTripMatchesDirectCalls) {
  using V = delta::Variant;
  struct Case {
    Problem p;
    std::string flags;  // beyond --op
    delta::Config cfg;
  };
  auto cfg = [](V v, delta::Impl impl, int chunk = 64, delta::BackwardAlgo b = delta::BackwardAlgo::ReWY,
                delta::Policy pol = delta::Policy::Recompute, double scale = 0) {
    delta::Config c;
    c.variant = v, c.impl = impl, c.chunk = chunk, c.backward = b, c.policy = pol, c.scale = scale;
    return c;
  };
  // A braced Problem (it holds a vector) trips GCC 12's -Wmaybe-uninitialized; build it in place.
  auto P = [](V v, DType dt, int64_t B, int64_t T, int64_t H, int64_t K, int64_t Vd,
              std::initializer_list<int64_t> cu_seqlens, bool states) {
    Problem p{v, dt, B, T, H, K, Vd, {}, states};
    p.cu_seqlens.assign(cu_seqlens);
    return p;
  };
  std::vector<Case> cases;
  cases.push_back({P(V::DeltaNet, DType::F64, 2, 13, 2, 8, 12, {}, true), "--impl naive",
                   cfg(V::DeltaNet, delta::Impl::Naive)});
  cases.push_back({P(V::GDN, DType::F64, 1, 37, 2, 8, 12, {0, 5, 21, 37}, true), "--impl naive --scale 0.3",
                   cfg(V::GDN, delta::Impl::Naive, 64, delta::BackwardAlgo::ReWY, delta::Policy::Recompute, 0.3)});
  cases.push_back({P(V::KDA, DType::F64, 2, 11, 3, 8, 4, {}, false), "--impl naive", cfg(V::KDA, delta::Impl::Naive)});
  cases.push_back({P(V::GDN2, DType::F64, 1, 29, 2, 4, 8, {0, 17, 29}, true), "--impl naive",
                   cfg(V::GDN2, delta::Impl::Naive)});
  cases.push_back({P(V::GDN, DType::F32, 2, 37, 2, 8, 12, {}, true),
                   "--impl chunk --chunk 16 --policy save --backward baseline",
                   cfg(V::GDN, delta::Impl::Chunk, 16, delta::BackwardAlgo::Baseline, delta::Policy::Save)});
  cases.push_back({P(V::GDN2, DType::F32, 1, 40, 2, 8, 8, {0, 9, 40}, true), "--impl chunk --chunk 16",
                   cfg(V::GDN2, delta::Impl::Chunk, 16)});
  cases.push_back({P(V::KDA, DType::F32, 2, 70, 2, 8, 8, {}, false), "", cfg(V::KDA, delta::Impl::Chunk)});  // defaults
  cases.push_back({P(V::GDN, DType::F32, 1, 70, 2, 8, 8, {}, true), "--bf16-twin --backward baseline",
                   cfg(V::GDN, delta::Impl::Chunk, 64, delta::BackwardAlgo::Baseline)});
  cases.back().cfg.round_to_bf16 = true;
  for (size_t ci = 0; ci < cases.size(); ++ci) {
    const Case& c = cases[ci];
    const std::string op = delta::name(c.p.variant);
    SCOPED_TRACE(op + " " + dtype_name(c.p.dt) + " " + c.flags);
    const auto m = inputs(c.p);
    const std::string in = file(fmt::format("in{}.h5", ci)), out = file(fmt::format("out{}.h5", ci));
    write(in, m);
    const test::CliResult r = rewy_cli(fmt::format("op --in '{}' --out '{}' --op {} {}", in, out, op, c.flags));
    ASSERT_EQ(r.code, 0) << r.out;

    delta::Inputs di;
    di.q = get(m, "q"), di.k = get(m, "k"), di.v = get(m, "v"), di.beta = get(m, "beta"), di.g = get(m, "g");
    di.b = get(m, "b"), di.w = get(m, "w"), di.h0 = get(m, "h0"), di.cu_seqlens = get(m, "cu_seqlens");
    const delta::ForwardResult fwd = delta::forward(c.cfg, di);
    const delta::Grads gr = delta::backward(c.cfg, di, fwd, get(m, "do"), get(m, "dht"));
    std::map<std::string, Tensor> want = {{"o", fwd.o}, {"ht", fwd.ht}, {"dq", gr.dq}, {"dk", gr.dk}, {"dv", gr.dv}};
    if (delta::has_beta(c.p.variant)) want["dbeta"] = gr.dbeta;
    if (delta::has_gate(c.p.variant)) want["dg"] = gr.dg;
    if (c.p.variant == V::GDN2) want["db"] = gr.db, want["dw"] = gr.dw;
    if (c.p.states) want["dh0"] = gr.dh0;

    io::H5File f = io::H5File::open(out);
    std::vector<std::string> names;
    for (const auto& kv : want) names.push_back(kv.first);
    EXPECT_EQ(f.datasets(), names);
    EXPECT_EQ(f.attr_string("op"), op);
    EXPECT_EQ(f.attr_string("impl"), delta::name(c.cfg.impl));
    EXPECT_EQ(f.attr_string("backward"), delta::name(c.cfg.backward));
    EXPECT_EQ(f.attr_string("policy"), delta::name(c.cfg.policy));
    EXPECT_EQ(f.attr_int("chunk"), c.cfg.chunk);
    EXPECT_EQ(f.attr_double("scale"), c.cfg.scale > 0 ? c.cfg.scale : 1.0 / std::sqrt(double(c.p.K)));
    const double eps = c.p.dt == DType::F64 ? 0x1p-52 : 0x1p-23;
    for (const auto& [name, t] : want) {
      SCOPED_TRACE(name);
      ASSERT_TRUE(t.defined()) << "delta::forward/backward returned no " << name;
      if (!f.has(name)) continue;  // reported by the datasets() comparison
      const Tensor got = f.read(name);
      EXPECT_EQ(got.dtype(), c.p.dt);
      ASSERT_EQ(got.shape(), t.shape());
      const std::vector<double> a = got.to_vector(), b = t.to_vector();
      double scale = 0, err = 0;
      for (size_t i = 0; i < a.size(); ++i) {
        scale = std::max(scale, std::abs(b[i]));
        err = std::max(err, std::abs(a[i] - b[i]));
      }
      EXPECT_GT(scale, 0.0) << "all-zero output: the comparison would prove nothing";
      EXPECT_LE(err, 64 * eps * scale);
    }
  }
}

TEST_F(OpTest, BadInputsGiveClearErrors) {
  const Problem p{delta::Variant::GDN, DType::F64, 2, 9, 2, 4, 6, {}, true};
  const auto good = inputs(p);
  const std::string out = file("out.h5");
  int n = 0;
  // Writes `m` to a fresh file, runs rewy op on it, expects failure with every phrase in `says`,
  // and no output file (rewy op writes atomically).
  auto expect_error = [&](const std::map<std::string, Tensor>& m, const std::vector<std::string>& says,
                          const std::string& flags = "--op gdn --impl naive") {
    const std::string in = file(fmt::format("in{}.h5", n++));
    write(in, m);
    const test::CliResult r = rewy_cli(fmt::format("op --in '{}' --out '{}' {}", in, out, flags));
    EXPECT_NE(r.code, 0) << r.out;
    for (const auto& s : says) EXPECT_TRUE(has(r.out, s)) << "expected '" << s << "' in:\n" << r.out;
    EXPECT_FALSE(fs::exists(out));
    EXPECT_FALSE(fs::exists(out + ".tmp"));
  };
  auto without = [&](const char* name) {
    auto m = good;
    m.erase(name);
    return m;
  };
  auto with = [&](const char* name, const Tensor& t) {
    auto m = good;
    m[name] = t;
    return m;
  };
  expect_error(without("k"), {"dataset 'k' is missing", "[B, T, H, K] = [2, 9, 2, 4]"});
  expect_error(without("q"), {"dataset 'q' is missing", "[B, T, H, K]"});
  expect_error(without("beta"), {"dataset 'beta' is missing", "[B, T, H] = [2, 9, 2]"});
  expect_error(without("g"), {"dataset 'g' is missing"}, "--op kda --impl naive");
  expect_error(with("v", normal({2, 10, 2, 6}, DType::F64)),
               {"dataset 'v'", "has shape [2, 10, 2, 6]", "expected [B, T, H, V] = [2, 9, 2, V]"});
  expect_error(with("q", normal({2, 9, 8}, DType::F64)), {"dataset 'q'", "has shape [2, 9, 8]", "[B, T, H, K]"});
  expect_error(with("g", normal({2, 9, 2, 4}, DType::F64)), {"dataset 'g'", "expected [B, T, H] = [2, 9, 2]"});
  expect_error(with("g", normal({2, 9, 2}, DType::F64)), {"dataset 'g'", "expected [B, T, H, K] = [2, 9, 2, 4]"},
               "--op kda --impl naive");
  expect_error(with("h0", normal({3, 2, 4, 6}, DType::F64)),
               {"dataset 'h0'", "expected [N, H, K, V] = [2, 2, 4, 6]"});
  expect_error(with("do", normal({2, 9, 2, 6}, DType::F32)), {"dataset 'do'", "f32", "f64"});
  expect_error(with("cu_seqlens", Tensor::from_vector({0, 4, 9}, {3}, DType::F64)),
               {"dataset 'cu_seqlens'", "integers"});
  expect_error(good, {"--bf16-twin needs --impl chunk"}, "--op gdn --impl naive --bf16-twin");

  // A file that is not there, one that is not HDF5, and one cut short.
  test::CliResult r = rewy_cli(fmt::format("op --in '{}' --out '{}' --op gdn", file("nope.h5"), out));
  EXPECT_NE(r.code, 0);
  EXPECT_TRUE(has(r.out, file("nope.h5")) && has(r.out, "no such file")) << r.out;
  const std::string cut = file("cut.h5");
  write(cut, good);
  fs::resize_file(cut, fs::file_size(cut) / 2);
  r = rewy_cli(fmt::format("op --in '{}' --out '{}' --op gdn", cut, out));
  EXPECT_NE(r.code, 0);
  EXPECT_TRUE(has(r.out, cut) && has(r.out, "rewy: error")) << r.out;
  std::ofstream(file("text.h5")) << "q k v do\n";
  r = rewy_cli(fmt::format("op --in '{}' --out '{}' --op gdn", file("text.h5"), out));
  EXPECT_NE(r.code, 0);
  EXPECT_TRUE(has(r.out, "not an HDF5 file")) << r.out;
  EXPECT_FALSE(fs::exists(out));

  if (!cuda_available()) {
    write(file("ok.h5"), good);
    r = rewy_cli(fmt::format("op --in '{}' --out '{}' --op gdn --device cuda", file("ok.h5"), out));
    EXPECT_NE(r.code, 0);
    EXPECT_TRUE(has(r.out, "--device cuda")) << r.out;
  }
}

}  // namespace
