// CPU matmul through OpenBLAS (row-major cblas). bf16 operands are widened to f32 matrices
// first and a bf16 C is computed in f32 and rounded once.
#include <cblas.h>

#include <vector>

#include "engine/ops/detail.h"

namespace rewy::detail::cpu_ops {
namespace {

CBLAS_TRANSPOSE flag(bool t) { return t ? CblasTrans : CblasNoTrans; }

// rows x cols bf16 matrix with row stride ld -> compact f32.
std::vector<float> widen(const bf16* p, int64_t rows, int64_t cols, int64_t ld) {
  std::vector<float> out(size_t(rows * cols));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < cols; ++j) out[size_t(r * cols + j)] = float(p[r * ld + j]);
  return out;
}

void gemm_bf16(const GemmArgs& g, const bf16* a, const bf16* b, void* c) {
  const int64_t ar = g.trans_a ? g.k : g.m, ac = g.trans_a ? g.m : g.k;
  const int64_t br = g.trans_b ? g.n : g.k, bc = g.trans_b ? g.k : g.n;
  const std::vector<float> af = widen(a, ar, ac, g.lda), bf = widen(b, br, bc, g.ldb);
  if (g.c_dtype == DType::F32) {
    cblas_sgemm(CblasRowMajor, flag(g.trans_a), flag(g.trans_b), int(g.m), int(g.n), int(g.k), float(g.alpha),
                af.data(), int(ac), bf.data(), int(bc), float(g.beta), static_cast<float*>(c), int(g.ldc));
    return;
  }
  bf16* cp = static_cast<bf16*>(c);
  std::vector<float> cf = g.beta != 0.0 ? widen(cp, g.m, g.n, g.ldc) : std::vector<float>(size_t(g.m * g.n));
  cblas_sgemm(CblasRowMajor, flag(g.trans_a), flag(g.trans_b), int(g.m), int(g.n), int(g.k), float(g.alpha),
              af.data(), int(ac), bf.data(), int(bc), float(g.beta), cf.data(), int(g.n));
  for (int64_t r = 0; r < g.m; ++r)
    for (int64_t j = 0; j < g.n; ++j) cp[r * g.ldc + j] = bf16(cf[size_t(r * g.n + j)]);
}

}  // namespace

void gemm(const GemmArgs& g, const Stream&) {
  const size_t ab = dtype_size(g.ab_dtype), cb = dtype_size(g.c_dtype);
  for (int64_t i = 0; i < g.batch; ++i) {
    const char* a = static_cast<const char*>(g.a) + i * g.stride_a * int64_t(ab);
    const char* b = static_cast<const char*>(g.b) + i * g.stride_b * int64_t(ab);
    char* c = static_cast<char*>(g.c) + i * g.stride_c * int64_t(cb);
    switch (g.ab_dtype) {
      case DType::F64:
        cblas_dgemm(CblasRowMajor, flag(g.trans_a), flag(g.trans_b), int(g.m), int(g.n), int(g.k), g.alpha,
                    reinterpret_cast<const double*>(a), int(g.lda), reinterpret_cast<const double*>(b), int(g.ldb),
                    g.beta, reinterpret_cast<double*>(c), int(g.ldc));
        break;
      case DType::F32:
        cblas_sgemm(CblasRowMajor, flag(g.trans_a), flag(g.trans_b), int(g.m), int(g.n), int(g.k), float(g.alpha),
                    reinterpret_cast<const float*>(a), int(g.lda), reinterpret_cast<const float*>(b), int(g.ldb),
                    float(g.beta), reinterpret_cast<float*>(c), int(g.ldc));
        break;
      case DType::BF16:
        gemm_bf16(g, reinterpret_cast<const bf16*>(a), reinterpret_cast<const bf16*>(b), c);
        break;
      default: REWY_FAIL("matmul: unsupported dtype {}", dtype_name(g.ab_dtype));
    }
  }
}

}  // namespace rewy::detail::cpu_ops
