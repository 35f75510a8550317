// The one GEMM of the CPU chunk path, with a counter. Every chunk-local matrix product goes through
// local_gemm() (or, for a composite product such as the block-decomposed gated contractions of §6,
// through record_gemm() once plus gemm() for its pieces), so a test can assert the exact list of
// WY products per chunk (§4, §5) and the ReWY reformulation cannot silently regress.
//
// Shapes are recorded as (m, n, k): output m×n, inner dimension k.
// Stages: "fwd" (forward), "replay" (what the Recompute backward rebuilds), "bwd" (output and state
// part of the backward, §3), "wy" (the WY backward: R1-R3 or B1-B7).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace rewy::delta::cpu {

struct GemmCall {
  std::string stage, tag;
  int64_t m = 0, n = 0, k = 0;
};

// While alive, records every product of the calling thread (recorders nest; the innermost records).
class GemmRecorder {
 public:
  GemmRecorder();
  ~GemmRecorder();
  GemmRecorder(const GemmRecorder&) = delete;
  GemmRecorder& operator=(const GemmRecorder&) = delete;

  const std::vector<GemmCall>& calls() const { return calls_; }
  std::vector<GemmCall> calls(const std::string& stage) const;
  // Diagonal sub-chunk blocks whose gate span forced the pairwise evaluation (§6 fallback).
  int64_t pairwise_blocks() const { return pairwise_blocks_; }

 private:
  friend void record_gemm(const char*, const char*, int64_t, int64_t, int64_t);
  friend void record_pairwise_block();
  std::vector<GemmCall> calls_;
  int64_t pairwise_blocks_ = 0;
  GemmRecorder* prev_ = nullptr;
};

void record_gemm(const char* stage, const char* tag, int64_t m, int64_t n, int64_t k);
void record_pairwise_block();

// C[m×n] = alpha·op(A)·op(B) + beta·C, row-major with leading dimensions. op(A) is m×k: A[i*lda + p],
// or A[p*lda + i] when ta. op(B) is k×n: B[p*ldb + j], or B[j*ldb + p] when tb. Accumulates in T
// (f32 for the f32 path, as the GPU accumulators), in a fixed order. beta == 0 never reads C.
// Uncounted: only for the pieces of a product that was recorded.
template <typename T>
void gemm(int m, int n, int k, T alpha, const T* A, int lda, bool ta, const T* B, int ldb, bool tb, T beta, T* C,
          int ldc) {
  std::vector<T> bt, acc(static_cast<size_t>(n));
  if (tb) {  // pack op(B) so the inner loop is contiguous
    bt.resize(size_t(k) * n);
    for (int p = 0; p < k; ++p)
      for (int j = 0; j < n; ++j) bt[size_t(p) * n + j] = B[size_t(j) * ldb + p];
    B = bt.data();
    ldb = n;
  }
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < n; ++j) acc[j] = T(0);
    for (int p = 0; p < k; ++p) {
      const T a = ta ? A[size_t(p) * lda + i] : A[size_t(i) * lda + p];
      const T* b = B + size_t(p) * ldb;
      for (int j = 0; j < n; ++j) acc[j] += a * b[j];
    }
    T* c = C + size_t(i) * ldc;
    if (beta == T(0)) {
      for (int j = 0; j < n; ++j) c[j] = alpha * acc[j];
    } else {
      for (int j = 0; j < n; ++j) c[j] = alpha * acc[j] + beta * c[j];
    }
  }
}

// A counted product: records {stage, tag, m, n, k}, then gemm().
template <typename T>
void local_gemm(const char* stage, const char* tag, int m, int n, int k, T alpha, const T* A, int lda, bool ta,
                const T* B, int ldb, bool tb, T beta, T* C, int ldc) {
  record_gemm(stage, tag, m, n, k);
  gemm(m, n, k, alpha, A, lda, ta, B, ldb, tb, beta, C, ldc);
}

}  // namespace rewy::delta::cpu
