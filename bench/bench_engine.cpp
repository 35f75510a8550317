// Engine matmul throughput: CPU (OpenBLAS) and CUDA (cuBLASLt, timed with events on a stream of
// its own). Square M = N = K products; the counter is FLOP/s (2·M·N·K per product) over wall
// time (OpenBLAS runs threads of its own).
#include <benchmark/benchmark.h>

#include <optional>

#include "engine/device.h"
#include "engine/ops/matmul.h"
#include "engine/ops/random.h"

#if REWY_WITH_CUDA
#include <cuda_runtime.h>

#include "engine/cuda/check_cuda.h"
#endif

namespace {

using namespace rewy;

Tensor random_matrix(int64_t n, DType dt, Device d, uint64_t offset, const Stream* s) {
  Tensor t = Tensor::empty({n, n}, dt, d, s);
  fill_uniform(t, 42, offset, -1.0, 1.0, s);
  return t;
}

void set_flops(benchmark::State& state, int64_t n) {
  state.counters["FLOP/s"] = benchmark::Counter(2.0 * double(n) * double(n) * double(n),
                                                benchmark::Counter::kIsIterationInvariantRate,
                                                benchmark::Counter::kIs1000);
}

template <DType AB, DType C>
void BM_MatmulCpu(benchmark::State& state) {
  const int64_t n = state.range(0);
  const Tensor a = random_matrix(n, AB, cpu(), 0, nullptr), b = random_matrix(n, AB, cpu(), 1, nullptr);
  Tensor c = Tensor::empty({n, n}, C);
  for (auto _ : state) {
    matmul_forward(c, a, b);
    benchmark::DoNotOptimize(c.data_ptr());
  }
  set_flops(state, n);
}
BENCHMARK(BM_MatmulCpu<DType::F32, DType::F32>)->Arg(64)->Arg(256)->Arg(1024)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_MatmulCpu<DType::F64, DType::F64>)->Arg(256)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_MatmulCpu<DType::BF16, DType::F32>)->Arg(256)->UseRealTime()->Unit(benchmark::kMicrosecond);

template <DType AB, DType C>
void BM_MatmulCuda(benchmark::State& state) {
  if (!cuda_available()) {
    state.SkipWithError("no CUDA device");
    return;
  }
#if REWY_WITH_CUDA
  const int64_t n = state.range(0);
  const Device d = cuda(0);
  const OwnedStream owned(d);
  const Stream& s = owned.get();
  const Tensor a = random_matrix(n, AB, d, 0, &s), b = random_matrix(n, AB, d, 1, &s);
  Tensor c = Tensor::empty({n, n}, C, d, &s);
  matmul_forward(c, a, b, false, false, 1.0, 0.0, &s);  // warm-up: algorithm choice, workspace
  DeviceGuard guard(d);
  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  const auto stream = static_cast<cudaStream_t>(s.handle);
  for (auto _ : state) {
    CUDA_CHECK(cudaEventRecord(start, stream));
    matmul_forward(c, a, b, false, false, 1.0, 0.0, &s);
    CUDA_CHECK(cudaEventRecord(stop, stream));
    CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    state.SetIterationTime(double(ms) * 1e-3);
  }
  CUDA_CHECK(cudaEventDestroy(start));
  CUDA_CHECK(cudaEventDestroy(stop));
  set_flops(state, n);
#endif
}
BENCHMARK(BM_MatmulCuda<DType::BF16, DType::BF16>)
    ->Arg(1024)
    ->Arg(4096)
    ->Arg(8192)
    ->UseManualTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_MatmulCuda<DType::BF16, DType::F32>)->Arg(4096)->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_MatmulCuda<DType::F32, DType::F32>)->Arg(4096)->UseManualTime()->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
