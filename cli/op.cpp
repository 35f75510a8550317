// `rewy op`: one delta-rule operator, forward then backward, on tensors read from an HDF5 file;
// the outputs and gradients go to another HDF5 file. Layouts are FLA's (kernels/delta/delta.h);
// the README lists the datasets and flags.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>

#include "cli/commands.h"
#include "engine/io/h5.h"
#include "kernels/delta/delta.h"

namespace rewy::cli {
namespace {

struct OpArgs {
  std::string in, out, op, backward = "rewy", impl = "chunk", policy = "recompute", device = "cpu";
  int chunk = 64;
  double scale = 0.0;
  bool bf16_twin = false;  // CPU: f32 arithmetic rounding to bf16 where the CUDA kernels store bf16
};

// Sizes named by letters (B, T, H, K, V, N), bound by the first dataset that has them, so that
// every later mismatch is reported against the sizes already known.
class Sizes {
 public:
  explicit Sizes(const io::H5File& f) : f_(f) {}

  // Reads dataset `name`, whose shape must spell `dims` (one letter a dimension).
  Tensor read(const std::string& name, const std::string& dims) {
    REWY_CHECK(f_.has(name), "dataset '{}' is missing from '{}' (expected shape {})", name, f_.path(),
               expected(dims));
    Tensor t = f_.read(name);
    bool ok = t.dim() == int(dims.size());
    for (int i = 0; ok && i < t.dim(); ++i) ok = !size_.count(dims[i]) || size_.at(dims[i]) == t.size(i);
    REWY_CHECK(ok, "dataset '{}' in '{}' has shape {}, expected {}", name, f_.path(), shape_str(t.shape()),
               expected(dims));
    for (int i = 0; i < t.dim(); ++i) size_.emplace(dims[i], t.size(i));
    return t;
  }
  // cu_seqlens: [N + 1] integers; binds N.
  Tensor read_offsets(const std::string& name) {
    Tensor t = f_.read(name);
    REWY_CHECK(t.dim() == 1 && t.size(0) >= 2, "dataset '{}' in '{}' has shape {}, expected [N + 1] with N >= 1",
               name, f_.path(), shape_str(t.shape()));
    REWY_CHECK(t.dtype() == DType::I32 || t.dtype() == DType::I64,
               "dataset '{}' in '{}' holds {}: expected integers (i32 or i64)", name, f_.path(), dtype_name(t.dtype()));
    size_.emplace('N', t.size(0) - 1);
    return t;
  }
  int64_t operator[](char c) const { return size_.at(c); }
  void bind(char c, int64_t n) { size_.emplace(c, n); }

