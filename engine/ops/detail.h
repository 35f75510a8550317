// Internal to the engine ops: the argument checks the op front-ends (engine/ops/*.cpp) share,
// and the per-device backends they dispatch to (engine/cpu/*.cpp, engine/cuda/ops_*.cu and
// engine/cuda/matmul.cu). A backend gets validated, contiguous (except gemm's strided
// matrices) tensors of one dtype on its device, and a stream of that device (ignored on CPU).
// C++17: the CUDA sources include it.
#pragma once
#include <cstdint>

#include "engine/ops/elementwise.h"
#include "engine/tensor.h"

namespace rewy::detail {

// ---------------------------------------------------------------------------------------------
// Checks. Each message names the op and the operand.
void check_defined(const char* op, const char* name, const Tensor& t);
// t is defined, contiguous, of dtype `dt` and on device `d` (those of the op's first operand).
void check_operand(const char* op, const char* name, const Tensor& t, DType dt, Device d);
// t has shape `expected`, which is the shape of (or derived from) operand `of`.
void check_shape(const char* op, const char* name, const Tensor& t, const Shape& expected, const char* of);
void check_floating(const char* op, const char* name, const Tensor& t);
// *s if given (and on t's device), else t's device's default stream.
Stream op_stream(const char* op, const Tensor& t, const Stream* s);

// ---------------------------------------------------------------------------------------------
// Backends.
struct ElementwiseBackend {
  void (*unary_forward)(Unary op, const Tensor& y, const Tensor& x, const Stream& s);
  // x or y is undefined when the op does not read it.
  void (*unary_backward)(Unary op, const Tensor& dx, const Tensor& dy, const Tensor& x, const Tensor& y,
                         const Stream& s);
  // b has nb = b.numel() elements and repeats over a's numel / nb rows.
  void (*binary_forward)(Binary op, const Tensor& out, const Tensor& a, const Tensor& b, const Stream& s);
  // da = dout (add, sub) or dout·b (mul); b repeats as in the forward (undefined for add, sub).
  void (*binary_backward_a)(Binary op, const Tensor& da, const Tensor& dout, const Tensor& b, const Stream& s);
  // db[j] (+)= Σ_r dout[r, j]·{1, -1, a[r, j]} over the rows r (a undefined for add, sub).
  void (*binary_backward_b)(Binary op, const Tensor& db, const Tensor& dout, const Tensor& a, bool accumulate,
                            const Stream& s);
  void (*axpby)(const Tensor& y, double alpha, const Tensor& x, double beta, const Stream& s);
};

enum class Reduce : uint8_t { Sum, Mean, Max };

struct ReduceBackend {
  // in [R, N] -> out [R]; argmax [R] i64 for Max, undefined otherwise.
  void (*last)(Reduce op, const Tensor& out, const Tensor& argmax, const Tensor& in, const Stream& s);
  void (*last_backward)(Reduce op, const Tensor& din, const Tensor& dout, const Tensor& argmax, const Stream& s);
  // Sum or Mean of every element into out[0]; the backward broadcasts dout[0] (/ n for Mean).
  void (*all)(Reduce op, const Tensor& out, const Tensor& in, const Stream& s);
  void (*all_backward)(Reduce op, const Tensor& din, const Tensor& dout, const Stream& s);
};

struct RandomBackend {
  // Uniform in [a, b) or normal with mean a and stddev b (engine/rng.h's uniform_as, normal_as).
  void (*fill)(const Tensor& t, bool normal, uint64_t seed, uint64_t offset, double a, double b, const Stream& s);
};

// One strided-batched product of row-major matrices, as stored (before op()):
//   C_b = alpha·op(A_b)·op(B_b) + beta·C_b,   X_b = X + b·stride_x elements, b < batch.
// op(A_b) is [m, k], op(B_b) [k, n], C_b [m, n]; a zero stride_a or stride_b shares that
// operand across the batch. All sizes fit in int32 and m, n, k, batch > 0.
struct GemmArgs {
  int64_t m = 0, n = 0, k = 0, batch = 1;
  bool trans_a = false, trans_b = false;
  const void* a = nullptr;
  int64_t lda = 0, stride_a = 0;
  const void* b = nullptr;
  int64_t ldb = 0, stride_b = 0;
  void* c = nullptr;
  int64_t ldc = 0, stride_c = 0;
  DType ab_dtype = DType::F32, c_dtype = DType::F32;
  double alpha = 1.0, beta = 0.0;
  Device device{};
};

// The same product as a column-major BLAS (cuBLASLt) sees it. Row-major X [r, c] with row
// stride ld is column-major [c, r] with leading dimension ld, and row-major C = op(A)·op(B) is
// column-major Cᵀ = op(B)ᵀ·op(A)ᵀ: `first` is B, `second` is A.
//   D (m x n, ld ldc) = op(first) (m x k) · op(second) (k x n),  m = N, n = M
// Each stored matrix is rows x cols (column-major, before its op) with leading dimension ld.
struct ColumnMajorGemm {
  int64_t m = 0, n = 0, k = 0;
  bool trans_first = false, trans_second = false;
  int64_t rows_first = 0, cols_first = 0, ld_first = 0;
  int64_t rows_second = 0, cols_second = 0, ld_second = 0;
  int64_t ldc = 0;
};
ColumnMajorGemm column_major(const GemmArgs& g);

struct Backend {
  const ElementwiseBackend* elementwise;
  const ReduceBackend* reduce;
  const RandomBackend* random;
  void (*gemm)(const GemmArgs& g, const Stream& s);
};

// The backend of device d; without CUDA a CUDA device is an error naming `op`.
const Backend& backend(Device d, const char* op);

namespace cpu_ops {
extern const ElementwiseBackend elementwise;  // engine/cpu/elementwise.cpp
extern const ReduceBackend reduce;            // engine/cpu/reduce.cpp
extern const RandomBackend random;            // engine/cpu/random.cpp
void gemm(const GemmArgs& g, const Stream& s);  // engine/cpu/matmul.cpp
}  // namespace cpu_ops

#if REWY_WITH_CUDA
namespace cuda_ops {
extern const ElementwiseBackend elementwise;  // engine/cuda/ops_elementwise.cu
extern const ReduceBackend reduce;            // engine/cuda/ops_reduce.cu
extern const RandomBackend random;            // engine/cuda/ops_random.cu
void gemm(const GemmArgs& g, const Stream& s);  // engine/cuda/matmul.cu
}  // namespace cuda_ops
#endif

}  // namespace rewy::detail
