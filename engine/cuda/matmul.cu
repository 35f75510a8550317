// CUDA matmul through cuBLASLt: bf16 or f32 inputs, fp32 compute (CUBLAS_COMPUTE_32F: no TF32),
// bf16 or f32 output. cuBLASLt is column-major: column_major() (engine/ops/detail.h, tested on
// the CPU) maps the row-major product onto it, B first. f64, and any layout for which cuBLASLt
// offers no algorithm, take a plain kernel (one thread per output element): slow, never wrong.
//
// State is per thread: one cuBLASLt handle per device and one workspace per (device, stream),
// since two streams must never share a workspace. Chosen algorithms are cached per problem.
#include <cublasLt.h>

#include <map>
#include <type_traits>
#include <memory>
#include <tuple>
#include <utility>
#include <vector>

#include "engine/cuda/ops_common.cuh"
#include "engine/ops/detail.h"

namespace rewy::detail::cuda_ops {
namespace {

constexpr size_t kWorkspaceBytes = size_t(32) << 20;  // what cuBLAS asks for on Hopper

// The problem as cuBLASLt sees it; also the key of the algorithm cache.
struct Problem {
  cublasOperation_t op_first, op_second;  // applied to B (first) and A (second)
  uint64_t rows_first, cols_first, rows_second, cols_second, m, n;
  int64_t ld_first, ld_second, ldc, stride_first, stride_second, stride_c;
  int32_t batch;
  cudaDataType_t ab_type, c_type;
  uint32_t align_first, align_second, align_c;
  auto key() const {
    return std::make_tuple(int(op_first), int(op_second), rows_first, cols_first, rows_second, cols_second, m, n,
                           ld_first, ld_second, ldc, stride_first, stride_second, stride_c, batch, int(ab_type),
                           int(c_type), align_first, align_second, align_c);
  }
};
using ProblemKey = decltype(std::declval<Problem>().key());

struct Workspace {
  void* ptr = nullptr;
  ~Workspace() { cudaFree(ptr); }  // thread exit; errors at process teardown are moot
};

struct DeviceState {
  cublasLtHandle_t handle = nullptr;
  std::map<void*, std::unique_ptr<Workspace>> workspaces;  // by stream
  std::map<ProblemKey, std::pair<bool, cublasLtMatmulAlgo_t>> algos;  // (found, algorithm)
  ~DeviceState() {
    if (handle) cublasLtDestroy(handle);
  }
};

DeviceState& state_for(int device) {
  thread_local std::vector<std::unique_ptr<DeviceState>> states;
  if (states.size() <= size_t(device)) states.resize(size_t(device) + 1);
  if (!states[size_t(device)]) {
    auto st = std::make_unique<DeviceState>();
    CUBLAS_CHECK(cublasLtCreate(&st->handle));
    states[size_t(device)] = std::move(st);
  }
  return *states[size_t(device)];
}

void* workspace_for(DeviceState& st, const Stream& s) {
  auto& ws = st.workspaces[s.handle];
  if (!ws) {
    auto w = std::make_unique<Workspace>();
    CUDA_CHECK(cudaMalloc(&w->ptr, kWorkspaceBytes));
    ws = std::move(w);
  }
  return ws->ptr;
}

cudaDataType_t cuda_type(DType t) {
  switch (t) {
    case DType::F32: return CUDA_R_32F;
    case DType::BF16: return CUDA_R_16BF;
    default: REWY_FAIL("matmul on CUDA: {} is not supported (f32 and bf16 are)", dtype_name(t));
  }
}

// The largest power of two (up to 256) dividing the address: cuBLASLt's heuristic otherwise
// assumes 256-byte aligned matrices, which a view into a tensor need not be.
uint32_t alignment(const void* p) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(p);
  uint32_t al = 256;
  while (al > 1 && a % al) al >>= 1;
  return al;
}

struct LayoutDesc {
  cublasLtMatrixLayout_t d = nullptr;
  LayoutDesc(cudaDataType_t t, uint64_t rows, uint64_t cols, int64_t ld, int32_t batch, int64_t stride) {
    CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&d, t, rows, cols, ld));
    if (batch > 1) {
      CUBLAS_CHECK(cublasLtMatrixLayoutSetAttribute(d, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch, sizeof(batch)));
      CUBLAS_CHECK(
          cublasLtMatrixLayoutSetAttribute(d, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof(stride)));
    }
  }
  ~LayoutDesc() { cublasLtMatrixLayoutDestroy(d); }
  LayoutDesc(const LayoutDesc&) = delete;
  LayoutDesc& operator=(const LayoutDesc&) = delete;
};

