// Time of the chunk-map chain (kernels/delta/cuda/map_chain.h, a prototype of the forward state
// pass with one product a step) at the benchmark shapes, beside which `REWY_KERNEL_TIMING=1
// bench_delta` gives the present pass (state_fwd_out) in the same call. Random maps (the chain
// stays bounded: M small, e^γ = 0.99); the L2 flushed before each sample, median of --samples.
//
//   bench_map_chain [--shapes 0,1,2,3,4,5] [--slices 16,32,64] [--samples 20] [Google Benchmark flags]
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "bench/args.h"
#include "bench/bench_util.h"
#include "engine/ops/random.h"
#include "kernels/delta/cuda/map_chain.h"

using namespace rewy;
using namespace rewy::bench;

namespace {

Tensor random_tensor(const Shape& shape, DType dt, uint64_t offset, double lo, double hi) {
  Tensor t = Tensor::empty(shape, dt, cuda(0));
  fill_uniform(t, 4321, offset, lo, hi);
  return t;
}

void bench_case(benchmark::State& state, int si, int bv, int samples) {
  if (!cuda_available()) {
    state.SkipWithError("no CUDA device");
    return;
  }
  const Shape4 sh = kShapes[si];
  const int64_t T = sh.B * sh.T, H = sh.H, K = sh.D, V = sh.D, chunks = sh.B * ((sh.T + 63) / 64);
  delta::cuda_impl::MapChainArgs a;
  for (int64_t b = 0; b <= sh.B; ++b) a.seq_start.push_back(b * sh.T);
  a.M = random_tensor({chunks, H, K, K}, DType::BF16, 1, -1.0 / double(K), 1.0 / double(K));
  a.B = random_tensor({chunks, H, K, V}, DType::BF16, 2, -0.1, 0.1);
  a.Qp = random_tensor({T, H, K}, DType::BF16, 3, -1.0, 1.0);
  a.N = random_tensor({T, H, V}, DType::BF16, 4, -1.0, 1.0);
  a.gexp = Tensor::full({chunks, H, K}, 0.99, DType::F32, cuda(0));
  a.o = Tensor::empty({T, H, V}, DType::BF16, cuda(0));
  a.scale = float(1.0 / std::sqrt(double(K)));
  a.bv = bv;
  const Stream s = Stream::default_for(cuda(0));
  std::vector<double> ms;
  for (auto _ : state) {
    ms = time_samples([&] { delta::cuda_impl::map_chain_forward(a, s); }, samples);
    state.SetIterationTime(median(ms) / 1e3);
  }
  const double med = median(ms);
  state.counters["median_ms"] = med;
  state.counters["us_per_step"] = 1e3 * med / double((sh.T + 63) / 64);  // the chain's steps: one sequence's chunks
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> shapes{0, 1, 2, 3, 4, 5}, slices{16, 32, 64};
  int samples = 20;
  std::vector<char*> rest{argv[0]};
  try {
    for (ArgWalker args(argc, argv); args.next();) {
      const std::string& a = args.flag();
      if (a == "--shapes") shapes = shape_indices(a, args.value());
      else if (a == "--slices") {
        slices.clear();
        for (const auto& x : split(args.value())) slices.push_back(int_in(a, x, {16, 32, 64}, "16, 32 or 64"));
        if (slices.empty()) throw std::invalid_argument(a + " needs at least one of 16, 32 or 64");
      } else if (a == "--samples") samples = int_at_least(a, args.value(), 1, "");
      else rest.push_back(args.word());
    }
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "bench_map_chain: %s\n", e.what());
    return 2;
  }
  for (int si : shapes) {
    for (int bv : slices) {
      const std::string name = "map_chain/shape" + std::to_string(si) + "/bv" + std::to_string(bv);
      benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& st) { bench_case(st, si, bv, samples); })
          ->UseManualTime()
          ->Iterations(1)
          ->Unit(benchmark::kMillisecond);
    }
  }
  int rargc = int(rest.size());
  benchmark::Initialize(&rargc, rest.data());
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