 private:
  // "[B, T, H, V] = [2, 64, 4, V]": the letters, then the sizes known so far.
  std::string expected(const std::string& dims) const {
    std::string letters, sizes;
    bool any = false;
    for (size_t i = 0; i < dims.size(); ++i) {
      const auto it = size_.find(dims[i]);
      any |= it != size_.end();
      letters += fmt::format("{}{}", i ? ", " : "", dims[i]);
      sizes += (i ? ", " : "") + (it != size_.end() ? std::to_string(it->second) : std::string(1, dims[i]));
    }
    return any ? fmt::format("[{}] = [{}]", letters, sizes) : fmt::format("[{}]", letters);
  }
  const io::H5File& f_;
  std::map<char, int64_t> size_;
};

int run_op(const OpArgs& a) {
  REWY_CHECK(a.chunk > 0, "--chunk must be positive, got {}", a.chunk);
  delta::Config cfg;
  cfg.variant = delta::parse_variant(a.op);
  cfg.impl = delta::parse_impl(a.impl);
  cfg.backward = delta::parse_backward(a.backward);
  cfg.policy = delta::parse_policy(a.policy);
  cfg.chunk = a.chunk;
  cfg.scale = a.scale;
  const Device dev = parse_device(a.device);
  const delta::Variant var = cfg.variant;

  const io::H5File f = io::H5File::open(a.in);
  Sizes d(f);
  delta::Inputs in;
  in.q = d.read("q", "BTHK");
  in.v = d.read("v", "BTHV");
  in.k = d.read("k", "BTHK");
  Tensor dout = d.read("do", "BTHV");
  if (delta::has_beta(var)) in.beta = d.read("beta", "BTH");
  if (delta::has_gate(var)) in.g = d.read("g", delta::channel_gate(var) ? "BTHK" : "BTH");
  if (var == delta::Variant::GDN2) {
    in.b = d.read("b", "BTHK");
    in.w = d.read("w", "BTHV");
  }
  if (f.has("cu_seqlens")) in.cu_seqlens = d.read_offsets("cu_seqlens");
  else d.bind('N', d['B']);
  if (f.has("h0")) in.h0 = d.read("h0", "NHKV");
  Tensor dht;
  if (f.has("dht")) dht = d.read("dht", "NHKV");

  // One float dtype for every input: it is also the dtype of the outputs on the CPU.
  const DType dt = in.q.dtype();
  REWY_CHECK(dt == DType::F32 || dt == DType::F64, "dataset 'q' in '{}' holds {}: expected f32 or f64", a.in,
             dtype_name(dt));
  const std::vector<std::pair<const char*, Tensor*>> floats = {{"k", &in.k},     {"v", &in.v},   {"do", &dout},
                                                               {"beta", &in.beta}, {"g", &in.g},   {"b", &in.b},
                                                               {"w", &in.w},     {"h0", &in.h0}, {"dht", &dht}};
  for (const auto& [name, t] : floats)
    REWY_CHECK(!t->defined() || t->dtype() == dt, "dataset '{}' in '{}' holds {} but q holds {}: use one float dtype",
               name, a.in, dtype_name(t->dtype()), dtype_name(dt));
  for (const std::string& name : f.datasets())
    if (!(name == "q" || name == "cu_seqlens" ||
          std::any_of(floats.begin(), floats.end(), [&](const auto& p) { return name == p.first && p.second->defined(); })))
      fmt::print(stderr, "rewy op: note: dataset '{}' is not an input of {}; ignored\n", name, delta::name(var));

  DType out_dt = dt;
  if (a.bf16_twin) {
    REWY_CHECK(dev.is_cpu(), "--bf16-twin is the CPU model of the CUDA kernels' rounding: use it with --device cpu");
    REWY_CHECK(cfg.impl == delta::Impl::Chunk, "--bf16-twin needs --impl chunk");
    cfg.round_to_bf16 = true;
    for (const auto& [name, t] : floats)
      if (t->defined()) *t = t->to(DType::F32);
    in.q = in.q.to(DType::F32);
    out_dt = DType::F32;
  }
  if (dev.is_cuda()) {
    REWY_CHECK(cuda_available(), "--device {}: {}", a.device,
               cuda_built() ? "no CUDA device is visible" : "rewy was built without CUDA (-DREWY_CUDA=OFF)");
    REWY_CHECK(cfg.impl == delta::Impl::Chunk, "--impl naive runs on the CPU only; use --impl chunk on {}", a.device);
    // What the CUDA kernels take: bf16 activations, f32 gates and states, integer offsets.
    auto put = [&](Tensor& t, DType to) {
      if (!t.defined()) return;
      Tensor g = Tensor::empty(t.shape(), to, dev);
      g.copy_from(t);
      t = g;
    };
    for (Tensor* t : {&in.q, &in.k, &in.v, &dout, &in.beta, &in.b, &in.w}) put(*t, DType::BF16);
    for (Tensor* t : {&in.g, &in.h0, &dht}) put(*t, DType::F32);
    put(in.cu_seqlens, in.cu_seqlens.defined() ? in.cu_seqlens.dtype() : DType::I64);
    out_dt = DType::F32;
  }

  const delta::Dims dims = delta::check_inputs(cfg, in);
  const delta::ForwardResult fwd = delta::forward(cfg, in);
  const delta::Grads gr = delta::backward(cfg, in, fwd, dout, dht);

  const std::vector<std::pair<const char*, const Tensor*>> outs = {
      {"o", &fwd.o},    {"ht", &fwd.ht},   {"dq", &gr.dq}, {"dk", &gr.dk}, {"dv", &gr.dv},
      {"dbeta", &gr.dbeta}, {"dg", &gr.dg}, {"db", &gr.db}, {"dw", &gr.dw}, {"dh0", &gr.dh0}};
  std::string written;
  io::write_h5_atomic(a.out, [&](io::H5File& o) {
    for (const auto& [name, t] : outs) {
      if (!t->defined()) continue;
      o.write(name, t->to(cpu()).to(out_dt));
      written += fmt::format(" {}", name);
    }
    o.set_attr("op", delta::name(var));
    o.set_attr("impl", delta::name(cfg.impl));
    o.set_attr("backward", delta::name(cfg.backward));
    o.set_attr("policy", delta::name(cfg.policy));
    o.set_attr("chunk", cfg.chunk);
    o.set_attr("scale", cfg.scale > 0 ? cfg.scale : 1.0 / std::sqrt(double(dims.K)));
    o.set_attr("device", dev.str());
    o.set_attr("bf16_twin", a.bf16_twin ? 1 : 0);
  });
  fmt::print("rewy op: {} impl={} backward={} policy={} chunk={} on {}: B={} T={} H={} K={} V={} N={} ({})\n",
             delta::name(var), delta::name(cfg.impl), delta::name(cfg.backward), delta::name(cfg.policy), cfg.chunk,
             dev.str(), dims.B, dims.T, dims.H, dims.K, dims.V, dims.N, dtype_name(out_dt));
  fmt::print("wrote{} to {}\n", written, a.out);
  return 0;
}

}  // namespace

Command make_op_command() {
  auto a = std::make_shared<OpArgs>();
  Command c;
  c.add_to = [a](CLI::App& app) {
    CLI::App* s = app.add_subcommand("op", "Run one delta-rule operator forward and backward on HDF5 tensors");
    s->add_option("--in", a->in, "Input HDF5 file: q k v do [beta g b w h0 dht cu_seqlens]")->required();
    s->add_option("--out", a->out, "Output HDF5 file: o ht dq dk dv [dbeta dg db dw dh0]")->required();
    s->add_option("--op", a->op, "Operator")->required()->check(CLI::IsMember({"deltanet", "gdn", "kda", "gdn2"}));
    s->add_option("--impl", a->impl, "CPU algorithm: token recurrence or chunkwise (CUDA: chunk)")
        ->check(CLI::IsMember({"naive", "chunk"}))
        ->capture_default_str();
    s->add_option("--backward", a->backward, "Chunk backward: ReWY or FLA's")
        ->check(CLI::IsMember({"rewy", "baseline"}))
        ->capture_default_str();
    s->add_option("--policy", a->policy, "What the forward keeps for the backward")
        ->check(CLI::IsMember({"recompute", "save"}))
        ->capture_default_str();
    s->add_option("--chunk", a->chunk, "Chunk size")->capture_default_str();
    s->add_option("--scale", a->scale, "Output scale (0: 1/sqrt(K))")->capture_default_str();
    s->add_option("--device", a->device, "cpu, cuda or cuda:N")->capture_default_str();
    s->add_flag("--bf16-twin", a->bf16_twin,
                "CPU only: f32 arithmetic that rounds inputs and stored intermediates to bf16 where the CUDA "
                "kernels do (the reference their error bar derives from)");
    return s;
  };
  c.run_fn = [a] { return run_op(*a); };
  return c;
}

}  // namespace rewy::cli