struct MatmulDesc {
  cublasLtMatmulDesc_t d = nullptr;
  MatmulDesc(cublasOperation_t op_first, cublasOperation_t op_second) {
    CUBLAS_CHECK(cublasLtMatmulDescCreate(&d, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(d, CUBLASLT_MATMUL_DESC_TRANSA, &op_first, sizeof(op_first)));
    CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(d, CUBLASLT_MATMUL_DESC_TRANSB, &op_second, sizeof(op_second)));
  }
  ~MatmulDesc() { cublasLtMatmulDescDestroy(d); }
  MatmulDesc(const MatmulDesc&) = delete;
  MatmulDesc& operator=(const MatmulDesc&) = delete;
};

struct Preference {
  cublasLtMatmulPreference_t d = nullptr;
  explicit Preference(const Problem& p) {
    CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&d));
    const uint64_t ws = kWorkspaceBytes;
    CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(d, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws)));
    CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(d, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &p.align_first,
                                                      sizeof(uint32_t)));
    CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(d, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &p.align_second,
                                                      sizeof(uint32_t)));
    CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(d, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &p.align_c,
                                                      sizeof(uint32_t)));
    CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(d, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &p.align_c,
                                                      sizeof(uint32_t)));
  }
  ~Preference() { cublasLtMatmulPreferenceDestroy(d); }
  Preference(const Preference&) = delete;
  Preference& operator=(const Preference&) = delete;
};

// C_b = alpha·op(A_b)·op(B_b) + beta·C_b straight from the row-major description, accumulated
// in f32 (f64 for f64).
template <typename TA, typename TC> __global__ void naive_gemm_kernel(GemmArgs g) {
  using Acc = std::conditional_t<std::is_same_v<TA, double>, double, float>;
  const int64_t total = g.batch * g.m * g.n;
  REWY_GRID_LOOP(idx, total) {
    const int64_t z = idx / (g.m * g.n), i = idx / g.n % g.m, j = idx % g.n;
    const TA* a = static_cast<const TA*>(g.a) + z * g.stride_a;
    const TA* b = static_cast<const TA*>(g.b) + z * g.stride_b;
    TC* c = static_cast<TC*>(g.c) + z * g.stride_c + i * g.ldc + j;
    Acc sum = Acc(0);
    for (int64_t k = 0; k < g.k; ++k) {
      const TA av = g.trans_a ? a[k * g.lda + i] : a[i * g.lda + k];
      const TA bv = g.trans_b ? b[j * g.ldb + k] : b[k * g.ldb + j];
      sum += Acc(av) * Acc(bv);
    }
    Acc v = Acc(g.alpha) * sum;
    if (g.beta != 0.0) v += Acc(g.beta) * Acc(*c);
    *c = TC(v);
  }
}

void naive_gemm(const GemmArgs& g, const Stream& s) {
  const int grid = grid_for(g.batch * g.m * g.n);
  const auto launch = [&](auto a, auto c) {
    naive_gemm_kernel<decltype(a), decltype(c)><<<grid, kBlock, 0, stream_of(s)>>>(g);
  };
  if (g.ab_dtype == DType::F64) launch(double{}, double{});
  else if (g.ab_dtype == DType::F32) launch(float{}, float{});
  else if (g.c_dtype == DType::F32) launch(bf16{}, float{});
  else launch(bf16{}, bf16{});
  CUDA_CHECK_LAUNCH();
}

