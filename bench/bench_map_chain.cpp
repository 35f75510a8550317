// Time of the chunk-map chain (kernels/delta/cuda/map_chain.h, a prototype of the forward state
// pass with one product a step) at the benchmark shapes, beside which `REWY_KERNEL_TIMING=1
// bench_delta` gives the present pass (state_fwd_out) in the same call. Random maps (the chain
// stays bounded: M small, e^γ = 0.99); the L2 flushed before each sample, median of --samples.
//
//   bench_map_chain [--shapes 0,1,2,3,4,5] [--slices 16,32,64] [--samples 20] [--split-output]
//                   [Google Benchmark flags]
#include <benchmark/benchmark.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "engine/cuda/check_cuda.h"
#include "engine/ops/random.h"
#include "kernels/delta/cuda/map_chain.h"

using namespace rewy;

namespace {

struct Shape4 {
  int64_t B, T, H, D;
};
const Shape4 kShapes[] = {{8, 2048, 16, 128}, {4, 4096, 16, 128}, {2, 8192, 16, 128},
                          {1, 16384, 16, 128}, {8, 4096, 32, 128}, {1, 32768, 32, 128}};

std::vector<int> parse_ints(const std::string& s) {
  std::vector<int> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty()) out.push_back(std::stoi(item));
  return out;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

Tensor random_tensor(const Shape& shape, DType dt, uint64_t offset, double lo, double hi) {
  Tensor t = Tensor::empty(shape, dt, cuda(0));
  fill_uniform(t, 4321, offset, lo, hi);
  return t;
}

void bench_case(benchmark::State& state, int si, int bv, int samples, bool split) {
  if (!cuda_available()) {
    state.SkipWithError("no CUDA device");
    return;
  }
  static void* flush = nullptr;
  constexpr size_t kFlushBytes = size_t(256) << 20;  // > 4x the H200's 60 MB L2
  if (!flush) CUDA_CHECK(cudaMalloc(&flush, kFlushBytes));
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
  a.split_output = split;
  const Stream s = Stream::default_for(cuda(0));
  cudaEvent_t e0, e1;
  CUDA_CHECK(cudaEventCreate(&e0));
  CUDA_CHECK(cudaEventCreate(&e1));
  std::vector<double> ms;
  for (auto _ : state) {
    for (int i = 0; i < 3; ++i) delta::cuda_impl::map_chain_forward(a, s);  // warm-up
    CUDA_CHECK(cudaDeviceSynchronize());
    ms.clear();
    for (int i = 0; i < samples; ++i) {
      CUDA_CHECK(cudaMemsetAsync(flush, i & 0xff, kFlushBytes, nullptr));
      CUDA_CHECK(cudaEventRecord(e0, nullptr));
      delta::cuda_impl::map_chain_forward(a, s);
      CUDA_CHECK(cudaEventRecord(e1, nullptr));
      CUDA_CHECK(cudaEventSynchronize(e1));
      float t = 0;
      CUDA_CHECK(cudaEventElapsedTime(&t, e0, e1));
      ms.push_back(t);
    }
    state.SetIterationTime(median(ms) / 1e3);
  }
  CUDA_CHECK(cudaEventDestroy(e0));
  CUDA_CHECK(cudaEventDestroy(e1));
  const double med = median(ms);
  state.counters["median_ms"] = med;
  state.counters["us_per_step"] = 1e3 * med / double((sh.T + 63) / 64);  // the chain's steps: one sequence's chunks
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> shapes{0, 1, 2, 3, 4, 5}, slices{16, 32, 64};
  int samples = 20;
  bool split = false;
  std::vector<char*> rest{argv[0]};
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if ((a == "--shapes" || a == "--slices" || a == "--samples") && i + 1 >= argc) {
      std::fprintf(stderr, "bench_map_chain: %s needs a value\n", a.c_str());
      return 2;
    }
    if (a == "--shapes") shapes = parse_ints(argv[++i]);
    else if (a == "--slices") slices = parse_ints(argv[++i]);
    else if (a == "--samples") samples = std::stoi(argv[++i]);
    else if (a == "--split-output") split = true;
    else rest.push_back(argv[i]);
  }
  for (int si : shapes) {
    if (si < 0 || si > 5) {
      std::fprintf(stderr, "bench_map_chain: shape %d is not in 0..5\n", si);
      return 2;
    }
    for (int bv : slices) {
      const std::string name =
          "map_chain/shape" + std::to_string(si) + "/bv" + std::to_string(bv) + (split && bv >= 32 ? "/split" : "");
      benchmark::RegisterBenchmark(name.c_str(), [=](benchmark::State& st) { bench_case(st, si, bv, samples, split); })
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
