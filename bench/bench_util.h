// What the CUDA benchmarks share: FLA's six reference shapes and comma lists (bench/shapes.h),
// and the timing of one call with CUDA events after an L2 flush (median of the samples).
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/shapes.h"
#include "engine/cuda/check_cuda.h"

namespace rewy::bench {

// Times fn (work on the legacy default stream) with CUDA events, the L2 flushed before each
// sample (a memset of flush_mb MB, queued ahead of the start event: the host's own work in fn
// overlaps the flush, as in triton.testing.do_bench), after three warm-up calls (first-use
// attribute setup, allocator pools); returns per-sample milliseconds. host_ms (optional): each
// sample's host time inside fn, in milliseconds.
template <class F>
std::vector<double> time_samples(F&& fn, int samples, int flush_mb = 256, std::vector<double>* host_ms = nullptr) {
  static void* flush = nullptr;
  static size_t flush_bytes = 0;
  if (flush_mb < 1) throw std::invalid_argument("time_samples: flush_mb must be at least 1");
  const size_t want = size_t(flush_mb) << 20;  // 256 MB: > 4x the H200's 60 MB L2
  if (want > flush_bytes) {
    if (flush) CUDA_CHECK(cudaFree(flush));
    CUDA_CHECK(cudaMalloc(&flush, want));
    flush_bytes = want;
  }
  cudaEvent_t a, b;
  CUDA_CHECK(cudaEventCreate(&a));
  CUDA_CHECK(cudaEventCreate(&b));
  for (int i = 0; i < 3; ++i) fn();
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<double> ms;
  for (int i = 0; i < samples; ++i) {
    CUDA_CHECK(cudaMemsetAsync(flush, i & 0xff, want, nullptr));
    CUDA_CHECK(cudaEventRecord(a, nullptr));
    const auto h0 = std::chrono::steady_clock::now();
    fn();
    const auto h1 = std::chrono::steady_clock::now();
    CUDA_CHECK(cudaEventRecord(b, nullptr));
    CUDA_CHECK(cudaEventSynchronize(b));
    float t = 0;
    CUDA_CHECK(cudaEventElapsedTime(&t, a, b));
    ms.push_back(t);
    if (host_ms) host_ms->push_back(std::chrono::duration<double, std::milli>(h1 - h0).count());
  }
  CUDA_CHECK(cudaEventDestroy(a));
  CUDA_CHECK(cudaEventDestroy(b));
  return ms;
}

}  // namespace rewy::bench
