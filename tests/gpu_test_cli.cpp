// `rewy op --device cuda` (a subprocess) against the CUDA kernels called directly on the same
// inputs: the subcommand must cast f64 HDF5 inputs to what the kernels take (bf16 activations, f32
// gates and states), run them, and write every output as f32 in its input's layout.
#include <gtest/gtest.h>

#include <map>

#include "engine/io/h5.h"
#include "kernels/delta/delta.h"
#include "kernels/delta/random_inputs.h"
#include "test_io_util.h"

using namespace rewy;

namespace {

class GpuOp : public test::FileTest {};

// Same kernels on the same values, so only the order of atomic f32 additions may differ between
// the two runs; after the bf16 stores between kernels that is a few bf16 rounding steps at most:
// 4·2^-8 relative (L2). A wrong dataset, layout or cast gives errors of order 1.
TEST_F(GpuOp, MatchesDirectKernelCalls) {
  if (!cuda_available()) GTEST_SKIP() << "no CUDA device";
  using V = delta::Variant;
  for (V variant : {V::DeltaNet, V::GDN, V::KDA, V::GDN2}) {
    delta::RandomSpec spec;
    spec.variant = variant;
    spec.B = 1, spec.T = 100, spec.H = 2, spec.K = 64, spec.V = 64;
    if (variant == V::GDN2) spec.seqlens = {37, 63};
    spec.seed = seed_ + uint64_t(variant);
    const delta::RandomCase c = delta::make_random_case(spec);  // f64, bf16-valued activations
    const std::string op = delta::name(variant);
    SCOPED_TRACE(op);

    const std::string in = file(op + "_in.h5"), out = file(op + "_out.h5");
    {
      io::H5File f = io::H5File::create(in);
      const std::vector<std::pair<const char*, const Tensor*>> ts = {
          {"q", &c.in.q},  {"k", &c.in.k},   {"v", &c.in.v},   {"do", &c.dout}, {"beta", &c.in.beta},
          {"g", &c.in.g},  {"b", &c.in.b},   {"w", &c.in.w},   {"h0", &c.in.h0}, {"dht", &c.dht},
          {"cu_seqlens", &c.in.cu_seqlens}};
      for (const auto& [name, t] : ts)
        if (t->defined()) f.write(name, *t);
      f.close();
    }
    const test::CliResult r = test::rewy_cli(fmt::format("op --in '{}' --out '{}' --op {} --device cuda", in, out, op));
    ASSERT_EQ(r.code, 0) << r.out;

    delta::Config cfg;
    cfg.variant = variant;
    const delta::RandomCase dev = delta::to_cuda(c, cuda(0));
    const delta::ForwardResult fwd = delta::forward(cfg, dev.in);
    const delta::Grads g = delta::backward(cfg, dev.in, fwd, dev.dout, dev.dht);
    std::map<std::string, Tensor> want = {{"o", fwd.o},   {"ht", fwd.ht},   {"dq", g.dq}, {"dk", g.dk},
                                          {"dv", g.dv},   {"dbeta", g.dbeta}, {"dg", g.dg}, {"db", g.db},
                                          {"dw", g.dw},   {"dh0", g.dh0}};
    std::vector<std::string> names;
    for (const auto& [name, t] : want)
      if (t.defined()) names.push_back(name);

    io::H5File f = io::H5File::open(out);
    EXPECT_EQ(f.datasets(), names);
    EXPECT_EQ(f.attr_string("device"), "cuda:0");
    for (const std::string& name : names) {
      if (!f.has(name)) continue;  // reported by the datasets() comparison
      const Tensor got = f.read(name);
      EXPECT_EQ(got.dtype(), DType::F32) << name;
      ASSERT_EQ(got.shape(), want[name].shape()) << name;
      EXPECT_LE(delta::relative_error(got, want[name]), 4.0 / 256) << name;
    }
  }
}

}  // namespace
