// Host side of tma.cuh: tensor maps through the driver's cuTensorMapEncodeTiled, reached with
// cudaGetDriverEntryPointByVersion so that nothing links libcuda directly.
#include <cuda_runtime.h>
#include <cudaTypedefs.h>

#include <mutex>

#include "engine/check.h"
#include "engine/cuda/check_cuda.h"
#include "kernels/delta/cuda/tma.cuh"

namespace rewy::delta::cuda_impl::tma {
namespace {

PFN_cuTensorMapEncodeTiled_v12000 encode_fn() {
  static PFN_cuTensorMapEncodeTiled_v12000 fn = nullptr;
  static std::once_flag once;
  std::call_once(once, [] {
    cudaDriverEntryPointQueryResult status{};
    void* p = nullptr;
    CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault, &status));
    REWY_CHECK(status == cudaDriverEntryPointSuccess && p, "the CUDA driver has no cuTensorMapEncodeTiled (TMA)");
    fn = reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(p);
  });
  return fn;
}

}  // namespace

CUtensorMap make_token_map(const void* base, int64_t rows, int64_t H, int64_t D, int box_rows) {
  REWY_CHECK(D % 64 == 0 && D > 0, "TMA token map: D must be a positive multiple of 64, got {}", D);
  REWY_CHECK(box_rows > 0 && box_rows <= 256, "TMA token map: box rows must be in [1, 256], got {}", box_rows);
  REWY_CHECK(reinterpret_cast<uintptr_t>(base) % 16 == 0, "TMA token map: the base address must be 16-byte aligned");
  CUtensorMap map{};
  const cuuint64_t dims[3] = {cuuint64_t(D), cuuint64_t(H), cuuint64_t(rows)};
  const cuuint64_t strides[2] = {cuuint64_t(D) * 2, cuuint64_t(H * D) * 2};  // bytes, dims 1 and 2
  const cuuint32_t box[3] = {64, 1, cuuint32_t(box_rows)};
  const cuuint32_t elem_strides[3] = {1, 1, 1};
  const CUresult r = encode_fn()(&map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 3, const_cast<void*>(base), dims, strides, box,
                                 elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                                 CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  REWY_CHECK(r == CUDA_SUCCESS, "cuTensorMapEncodeTiled failed ({}) for [{}][{}][{}] bf16, box {}x1x64", int(r), rows,
             H, D, box_rows);
  return map;
}

}  // namespace rewy::delta::cuda_impl::tma
