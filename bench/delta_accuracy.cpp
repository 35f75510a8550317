// Relative L2 error of every output and gradient of the CUDA delta-rule kernels against an f64
// reference, at the configuration of ../shared/bench/fla_accuracy.py (B = 1, T = 1024, H = 4,
// D = 128; bf16 q, k, v, beta, b, w; f32 gates and initial state; dO, dht ~ N(0, 1)), so that
// its numbers sit beside FLA's from the same run. Also prints the bf16 CPU twin's error (the
// 2x bar of the GPU tests).
//
//   delta_accuracy [--ops deltanet,gdn,kda,gdn2] [--T 1024] [--H 4] [--realistic] [--seed S]
// (a malformed value: exit 2 naming it, bench/args.h)
// Output lines: "ACC <op> <backward> <policy> <tensor> <error> <twin_error>".
#include <fmt/format.h>

#include <future>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/args.h"
#include "engine/device.h"
#include "kernels/delta/delta.h"
#include "kernels/delta/random_inputs.h"

using namespace rewy;
using namespace rewy::delta;

int main(int argc, char** argv) {
  std::vector<std::string> ops{"deltanet", "gdn", "kda", "gdn2"};
  int64_t T = 1024, H = 4;
  bool realistic = false;
  uint64_t seed = 1;
  try {
    for (bench::ArgWalker args(argc, argv); args.next();) {
      const std::string& a = args.flag();
      if (a == "--ops") ops = bench::op_names(a, args.value());
      else if (a == "--T") T = bench::int_at_least(a, args.value(), 1, " (tokens)");
      else if (a == "--H") H = bench::int_at_least(a, args.value(), 1, " (heads)");
      else if (a == "--seed") seed = bench::parse_int<uint64_t>(a, args.value());
      else if (a == "--realistic") realistic = true;
      else throw std::invalid_argument("unknown argument " + a);
    }
  } catch (const std::invalid_argument& e) {
    fmt::print(stderr, "delta_accuracy: {}\n", e.what());
    return 2;
  }
  if (!cuda_available()) {
    fmt::print(stderr, "delta_accuracy: no CUDA device\n");
    return 1;
  }
  struct Job {
    Variant v;
    RandomCase c;
    std::future<CpuReference> ref;
  };
  std::vector<Job> jobs;
  for (const auto& op : ops) {
    RandomSpec sp;
    sp.variant = parse_variant(op);
    sp.B = 1, sp.T = T, sp.H = H, sp.K = 128, sp.V = 128;
    sp.gates = realistic ? Gates::SafeGate : Gates::Bench;
    sp.seed = seed;
    Job j{sp.variant, make_random_case(sp), {}};
    j.ref = std::async(std::launch::async, cpu_reference, sp.variant, j.c);
    jobs.push_back(std::move(j));
  }
  for (auto& j : jobs) {
    const CpuReference ref = j.ref.get();
    const RandomCase dev = to_cuda(j.c, cuda(0));
    for (BackwardAlgo algo : {BackwardAlgo::ReWY, BackwardAlgo::Baseline})
      for (Policy pol : {Policy::Recompute, Policy::Save}) {
        Config cfg;
        cfg.variant = j.v;
        cfg.backward = algo;
        cfg.policy = pol;
        for (const auto& [key, t] : run_named(cfg, dev))
          fmt::print("ACC {} {} {} {} {:.3e} {:.3e}\n", name(j.v), name(algo), name(pol), key,
                     relative_error(t, ref.exact.at(key)), relative_error(ref.twin.at(key), ref.exact.at(key)));
      }
  }
  return 0;
}
