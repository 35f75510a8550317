// Definitions behind launch.h; included by the per-variant translation units only.
#pragma once
#include "engine/cuda/check_cuda.h"
#include "kernels/delta/cuda/chunk_bwd.cuh"
#include "kernels/delta/cuda/launch.h"

namespace rewy::delta::cuda_impl {

// Raises the kernel's dynamic shared-memory limit to what it needs (once per instantiation).
template <class Kernel>
void set_smem(Kernel kernel, size_t bytes) {
  REWY_CHECK(bytes <= 227 * 1024, "kernel needs {} bytes of shared memory (Hopper allows 227 KiB)", bytes);
  CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)));
}

template <int VAR, int K, int V, int MODE>
void launch_prep(const DeltaParams& p, cudaStream_t s) {
  using L = PrepLayout<VAR, K, V, MODE>;
  static const bool once = (set_smem(wy_prep_kernel<VAR, K, V, MODE>, L::total), true);
  (void)once;
  wy_prep_kernel<VAR, K, V, MODE><<<dim3(p.num_chunks, p.H), kThreads, L::total, s>>>(p);
  CUDA_CHECK_LAUNCH();
}

template <int VAR, int K, int V, int BV>
void launch_state_fwd(const DeltaParams& p, cudaStream_t s) {
  using L = StateLayout<K, V, BV>;
  static const bool once = (set_smem(state_fwd_kernel<VAR, K, V, BV>, L::total), true);
  (void)once;
  state_fwd_kernel<VAR, K, V, BV><<<dim3(p.num_seqs * (V / BV), p.H), kThreads, L::total, s>>>(p);
  CUDA_CHECK_LAUNCH();
}

template <int VAR, int K, int V, int BV>
void launch_state_bwd(const DeltaParams& p, cudaStream_t s) {
  using L = StateLayout<K, V, BV>;
  static const bool once = (set_smem(state_bwd_kernel<VAR, K, V, BV>, L::total), true);
  (void)once;
  state_bwd_kernel<VAR, K, V, BV><<<dim3(p.num_seqs * (V / BV), p.H), kThreads, L::total, s>>>(p);
  CUDA_CHECK_LAUNCH();
}

template <int VAR, int K, int V>
void launch_output(const DeltaParams& p, cudaStream_t s) {
  using L = OutputLayout<VAR, K, V>;
  static const bool once = (set_smem(chunk_output_kernel<VAR, K, V>, L::total), true);
  (void)once;
  chunk_output_kernel<VAR, K, V><<<dim3(p.num_chunks, p.H), kThreads, L::total, s>>>(p);
  CUDA_CHECK_LAUNCH();
}

template <int VAR, int K, int V, bool REWY>
void launch_grad(const DeltaParams& p, cudaStream_t s) {
  using L = GradLayout<VAR, K, V>;
  static const bool once = (set_smem(grad_chunk_kernel<VAR, K, V, REWY>, L::total), true);
  (void)once;
  grad_chunk_kernel<VAR, K, V, REWY><<<dim3(p.num_chunks, p.H), kThreads, L::total, s>>>(p);
  CUDA_CHECK_LAUNCH();
}

// Runtime (K, V, BV) to template arguments.
template <int VAR, class F>
void dispatch_dims(const LaunchInfo& li, F&& f) {
  auto with_bv = [&](auto kc, auto vc) {
    if (li.bv == 32) f(kc, vc, std::integral_constant<int, 32>{});
    else f(kc, vc, std::integral_constant<int, 64>{});
  };
  using I64 = std::integral_constant<int, 64>;
  using I128 = std::integral_constant<int, 128>;
  if (li.K == 64 && li.V == 64) with_bv(I64{}, I64{});
  else if (li.K == 64 && li.V == 128) with_bv(I64{}, I128{});
  else if (li.K == 128 && li.V == 64) with_bv(I128{}, I64{});
  else if (li.K == 128 && li.V == 128) with_bv(I128{}, I128{});
  else REWY_FAIL("delta-rule CUDA kernels support head dims K, V in {{64, 128}}, got K = {}, V = {}", li.K, li.V);
}

template <int VAR>
void launch_forward_impl(const DeltaParams& p, const LaunchInfo& li) {
  dispatch_dims<VAR>(li, [&](auto kc, auto vc, auto bvc) {
    constexpr int K = decltype(kc)::value, V = decltype(vc)::value, BV = decltype(bvc)::value;
    launch_prep<VAR, K, V, kPrepForward>(p, li.stream);
    launch_state_fwd<VAR, K, V, (BV < V ? BV : V)>(p, li.stream);
    launch_output<VAR, K, V>(p, li.stream);
  });
}

template <int VAR>
void launch_replay_impl(const DeltaParams& p, const LaunchInfo& li) {
  dispatch_dims<VAR>(li, [&](auto kc, auto vc, auto bvc) {
    constexpr int K = decltype(kc)::value, V = decltype(vc)::value, BV = decltype(bvc)::value;
    launch_prep<VAR, K, V, kPrepRecompute>(p, li.stream);
    launch_state_fwd<VAR, K, V, (BV < V ? BV : V)>(p, li.stream);
  });
}

template <int VAR>
void launch_backward_impl(const DeltaParams& p, const LaunchInfo& li, bool rewy) {
  dispatch_dims<VAR>(li, [&](auto kc, auto vc, auto bvc) {
    constexpr int K = decltype(kc)::value, V = decltype(vc)::value, BV = decltype(bvc)::value;
    launch_state_bwd<VAR, K, V, (BV < V ? BV : V)>(p, li.stream);
    if (rewy) launch_grad<VAR, K, V, true>(p, li.stream);
    else launch_grad<VAR, K, V, false>(p, li.stream);
  });
}

}  // namespace rewy::delta::cuda_impl

#define REWY_DELTA_INSTANTIATE(VAR)                                                                              \
  namespace rewy::delta::cuda_impl {                                                                             \
  template <> void launch_forward<VAR>(const DeltaParams& p, const LaunchInfo& li) { launch_forward_impl<VAR>(p, li); } \
  template <> void launch_replay<VAR>(const DeltaParams& p, const LaunchInfo& li) { launch_replay_impl<VAR>(p, li); }   \
  template <> void launch_backward<VAR>(const DeltaParams& p, const LaunchInfo& li, bool rewy) {               \
    launch_backward_impl<VAR>(p, li, rewy);                                                                      \
  }                                                                                                              \
  }
