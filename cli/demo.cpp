// `rewy demo`: a tiny end-to-end run of the engine. A 2-layer MLP (matmul, bias add, SiLU)
// learns a random teacher network from fresh batches by mean-squared error, with the
// hand-written backward of every op and SGD with momentum. Runs on the CPU or on a GPU
// (--device cuda), in f32, in well under a second; exits non-zero if the loss did not fall.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <optional>
#include <string>

#include "cli/commands.h"
#include "engine/copy.h"
#include "engine/device.h"
#include "engine/ops/elementwise.h"
#include "engine/ops/matmul.h"
#include "engine/ops/random.h"
#include "engine/ops/reduce.h"

namespace rewy::cli {
namespace {

struct DemoOptions {
  int steps = 300;
  uint64_t seed = 1234;
  std::string device = "cpu";
};

constexpr int64_t kBatch = 256, kIn = 16, kHidden = 64, kOut = 4, kTeacherHidden = 32;
constexpr double kLr = 0.05, kMomentum = 0.9;

// A parameter with its grad (+=) and momentum buffer.
struct Param {
  Tensor w, grad, velocity;
};

int run_demo(const DemoOptions& opt) {
  REWY_CHECK(opt.steps > 0, "demo: --steps must be positive, got {}", opt.steps);
  const Device dev = parse_device(opt.device);
  if (dev.is_cuda()) {
    REWY_CHECK(cuda_available(), "demo: --device {} but no CUDA device is visible{}", opt.device,
               cuda_built() ? "" : " (built without CUDA)");
    require_supported_gpu(dev);
  }
  std::optional<OwnedStream> owned;
  if (dev.is_cuda()) owned.emplace(dev);
  const Stream st = owned ? owned->get() : Stream::default_for(dev);
  const Stream* s = &st;
  const DType f32 = DType::F32;
  const auto tensor = [&](const Shape& shape) { return Tensor::empty(shape, f32, dev, s); };
  // Stream offsets: 0-9 parameters, 10+ per-step batches.
  const auto normal = [&](const Shape& shape, uint64_t offset, double stddev) {
    Tensor t = tensor(shape);
    fill_normal(t, opt.seed, offset, 0.0, stddev, s);
    return t;
  };
  const auto param = [&](const Shape& shape, uint64_t offset, double stddev) {
    Param p{stddev > 0 ? normal(shape, offset, stddev) : Tensor::zeros(shape, f32, dev, s), tensor(shape),
            Tensor::zeros(shape, f32, dev, s)};
    return p;
  };

  // Teacher: t = tanh(x·T1)·T2. Student: y = silu(x·W1 + b1)·W2 + b2.
  const Tensor t1 = normal({kIn, kTeacherHidden}, 0, 1.0 / std::sqrt(double(kIn)));
  const Tensor t2 = normal({kTeacherHidden, kOut}, 1, 1.0 / std::sqrt(double(kTeacherHidden)));
  Param w1 = param({kIn, kHidden}, 2, 1.0 / std::sqrt(double(kIn))), b1 = param({kHidden}, 3, 0.0);
  Param w2 = param({kHidden, kOut}, 4, 1.0 / std::sqrt(double(kHidden))), b2 = param({kOut}, 5, 0.0);
  Param* params[] = {&w1, &b1, &w2, &b2};

  Tensor x = tensor({kBatch, kIn}), th = tensor({kBatch, kTeacherHidden}), target = tensor({kBatch, kOut});
  Tensor h_pre = tensor({kBatch, kHidden}), h = tensor({kBatch, kHidden}), y = tensor({kBatch, kOut});
  Tensor diff = tensor({kBatch, kOut}), sq = tensor({kBatch, kOut}), loss = tensor({});
  Tensor dloss = Tensor::full({}, 1.0, f32, dev, s), dsq = tensor({kBatch, kOut}), ddiff = tensor({kBatch, kOut});
  Tensor dh = tensor({kBatch, kHidden}), dh_pre = tensor({kBatch, kHidden}), none;

  fmt::print("rewy demo: 2-layer MLP ({} -> {} -> {}, SiLU) fits a random teacher on {}, batch {}, {} steps\n", kIn,
             kHidden, kOut, device_description(dev), kBatch, opt.steps);
  const int every = std::max(1, opt.steps / 10);
  const auto t0 = std::chrono::steady_clock::now();
  double first = 0.0, last = 0.0;
  for (int step = 0; step < opt.steps; ++step) {
    // A fresh batch: x ~ N(0, 1), target from the teacher.
    fill_normal(x, opt.seed, 10 + uint64_t(step), 0.0, 1.0, s);
    matmul_forward(th, x, t1, false, false, 1.0, 0.0, s);
    unary_forward(Unary::Tanh, th, th, s);
    matmul_forward(target, th, t2, false, false, 1.0, 0.0, s);

    // Forward: loss = mean((y - target)^2).
    matmul_forward(h_pre, x, w1.w, false, false, 1.0, 0.0, s);
    binary_forward(Binary::Add, h_pre, h_pre, b1.w, s);
    unary_forward(Unary::Silu, h, h_pre, s);
    matmul_forward(y, h, w2.w, false, false, 1.0, 0.0, s);
    binary_forward(Binary::Add, y, y, b2.w, s);
    binary_forward(Binary::Sub, diff, y, target, s);
    unary_forward(Unary::Square, sq, diff, s);
    mean_all_forward(loss, sq, s);

    // Backward, in reverse: activation grads are written, parameter grads accumulate.
    for (Param* p : params) fill(p->grad, 0.0, s);
    mean_all_backward(dsq, dloss, s);
    unary_backward(Unary::Square, ddiff, dsq, diff, none, s);
    binary_backward(Binary::Add, none, b2.grad, ddiff, y, b2.w, true, s);  // dy = ddiff (sub's da)
    matmul_backward(dh, w2.grad, ddiff, h, w2.w, false, false, 1.0, true, s);
    unary_backward(Unary::Silu, dh_pre, dh, h_pre, none, s);
    binary_backward(Binary::Add, none, b1.grad, dh_pre, h_pre, b1.w, true, s);
    matmul_backward(none, w1.grad, dh_pre, x, w1.w, false, false, 1.0, true, s);

    // SGD with momentum and a linearly decaying rate: v = μ·v + g, w -= lr·v.
    const double lr = kLr * (1.0 - double(step) / opt.steps);
    for (Param* p : params) {
      axpby(p->velocity, 1.0, p->grad, kMomentum, s);
      axpby(p->w, -lr, p->velocity, 1.0, s);
    }

    if (step == 0 || (step + 1) % every == 0 || step + 1 == opt.steps) {
      last = loss.to(cpu(), s).item();
      if (step == 0) first = last;
      fmt::print("step {:5d}  loss {:.6f}\n", step + 1, last);
    }
  }
  synchronize(st);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const bool fell = std::isfinite(last) && last < 0.5 * first;
  fmt::print("loss {:.6f} -> {:.6f} in {:.2f} s ({:.2f} ms/step): {}\n", first, last, secs, 1e3 * secs / opt.steps,
             fell ? "ok" : "the loss did not fall");
  return fell ? 0 : 2;
}

}  // namespace

Command make_demo_command() {
  auto opt = std::make_shared<DemoOptions>();
  Command c;
  c.add_to = [opt](CLI::App& app) {
    CLI::App* sub = app.add_subcommand("demo", "Train a tiny MLP with the engine's ops (CPU or CUDA)");
    sub->add_option("--steps", opt->steps, "training steps")->capture_default_str();
    sub->add_option("--seed", opt->seed, "seed of every random draw")->capture_default_str();
    sub->add_option("--device", opt->device, "cpu, cuda or cuda:N")->capture_default_str();
    return sub;
  };
  c.run_fn = [opt] { return run_demo(*opt); };
  return c;
}

}  // namespace rewy::cli
