// CUDA-side check macros (only included by code built with REWY_CUDA).
#pragma once
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include "engine/check.h"

#define CUDA_CHECK(expr)                                                                      \
  do {                                                                                        \
    cudaError_t _e = (expr);                                                                  \
    if (_e != cudaSuccess)                                                                    \
      ::rewy::throw_error(__FILE__, __LINE__,                                                 \
                          ::fmt::format("CUDA error {} ({}) in {}", int(_e),                  \
                                        cudaGetErrorString(_e), #expr));                      \
  } while (0)

// After a kernel launch: catches launch-configuration errors at the launch site.
#define CUDA_CHECK_LAUNCH() CUDA_CHECK(cudaGetLastError())

#define CUBLAS_CHECK(expr)                                                                    \
  do {                                                                                        \
    cublasStatus_t _s = (expr);                                                               \
    if (_s != CUBLAS_STATUS_SUCCESS)                                                          \
      ::rewy::throw_error(__FILE__, __LINE__,                                                 \
                          ::fmt::format("cuBLAS error {} ({}) in {}", int(_s),                \
                                        cublasGetStatusString(_s), #expr));                   \
  } while (0)