// One cuBLASLt call for g (whose shared operands, if any, have a nonzero stride or batch 1);
// false when cuBLASLt has no algorithm for it.
bool lt_matmul(const GemmArgs& g, const Stream& s) {
  DeviceState& st = state_for(g.device.index);
  const ColumnMajorGemm cm = column_major(g);
  Problem p{};
  p.op_first = cm.trans_first ? CUBLAS_OP_T : CUBLAS_OP_N;
  p.op_second = cm.trans_second ? CUBLAS_OP_T : CUBLAS_OP_N;
  p.rows_first = uint64_t(cm.rows_first), p.cols_first = uint64_t(cm.cols_first);
  p.rows_second = uint64_t(cm.rows_second), p.cols_second = uint64_t(cm.cols_second);
  p.m = uint64_t(cm.m), p.n = uint64_t(cm.n);
  p.ld_first = cm.ld_first, p.ld_second = cm.ld_second, p.ldc = cm.ldc;
  p.stride_first = g.stride_b, p.stride_second = g.stride_a, p.stride_c = g.stride_c;
  p.batch = int32_t(g.batch);
  p.ab_type = cuda_type(g.ab_dtype), p.c_type = cuda_type(g.c_dtype);
  p.align_first = alignment(g.b), p.align_second = alignment(g.a), p.align_c = alignment(g.c);

  const MatmulDesc desc(p.op_first, p.op_second);
  const LayoutDesc first(p.ab_type, p.rows_first, p.cols_first, p.ld_first, p.batch, p.stride_first);
  const LayoutDesc second(p.ab_type, p.rows_second, p.cols_second, p.ld_second, p.batch, p.stride_second);
  const LayoutDesc c(p.c_type, p.m, p.n, p.ldc, p.batch, p.stride_c);

  auto it = st.algos.find(p.key());
  if (it == st.algos.end()) {
    const Preference pref(p);
    cublasLtMatmulHeuristicResult_t res{};
    int found = 0;
    // No algorithm is an answer (CUBLAS_STATUS_NOT_SUPPORTED), not an error.
    const cublasStatus_t status =
        cublasLtMatmulAlgoGetHeuristic(st.handle, desc.d, first.d, second.d, c.d, c.d, pref.d, 1, &res, &found);
    if (status != CUBLAS_STATUS_NOT_SUPPORTED) CUBLAS_CHECK(status);
    it = st.algos.emplace(p.key(), std::make_pair(status == CUBLAS_STATUS_SUCCESS && found > 0, res.algo)).first;
  }
  if (!it->second.first) return false;
  const float alpha = float(g.alpha), beta = float(g.beta);
  CUBLAS_CHECK(cublasLtMatmul(st.handle, desc.d, &alpha, g.b, first.d, g.a, second.d, &beta, g.c, c.d, g.c, c.d,
                              &it->second.second, workspace_for(st, s), kWorkspaceBytes, stream_of(s)));
  return true;
}

}  // namespace

void gemm(const GemmArgs& g, const Stream& s) {
  DeviceGuard guard(g.device);
  if (g.ab_dtype == DType::F64) return naive_gemm(g, s);
  if (g.batch == 1 || (g.stride_a != 0 && g.stride_b != 0)) {
    if (!lt_matmul(g, s)) naive_gemm(g, s);
    return;
  }
  // A shared operand (stride 0) that could not be folded away: one call per batch.
  const size_t ab = dtype_size(g.ab_dtype), cb = dtype_size(g.c_dtype);
  for (int64_t i = 0; i < g.batch; ++i) {
    GemmArgs one = g;
    one.batch = 1;
    one.a = static_cast<const char*>(g.a) + i * g.stride_a * int64_t(ab);
    one.b = static_cast<const char*>(g.b) + i * g.stride_b * int64_t(ab);
    one.c = static_cast<char*>(g.c) + i * g.stride_c * int64_t(cb);
    if (!lt_matmul(one, s)) naive_gemm(one, s);
  }
}

}  // namespace rewy::detail::cuda_ops
