// Definitions behind launch.h; included by the per-variant translation units only.
#pragma once
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>

#include "engine/cuda/check_cuda.h"
#include "kernels/delta/cuda/chunk_bwd.cuh"
#include "kernels/delta/cuda/fwd_fused.cuh"
#include "kernels/delta/cuda/state_fwd_reg.cuh"
#include "kernels/delta/cuda/launch.h"
#include "kernels/delta/rw_from_ru.h"

namespace rewy::delta::cuda_impl {

// REWY_KERNEL_TIMING=1: every launch is timed with events (synchronising) and a per-kernel table
// is printed at exit. REWY_KERNEL_TIMING=2 adds, for the kernels with phase marks, the mean SM
// cycles per CTA of each phase. For finding where time goes, not for reporting end-to-end times.
// The table also gives each kernel's CTAs per SM at its shared memory: layouts sit on occupancy
// cliffs (16 bytes of static shared memory once took wy_prep from two CTAs an SM to one).
// us/call is the median launch: a kernel's first launch also loads it (CUDA's lazy loading), which
// made a mean read 4.3 ms for the 25 µs decay-cut plan; the first is printed apart.
struct KernelTimes {
  std::mutex mu;
  std::map<std::string, std::vector<float>> t;  // each launch's ms, in order
  std::map<std::string, int> ctas_per_sm;
  ~KernelTimes() {
    if (t.empty()) return;
    std::fprintf(stderr, "kernel timing (REWY_KERNEL_TIMING):\n");
    for (auto& [name, v] : t) {
      const auto occ = ctas_per_sm.find(name);
      double total = 0;
      for (float ms : v) total += ms;
      const float first = v.front();
      std::sort(v.begin(), v.end());
      const double median = v.size() % 2 ? v[v.size() / 2] : 0.5 * (double(v[v.size() / 2 - 1]) + v[v.size() / 2]);
      std::fprintf(stderr, "  %-44s %8zu calls %10.3f ms total %9.1f us/call %2d CTA/SM  (median; first %.1f us)\n",
                   name.c_str(), v.size(), total, 1e3 * median, occ == ctas_per_sm.end() ? 0 : occ->second,
                   1e3 * first);
    }
  }
};
inline KernelTimes& kernel_times() {
  static KernelTimes kt;
  return kt;
}
inline int kernel_timing() {
  static const int level = [] {
    const char* e = std::getenv("REWY_KERNEL_TIMING");
    return e ? std::atoi(e) : 0;
  }();
  return level;
}

// Raises the kernel's dynamic shared-memory limit to what it needs (once per instantiation); with
// REWY_KERNEL_TIMING, notes its CTAs per SM under its timing name. The callers' "once" statics are
// shared by the four variant units, so every kernel raised here takes the variant as a template
// argument: one instantiated alike in several units launched from KDA's unit without the limit
// (segment_correct_kernel, docs/measurements/2026-12-05-s55/call4/).
template <class Kernel>
void set_smem(Kernel kernel, size_t bytes, const std::string& name, int threads = kThreads) {
  REWY_CHECK(bytes <= 227 * 1024, "kernel {} needs {} bytes of shared memory (Hopper allows 227 KiB)", name, bytes);
  CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(bytes)));
  if (kernel_timing()) {
    int ctas = 0;
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&ctas, kernel, threads, bytes));
    auto& kt = kernel_times();
    std::lock_guard<std::mutex> g(kt.mu);
    kt.ctas_per_sm[name] = ctas;
  }
}

template <class F>
void timed_launch(const std::string& name, cudaStream_t s, F&& launch) {
  if (!kernel_timing()) {
    launch();
    CUDA_CHECK_LAUNCH();
    return;
  }
  cudaEvent_t a, b;
  CUDA_CHECK(cudaEventCreate(&a));
  CUDA_CHECK(cudaEventCreate(&b));
  CUDA_CHECK(cudaEventRecord(a, s));
  launch();
  CUDA_CHECK_LAUNCH();
  CUDA_CHECK(cudaEventRecord(b, s));
  CUDA_CHECK(cudaEventSynchronize(b));
  float ms = 0;
  CUDA_CHECK(cudaEventElapsedTime(&ms, a, b));
  CUDA_CHECK(cudaEventDestroy(a));
  CUDA_CHECK(cudaEventDestroy(b));
  auto& kt = kernel_times();
  std::lock_guard<std::mutex> g(kt.mu);
  kt.t[name].push_back(ms);
}

struct PhaseTimes {
  struct Entry {
    const char* const* labels = nullptr;
    int phases = 0;
    double ctas = 0;
    double cycles[kMaxPhases] = {};
    unsigned long long* device = nullptr;  // the kernel's sums, reused by every launch
  };
  std::mutex mu;
  std::map<std::string, Entry> t;
  ~PhaseTimes() {
    if (t.empty()) return;
    std::fprintf(stderr, "phase cycles per CTA (REWY_KERNEL_TIMING=2; SM clock cycles, thread 0 after each barrier):\n");
    for (auto& [name, e] : t) {
      double total = 0;
      for (int i = 0; i < e.phases; ++i) total += e.cycles[i];
      std::fprintf(stderr, "  %-32s %8.0f cycles:", name.c_str(), total / e.ctas);
      for (int i = 0; i < e.phases; ++i)
        std::fprintf(stderr, " | %s %.0f (%.0f%%)", e.labels[i], e.cycles[i] / e.ctas, 100 * e.cycles[i] / total);
      std::fprintf(stderr, "\n");
    }
  }
};
inline PhaseTimes& phase_times() {
  static PhaseTimes pt;
  return pt;
}

// Launches with p.phase_cycles pointing at the kernel's sums when REWY_KERNEL_TIMING=2, then adds
// them to the table (synchronising). The sums are shown per chunk and head: one CTA's for the
// chunk-parallel kernels, one step's summed over the V-slices for the sequential ones. Labels
// name the kernel's phases, one per phase_mark index.
template <int N, class F>
void phase_timed_launch(const std::string& name, cudaStream_t s, const DeltaParams& p, const char* const (&labels)[N],
                        F&& launch) {
  static_assert(N <= kMaxPhases, "more phases than DeltaParams::phase_cycles holds");
  if (kernel_timing() < 2) return timed_launch(name, s, [&] { launch(p); });
  PhaseTimes::Entry* e;
  {
    auto& pt = phase_times();
    std::lock_guard<std::mutex> g(pt.mu);
    e = &pt.t[name];
    if (!e->device) CUDA_CHECK(cudaMalloc(&e->device, kMaxPhases * sizeof(unsigned long long)));
    e->labels = labels;
    e->phases = N;
  }
  DeltaParams q = p;
  q.phase_cycles = e->device;
  CUDA_CHECK(cudaMemsetAsync(q.phase_cycles, 0, kMaxPhases * sizeof(unsigned long long), s));
  timed_launch(name, s, [&] { launch(q); });
  unsigned long long host[kMaxPhases];
  CUDA_CHECK(cudaMemcpyAsync(host, q.phase_cycles, sizeof(host), cudaMemcpyDeviceToHost, s));
  CUDA_CHECK(cudaStreamSynchronize(s));
  std::lock_guard<std::mutex> g(phase_times().mu);
  for (int i = 0; i < N; ++i) e->cycles[i] += double(host[i]);
  e->ctas += double(p.num_chunks) * p.H;
}

inline std::string kname(const char* base, int VAR, int K, int V, int extra = -1) {
  std::string s = std::string(base) + "<" + variant_name(VAR) + "," + std::to_string(K) + "," + std::to_string(V);
  if (extra >= 0) s += "," + std::to_string(extra);
  return s + ">";
}

// Runtime warps (8 or 16) to a thread-count template argument (grad_chunk, wy_prep): both
// instantiations are built, to be measured against each other in one build.
template <class F>
void dispatch_threads(int warps, F&& f) {
  if (warps == 16) f(std::integral_constant<int, 512>{});
  else f(std::integral_constant<int, kThreads>{});
}

// A runtime choice to a bool template argument where the instantiation exists (kBuilt), else
// always false: GDN's kernels that take q and the row gates in place of Q̂ or K̄ (the pointers
// the host left null, or the gate rows it set, decide).
template <bool kBuilt, class F>
void dispatch_flag(bool on, F&& f) {
  if constexpr (kBuilt) {
    if (on) {
      f(std::true_type{});
      return;
    }
  }
  f(std::false_type{});
}

// kernel<<<grid, threads, smem, s>>>(p, extra...), or with `beside` as a programmatic dependent of
// the kernel before it in s: it may start once every CTA of that one has run pdl_launch_dependents.
// extra: the kernel's parameters after p (tensor maps, taken as __grid_constant__).
template <class Kernel, class... Extra>
void launch_kernel(Kernel kernel, dim3 grid, int threads, size_t smem, cudaStream_t s, const DeltaParams& p, bool beside,
                   const Extra&... extra) {
  if (!beside) {
    kernel<<<grid, threads, smem, s>>>(p, extra...);
    return;
  }
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = grid;
  cfg.blockDim = dim3(threads);
  cfg.dynamicSmemBytes = smem;
  cfg.stream = s;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  CUDA_CHECK(cudaLaunchKernelEx(&cfg, kernel, p, extra...));
}

// A chunk-parallel kernel (one CTA of NT threads per (chunk, head), kSmem bytes of dynamic shared
// memory): its shared-memory limit raised once per kernel, then a phase-timed launch under `name`
// (beside: see launch_kernel).
// load_only: only the once-per-kernel setup, which loads the kernel (with CUDA's lazy loading a
// kernel's first launch loads it and waits for the device to idle: a kernel launched beside one
// that waits for it must be loaded before that one is launched).
template <auto kKernel, int NT, size_t kSmem, int N>
void launch_chunk_parallel(const std::string& name, const char* const (&labels)[N], const DeltaParams& p,
                           cudaStream_t s, bool beside = false, bool load_only = false) {
  static const bool once = (set_smem(kKernel, kSmem, name, NT), true);
  (void)once;
  if (load_only) {
    static const bool loaded = [] {
      cudaFuncAttributes attr;
      CUDA_CHECK(cudaFuncGetAttributes(&attr, kKernel));  // loads it (CUDA's documented way)
      return true;
    }();
    (void)loaded;
    return;
  }
  phase_timed_launch(name, s, p, labels, [&](const DeltaParams& q) {
    launch_kernel(kKernel, dim3(q.num_chunks, q.H), NT, kSmem, s, q, beside);
  });
}

// A sequential kernel (one CTA of NT threads per (sequence, head, V-slice), and plane: blockIdx.z,
// the segment scan's map pass's two; kSmem bytes of dynamic shared memory): its shared-memory
// limit raised once per kernel, then a phase-timed launch (extra: as launch_kernel's).
template <auto kKernel, size_t kSmem, int NT = kThreads, int N, class... Extra>
void launch_sequential(const std::string& name, const char* const (&labels)[N], const DeltaParams& p, int slices,
                       cudaStream_t s, bool beside = false, int planes = 1, const Extra&... extra) {
  static const bool once = (set_smem(kKernel, kSmem, name, NT), true);
  (void)once;
  phase_timed_launch(name, s, p, labels, [&](const DeltaParams& q) {
    launch_kernel(kKernel, dim3(q.num_seqs * slices, q.H, planes), NT, kSmem, s, q, beside, extra...);
  });
}

// LDA: kLdA for the fused kernel, kLdAShared for the others (kLdA says why).
template <int VAR, int K, int V, int NT, bool OVERLAP, int EXP = 0, int LDA = (prep_fused_only(EXP) ? kLdA : kLdAShared)>
void launch_prep_threads(const DeltaParams& p, cudaStream_t s, bool beside, bool load_only) {
  constexpr bool kFused = prep_fused_only(EXP), kFour = EXP == kPrepFused4Exp;
  constexpr bool kExp = LDA != (kFused ? kLdA : kLdAShared);  // timed under a name with _exp
  static const std::string name =
      kname(OVERLAP ? (kExp ? "wy_prep_overlap_exp" : "wy_prep_overlap")
                    : (EXP == kPrepTOnlyExp ? "wy_prep_tonly"
                       : kFour              ? "wy_prep_fused4"
                       : kFused             ? "wy_prep_fused"
                       : kExp               ? "wy_prep_exp"
                                            : "wy_prep"),
            VAR, K, V, NT / 32);
  launch_chunk_parallel<wy_prep_kernel<VAR, K, V, NT, OVERLAP, EXP, LDA>, NT,
                        PrepLayout<VAR, K, V, kFused, LDA, prep_ts_low(EXP)>::total>(name, kPrepPhases, p, s, beside,
                                                                                    load_only);
}

template <int VAR, int K>
inline constexpr bool kPrepEarlyGates = VAR == kKDA && K == 128;  // wy_prep_split's EARLY (below)

template <int VAR, int K, int V>
void launch_prep(const DeltaParams& p, cudaStream_t s, int warps, bool overlap, bool split, bool beside = false,
                 bool load_only = false) {  // LaunchInfo::prep_warps, prep_overlap, prep_split; beside: p.prep_done set
  if constexpr (VT<VAR>::vec_gate) {
    if (split) {
      // KDA's at K = 128 loads and scans the second slice's gates with the first's (EARLY: GDN2's
      // b tile leaves no room for them): wy_prep_split 332.8 -> 324.1 us at shape 0 (the second
      // slice's scan and wait 4684 -> 2697 cycles), KDA's forward 1.019x Recompute (worst 1.006),
      // 1.016x Save, 1.02-1.03x at the 32-head shapes (H200, 2026-12-02, shapes 0, 3, 4, 5,
      // docs/measurements/2026-12-02-s25/call4-earlyg/). REWY_EXPERIMENTS=lateg times the plain kernel.
      // (The packed column operand with one exponential a row and channel, the other blocks'
      // factors chained through a ratio table built behind one more barrier a slice, experiment
      // chainfwd: forward KDA 0.981x, GDN2 0.986x; H200, 2026-12-03,
      // docs/measurements/2026-12-03-s30/call3-chain/: removed.)
      // (The operand builds reading the fp32 gate octets with the halves swapped in threads 4-7 of
      // each quarter-warp, which clears the 2-way bank conflicts of load8's order on those loads,
      // experiment octsw: forward KDA 0.998x, GDN2 0.994x; H200, 2026-12-04,
      // docs/measurements/2026-12-04-s45/call1/: removed. Call 2 there counts those conflicts as
      // 4.7M of the builds' 12.3M shared wavefronts: the builds wait on latency, not on them.)
      // p.Tbeta set (the fused forward of channel gates: kfuse in delta_cuda.cu): KDA's K ⊙ Γ and
      // 𝒯 Diag(β), GDN2's Y_W and Y_U, instead of W and U (TB).
      auto launch_split = [&](auto early) {
        constexpr bool kEarly = decltype(early)::value;
        constexpr bool kExp = kEarly != kPrepEarlyGates<VAR, K>;  // timed under a name with _exp
        dispatch_flag<VAR == kKDA || VAR == kGDN2>(p.Tbeta != nullptr, [&](auto tb) {
          constexpr bool kTb = decltype(tb)::value;
          static const std::string name =
              kname(kTb ? "wy_prep_split_tb" : kExp ? "wy_prep_split_exp" : "wy_prep_split", VAR, K, V, kThreads / 32);
          launch_chunk_parallel<wy_prep_split_kernel<VAR, K, V, kThreads, kEarly, kLdA, kTb>, kThreads,
                                PrepSplitLayout<VAR, K, V, kEarly>::total>(name, kPrepSplitPhases, p, s, beside, load_only);
        });
      };
      if (kPrepEarlyGates<VAR, K> && !experiment("lateg", VAR)) return launch_split(std::bool_constant<kPrepEarlyGates<VAR, K>>{});
      return launch_split(std::false_type{});
    }
  }
  // The overlapped kernel only where W and U are formed in it (the fused forward leaves them to
  // the state pass: there the plain kernel, whose code is the same path but scheduled apart).
  const bool fused = fuses_wu(VAR) && p.Tbeta != nullptr;
  overlap = overlap && !fused;
  // The fused forward (DeltaNet, GDN at V-slices of 64 and 128) takes its own kernel, three CTAs an
  // SM (kPrepFusedExp): wy_prep at shape 0 129.5 -> 104.5 us (DeltaNet), 142.9 -> 119.0 us
  // (GDN), Recompute forward 1.10-1.12x at (8, 2048, 16), (4, 4096, 16), (8, 4096, 32); beside the
  // pass (32 pairs) 0.984x / 0.986x at (1, 32768, 32), where its 60 KB CTAs fit beside the pass's
  // on one SM and slow it: there the shared kernel stays (H200, 2026-12-04, experiment prep3,
  // docs/measurements/2026-12-04-s40/call2/). REWY_EXPERIMENTS=prep2 times the shared kernel.
  // At K = 128 that kernel runs at four CTAs an SM (kPrepFused4Exp: 𝒯's fp32 tile over q's slot,
  // 44 KB; 64 registers, DeltaNet's 16 bytes of stack): more chunks beside each one's solve, a chain
  // on a few warps. wy_prep 104.2 -> 98.4 us at (8, 2048, 16), 395.2 -> 373.6 at (8, 4096, 32)
  // (DeltaNet), 111.5 -> 103.3 and 426.3 -> 399.1 (GDN); Recompute forward 1.021-1.027x DeltaNet
  // where it applies (shapes 0, 1, 4), 1.020-1.041x GDN at all six (the decay cut runs wy_prep
  // alone) (H100, 2026-12-06, experiment prep4, docs/measurements/2026-12-06-s59/call3/).
  // REWY_EXPERIMENTS=prep3 times the three-CTA kernel.
  // (Beside the register pass the four-CTA kernel gained nothing, with or without the pass padded
  // to a whole SM's shared memory: DeltaNet's forward 1.000x / 0.997x at shapes 2, 3, 5, H100,
  // 2026-12-06, experiments besidef4 and besidef4pad, docs/measurements/2026-12-06-s62/call3/:
  // wy_prep follows the pass's lead there, and the pass's step is 2.1 us beside it either way.)
  if constexpr (fuses_wu(VAR))
    if (fused && warps == 8 && !beside && !experiment("prep2", VAR)) {
      if constexpr (K == 128)
        if (!experiment("prep3", VAR))
          return launch_prep_threads<VAR, K, V, kThreads, false, kPrepFused4Exp>(p, s, beside, load_only);
      return launch_prep_threads<VAR, K, V, kThreads, false, kPrepFusedExp>(p, s, beside, load_only);
    }
  // REWY_EXPERIMENTS=ld68sh: the shared and overlapped kernels' A and 𝒯 at kLdA's pitch.
  dispatch_threads(warps, [&](auto nt) {
    constexpr int kNT = decltype(nt)::value;
    const bool ld68 = experiment("ld68sh", VAR);
    if (overlap) {
      if (ld68) return launch_prep_threads<VAR, K, V, kNT, true, 0, kLdA>(p, s, beside, load_only);
      return launch_prep_threads<VAR, K, V, kNT, true>(p, s, beside, load_only);
    }
    if (ld68) return launch_prep_threads<VAR, K, V, kNT, false, 0, kLdA>(p, s, beside, load_only);
    launch_prep_threads<VAR, K, V, kNT, false>(p, s, beside, load_only);
  });
}

template <int VAR, int K, int V, int NT>
void launch_wy_replay_threads(const DeltaParams& p, cudaStream_t s) {
  // GDN with p.Qg null (q_from_row_gates): state_bwd forms Q̂, the replay writes none. p.Tbeta set
  // (fused_replay): W and 𝒯 Diag(β), no U.
  // p.W null too (replay_no_w): 𝒯 Diag(β) alone (state_bwd forms Wᵀ∂E from it and k).
  REWY_CHECK(p.W != nullptr || (replay_without_u(VAR, K, V) && p.Tbeta != nullptr && (VAR != kGDN || p.Qg == nullptr)),
             "wy_replay without W: only DeltaNet's and GDN's fused replay (GDN's without Q̂)");
  REWY_CHECK(!p.row_betas, "wy_replay writes 𝒯 Diag(β): p.Tbeta at 𝒯 (row_betas set) is the forward's, kept");
  dispatch_flag<replay_without_u(VAR, K, V)>(p.Tbeta != nullptr, [&](auto tbeta) {
    constexpr bool kTbeta = decltype(tbeta)::value;
    dispatch_flag<VAR == kGDN>(p.Qg == nullptr, [&](auto no_q) {
      constexpr bool kNoQ = decltype(no_q)::value;
      dispatch_flag<kTbeta && (kNoQ || VAR != kGDN)>(p.W == nullptr, [&](auto no_w) {
        constexpr bool kNoW = decltype(no_w)::value;
        static const std::string name =
            kname(kNoW ? "wy_replay_tb" : kTbeta ? "wy_replay_w" : "wy_replay", VAR, K, V, NT / 32);
        launch_chunk_parallel<wy_replay_kernel<VAR, K, V, NT, kNoQ, kTbeta, kNoW>, NT,
                              ReplayLayout<VAR, K, V>::total>(name, kReplayPhases, p, s);
      });
    });
  });
}

template <int VAR, int K, int V>
void launch_wy_replay(const DeltaParams& p, cudaStream_t s, int warps) {  // LaunchInfo's replay_warps
  dispatch_threads(warps, [&](auto nt) { launch_wy_replay_threads<VAR, K, V, decltype(nt)::value>(p, s); });
}

// The cluster form of state_fwd (its V / BV slices of a pair as one cluster sharing the stage
// tiles through TMA multicast) when it applies: slices narrower than V, a stage without the fused
// W (its slot holds 𝒯 Diag(β)), maps given, and every cluster resident at once (else the plain
// kernel: a second wave of clusters would cost more than the loads save).
template <int VAR, int K, int V, int BV, bool OUTPUT, bool STORE, bool SGATE = false>
bool launch_state_fwd_cluster(const DeltaParams& p, cudaStream_t s, const tma::StateMaps* maps) {
  constexpr int kSlices = V / BV;
  if constexpr (kSlices < 2 || fused_state_pass(VAR, K, V, OUTPUT, STORE, BV)) {
    return false;
  } else {
    if (!maps) return false;
    constexpr auto kKernel = state_fwd_cluster_kernel<VAR, K, V, BV, OUTPUT, STORE, SGATE>;
    constexpr size_t kSmem = StateFwdLayout<VAR, K, V, BV, OUTPUT, STORE, true, SGATE>::total;
    static const std::string name =
        kname(OUTPUT ? (STORE ? "state_fwd_out_store_mc" : "state_fwd_out_mc") : "state_fwd_replay_mc", VAR, K, V, BV);
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = kSlices;
    attr[0].val.clusterDim.y = 1;
    attr[0].val.clusterDim.z = 1;
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(p.num_seqs * kSlices, p.H);
    cfg.blockDim = dim3(kThreads);
    cfg.dynamicSmemBytes = kSmem;
    cfg.stream = s;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    static const int resident = [&] {  // (a query the driver refuses leaves the plain kernel)
      set_smem(kKernel, kSmem, name);
      int clusters = 0;
      if (cudaOccupancyMaxActiveClusters(&clusters, kKernel, &cfg) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
      }
      return clusters;
    }();
    if (int64_t(p.num_seqs) * p.H > resident) return false;
    phase_timed_launch(name, s, p, kStateFwdPhases, [&](const DeltaParams& q) {
      CUDA_CHECK(cudaLaunchKernelEx(&cfg, kKernel, q, *maps));
    });
    count_multicast_launch();
    return true;
  }
}

// The maps of k, q [tok][H][K] and v, o [tok][H][V] that the register pass and the one-kernel
// forward read and write by TMA (T and P left empty: the one kernel forms them).
template <int K, int V>
tma::RegMaps token_reg_maps(const DeltaParams& p, const bf16_t* k, const bf16_t* q) {
  tma::RegMaps maps{};
  maps.K = tma::make_token_map(k, p.tokens, p.H, K);
  maps.Q = tma::make_token_map(q, p.tokens, p.H, K);
  maps.V = tma::make_token_map(p.v, p.tokens, p.H, V);
  maps.O = tma::make_token_map(p.o, p.tokens, p.H, V);
  return maps;
}

// The forward pass with the state in registers (state_fwd_reg.cuh; where launch_state_fwd_as
// takes it): BV / 64 warpgroups a CTA, one CTA per (sequence, head, V-slice).
// TMA: the stage's tiles by TMA boxes and O's whole chunks by a TMA store (state_fwd_reg_kernel).
// FOUR: four stages where they fit (RegPassLayout's).
template <int VAR, int K, int V, int BV, bool BESIDE, bool TMA, bool FOUR = false>
void launch_state_fwd_reg_as(const DeltaParams& p, cudaStream_t s) {
  using L = RegPassLayout<K, V, BV, VAR == kGDN, FOUR>;
  constexpr auto kKernel = state_fwd_reg_kernel<VAR, K, V, BV, BESIDE, TMA, FOUR>;
  static const std::string name = kname(
      (std::string(BESIDE ? "state_fwd_reg_beside" : "state_fwd_reg") + (TMA ? "_tma" : "") + (L::kFour ? "4" : "")).c_str(),
      VAR, K, V, BV);
  tma::RegMaps maps{};
  if constexpr (TMA) {
    maps = token_reg_maps<K, V>(p, VAR == kGDN ? p.k : p.Kg, VAR == kGDN ? p.q : p.Qg);
    maps.T = tma::make_token_map(p.Tbeta, p.tokens, p.H, kChunk);
    maps.P = tma::make_token_map(p.P, p.tokens, p.H, kChunk);
  }
  launch_sequential<kKernel, L::total, L::kThreadsA>(name, kStateFwdPhases, p, V / BV, s, false, 1, maps);
  count_register_pass();
}

// The register pass beside wy_prep moves its tiles and O by TMA (state_fwd_reg.cuh's prefetch_tma;
// the kernel's inputs are 16-byte aligned, kernel_ready's copies where they were not) at four
// stages where they fit (DeltaNet at V-slices of 64). Recompute forward at (2, 8192, 16) and (1,
// 32768, 32), DeltaNet: by TMA at three stages 1.080x / 1.070x the cp.async pass on one H100 (call
// 2, means of two rounds) and 0.988x / 0.995x on another (call 3b, three rounds), where four stages
// gave 1.012x / 1.008x the cp.async pass and 1.024x / 1.014x three (H100, 2026-12-06,
// docs/measurements/2026-12-06-s63/call2/, call3b/). Not in the serial pass at slices of 128
// (shapes 0, 1, 4: 0.988-0.995x by TMA), where 256 threads share the copies.
// REWY_EXPERIMENTS=notmareg keeps cp.async beside too; reg3st the TMA pass at three stages.
template <int VAR, int K, int V, int BV, bool BESIDE>
void launch_state_fwd_reg(const DeltaParams& p, cudaStream_t s) {
  if (BESIDE && !experiment("notmareg", VAR)) {
    if (experiment("reg3st", VAR)) return launch_state_fwd_reg_as<VAR, K, V, BV, BESIDE, BESIDE>(p, s);
    return launch_state_fwd_reg_as<VAR, K, V, BV, BESIDE, BESIDE, BESIDE>(p, s);
  }
  launch_state_fwd_reg_as<VAR, K, V, BV, BESIDE, false>(p, s);
}

// DeltaNet's and GDN's Recompute forward as one kernel (fwd_fused.cuh; LaunchInfo::one_kernel): a
// producer warpgroup and one consumer warpgroup per 64 columns of V; k, q, v by TMA boxes and O by
// TMA stores. PFORM (LaunchInfo::one_kernel_pform; GDN's only form): wy_prep without q and P first
// (𝒯 and β alone, GDN's row gates and e^γ for the backward), then the kernel whose producer forms P
// and brings 𝒯 by TMA; BV: its V-slices (64: two CTAs a (sequence, head)).
template <int VAR, int K, int V, bool PFORM = false, int BV = 128>
void launch_fwd_fused(const DeltaParams& p, cudaStream_t s) {
  using L = FusedFwdLayout<VAR, K, V, PFORM, BV>;
  constexpr auto kKernel = fwd_fused_kernel<VAR, K, V, PFORM, BV>;
  static const std::string name = kname(PFORM ? "fwd_fused_p" : "fwd_fused", VAR, K, BV);
  constexpr bool kGate = VAR == kGDN;
  const bf16_t* const k_in = kGate ? p.k : p.Kg;
  const bf16_t* const q_in = kGate ? p.q : p.Qg;
  REWY_CHECK(k_in && q_in && p.P && p.Tinv && (p.row_betas ? p.Tbeta == p.Tinv : p.Tbeta != nullptr) && !p.prep_done &&
                 !p.path_flag && !p.E && !p.Hs && (!kGate || (PFORM && p.gate_rows && p.gexp)),
             "the one-kernel forward: DeltaNet's or GDN's fused Recompute forward (P, 𝒯, β on the rows or 𝒯 Diag(β); "
             "GDN's row gates), not beside, no stored states");
  tma::RegMaps maps = token_reg_maps<K, V>(p, k_in, q_in);
  if constexpr (PFORM) {
    launch_prep_threads<VAR, K, V, kThreads, false, kPrepTOnlyExp>(p, s, false, false);
    maps.T = tma::make_token_map(p.Tbeta, p.tokens, p.H, kChunk);
    launch_sequential<kKernel, L::total, L::kThreads>(name, kFusedFwdPPhases, p, V / BV, s, false, 1, maps);
  } else {
    launch_sequential<kKernel, L::total, L::kThreads>(name, kFusedFwdPhases, p, 1, s, false, 1, maps);
  }
  count_one_kernel_forward();
}

template <int VAR, int K, int V, int BV, bool OUTPUT, bool STORE, bool SGATE = false, bool BESIDE = false>
void launch_state_fwd_as(const DeltaParams& p, cudaStream_t s, const tma::StateMaps* maps) {
  // The fused Recompute forward pass with the state in registers (state_fwd_reg.cuh): DeltaNet at
  // V-slices of 64 and 128, GDN at 64. Recompute forward, state_fwd_body's pass / this one: DeltaNet
  // 1.111x / 1.081x / 1.028x at (4, 4096, 16), (2, 8192, 16), (1, 32768, 32) (slices of 64; 1.119x /
  // 1.075x / 1.078x in an earlier call), 1.000-1.013x at the slices of 128 of (8, 2048, 16) and
  // (8, 4096, 32), where the pass is bound by its bytes (43% of a step waits for the stage); GDN
  // 1.048x at (4, 4096, 16), 0.995x / 0.989x at slices of 128 (its gated step does more there), the
  // decay cut's shapes untouched (H100, 2026-12-06, docs/measurements/2026-12-06-s61/call2/, call3/).
  // REWY_EXPERIMENTS=norpass keeps state_fwd_body's pass; rpass takes GDN's at 128 too.
  if constexpr (fuses_wu(VAR) && OUTPUT && !STORE && !SGATE && K == 128 && fused_wu(VAR, OUTPUT, STORE, BV))
    if (!experiment("norpass", VAR) && (VAR == kDeltaNet || BV == 64 || experiment("rpass", VAR)))
      return launch_state_fwd_reg<VAR, K, V, BV, BESIDE>(p, s);
  // The Recompute forward of channel gates with p.Tbeta set (kfuse in delta_cuda.cu's forward): E
  // from 𝒯 Diag(β), K ⊙ Γ and v (KDA) or 𝒯, Y_W and Y_U (GDN2) (state_fwd_body's KFUSE), by
  // column halves at V-slices of 128 as DeltaNet's and GDN's. Not beside wy_prep: there it lost
  // (delta_cuda.cu's forward), and the check below refuses it.
  constexpr bool kCanKfuse = VT<VAR>::vec_gate && OUTPUT && !STORE && !BESIDE && BV % 64 == 0;
  const bool kfuse = kCanKfuse && p.Tbeta != nullptr;
  REWY_CHECK(kfuse || p.Tbeta == nullptr || fuses_wu(VAR) || !OUTPUT || STORE,
             "state_fwd: 𝒯 Diag(β) given where the pass cannot read it");
  if constexpr (!BESIDE)
    if (!kfuse && launch_state_fwd_cluster<VAR, K, V, BV, OUTPUT, STORE, SGATE>(p, s, maps)) return;
  // The fused forward by column halves (state_fwd_body's FHALF) at V-slices of 128: Recompute
  // forward 1.033-1.035x at (8, 2048, 16) and (8, 4096, 32), DeltaNet and GDN, within ±1% at the
  // shapes whose slices are narrower (H200, 2026-12-04, docs/measurements/2026-12-04-s42/call1/).
  // Experiment fhalf: at every slice (0.93-0.98x at 64 beside wy_prep, where the halves' products
  // are 32 columns wide; docs/measurements/2026-12-04-s41/call5/).
  // REWY_EXPERIMENTS=uhalf: the unfused output pass (KDA's and GDN2's where they read W and U) by
  // the same column halves at V-slices of 128.
  dispatch_flag<kCanKfuse>(kfuse, [&](auto kfuse_c) {
    constexpr bool kKfuse = decltype(kfuse_c)::value;
    constexpr bool kFusedHalf = (fused_wu(VAR, OUTPUT, STORE, BV) && !SGATE) || kKfuse;
    constexpr bool kUnfusedHalf = !kKfuse && !fused_state_pass(VAR, K, V, OUTPUT, STORE, BV) &&
                                  !fused_gate(VAR, OUTPUT, STORE, BV) && OUTPUT && !STORE && !SGATE && BV == 128;
    const bool half = kKfuse       ? BV == 128
                      : kFusedHalf ? BV == 128 || experiment("fhalf", VAR)
                                   : experiment("uhalf", VAR);
    dispatch_flag<kFusedHalf || kUnfusedHalf>(half, [&](auto fhalf) {
      constexpr bool kHalf = decltype(fhalf)::value;
      const char* const base = OUTPUT ? (STORE ? (BESIDE ? "state_fwd_out_store_beside" : "state_fwd_out_store")
                                               : (BESIDE ? "state_fwd_out_beside" : "state_fwd_out"))
                                      : "state_fwd_replay";
      static const std::string name =
          kname((std::string(base) + (kKfuse ? "_kt" : "") + (kHalf ? "_fhalf" : "")).c_str(), VAR, K, V, BV);
      launch_sequential<state_fwd_kernel<VAR, K, V, BV, OUTPUT, STORE, SGATE, BESIDE, kHalf, kKfuse>,
                        StateFwdLayout<VAR, K, V, BV, OUTPUT, STORE, false, SGATE, kKfuse>::total>(name, kStateFwdPhases,
                                                                                                 p, V / BV, s);
    });
  });
}

// (The pass as a programmatic dependent of wy_prep or wy_replay, which triggered at their start,
// the pass waiting for their grid before its first read, experiment pdlprep: forward 0.986-1.013x,
// backward 0.95-1.02x, worst at 16 pairs (DeltaNet 0.949x, KDA 0.974x), where the replay's CTAs,
// launched in wy_replay's last wave, likely land two an SM on the SMs that free first (H200,
// 2026-12-02, docs/measurements/2026-12-02-s29/call1-pdlprep/): removed.)
// GDN's Save forward with p.gate_rows set (save_row_gates in delta_cuda.cu): the pass reads q and
// k and scales by the rows' gates, as the fused Recompute forward does (V-slices of 64 and 128).
// BESIDE: wy_prep beside the pass (Config::prep_beside; never with GDN's saved row gates).
template <int VAR, int K, int V, int BV, bool OUTPUT, bool STORE, bool BESIDE = false>
void launch_state_fwd(const DeltaParams& p, cudaStream_t s, const tma::StateMaps* maps = nullptr) {
  if constexpr (BESIDE) {
    REWY_CHECK(!(STORE && p.gate_rows), "wy_prep beside the pass: not with saved row gates");
    launch_state_fwd_as<VAR, K, V, BV, OUTPUT, STORE, false, true>(p, s, nullptr);
  } else {
    dispatch_flag<VAR == kGDN && OUTPUT && STORE && BV % 64 == 0>(p.gate_rows != nullptr, [&](auto sgate) {
      launch_state_fwd_as<VAR, K, V, BV, OUTPUT, STORE, decltype(sgate)::value>(p, s, maps);
    });
  }
}

// The segment scan's map pass (state_fwd's MAP): every segment's (the call's sequences') end
// state from zero and map from the identity, z = 0 and z = 1 of one grid (one CTA an SM at BV = V
// = 128, the replay's layout).
template <int VAR, int K, int V, int BV>
void launch_state_maps(const DeltaParams& p, cudaStream_t s) {
  static const std::string name = kname("state_fwd_maps", VAR, K, V, BV);
  launch_sequential<state_fwd_kernel<VAR, K, V, BV, false, true, false, false, false, false, true>,
                    StateFwdLayout<VAR, K, V, BV, false, true>::total>(name, kStateFwdPhases, p, V / BV, s, false, 2);
}

// The segment scan's two-pass form (state_fwd's PLANES): every segment's outputs and end state
// from its own start (z = 0), Y and Φ from the identity (z = 1), the fused forward by column
// halves at whole-V slices (one CTA an SM).
// KDA's and GDN2's in their fused form (KFUSE: E from 𝒯 Diag(β), K ⊙ Γ and v, or from 𝒯, Y_W and
// Y_U; v or Y_U taken as 0 in the map plane as v is in the others').
template <int VAR, int K, int V>
void launch_state_planes(const DeltaParams& p, cudaStream_t s) {
  constexpr bool kKfuse = VT<VAR>::vec_gate;
  static const std::string name = kname(kKfuse ? "state_fwd_planes_kt" : "state_fwd_planes", VAR, K, V, V);
  launch_sequential<state_fwd_kernel<VAR, K, V, V, true, false, false, false, true, kKfuse, false, true>,
                    StateFwdLayout<VAR, K, V, V, true, false, false, false, kKfuse>::total>(name, kStateFwdPhases, p, 1,
                                                                                            s, false, 2);
}

// The decay cut's plan (decay_cut_plan_kernel, from k, β and g): the look-back's flags, ticket and
// word zeroed, then each segment's start; before wy_prep, so that the word can also choose
// between wy_prep's forms (the sequential fallback's beside its pass, the cut's alone).
// With p.seg_stop (the backward's cut) also each segment's stop.
template <int K>
void launch_cut_plan(const DeltaParams& p, cudaStream_t s) {
  if (p.num_chunks == 0 || p.H == 0) return;
  REWY_CHECK(p.seg_flags && p.seg_plan && p.seg_lead, "the decay cut's plan: its flags, plan and first segments");
  REWY_CHECK(!p.seg_stop || p.seg_last, "the backward's decay cut plan: the last-segment flags");
  CUDA_CHECK(cudaMemsetAsync(p.seg_flags, 0, (size_t(p.num_seqs) * size_t(p.H) + kSegWords) * sizeof(unsigned), s));
  static const std::string plan_name = "decay_cut_plan";
  const dim3 grid(p.num_seqs, p.H, p.seg_stop ? 2 : 1);  // (z: the walk back, and the backward's walk forward)
  timed_launch(plan_name, s, [&] { decay_cut_plan_kernel<K><<<grid, kPlanThreads, 0, s>>>(p); });
}

// The decay cut (state_fwd's WARM): each segment from its plan, whole-V slices (one CTA an SM),
// after launch_cut_plan and wy_prep.
template <int VAR, int K, int V>
void launch_decay_cut(const DeltaParams& p, cudaStream_t s) {
  if (p.num_chunks == 0 || p.H == 0) return;
  REWY_CHECK(p.seg_flags && p.seg_end && p.pass_wait_ns > 0, "the decay cut: the look-back's flags, states and wait");
  static const std::string name = kname("state_fwd_warm", VAR, K, V, V);
  launch_sequential<state_fwd_kernel<VAR, K, V, V, true, false, false, false, true, false, false, false, true>,
                    StateFwdLayout<VAR, K, V, V, true, false>::total>(name, kStateFwdPhases, p, 1, s);
}

// The backward's decay cut (GDN's Recompute backward): the replay's pass (state_fwd's WARM without
// output: Hs and E of each segment's own chunks, from zero at its cut or from h0) and state_bwd
// (state_bwd_wg's CUT: ∂H⁺, ∂E of its own chunks, from zero after its stop or from dht; ∂h0), whole-V
// slices (one CTA an SM, so one after the other), after the plan and wy_replay.
template <int VAR, int K, int V>
void launch_backward_cut(const BackwardCut& cut, cudaStream_t s) {
  static_assert(VAR == kGDN && fused_replay(VAR, K, V, false, true, V), "GDN's fused replay at K = V = 128");
  const DeltaParams& p = cut.p;
  if (p.num_chunks == 0 || p.H == 0) return;
  REWY_CHECK(p.seg_plan && p.seg_stop && p.seg_owner && p.seg_seq && p.path_flag && p.path_value == 0 && p.Tbeta &&
                 p.gate_rows && !p.W && !p.Qg,
             "the backward's decay cut: its plan, stops, segment index, word, and the fused replay's operands");
  DeltaParams replay = p;
  replay.count_weight = cut.replay_weight;
  static const std::string replay_name = kname("state_fwd_replay_warm", VAR, K, V, V);
  launch_sequential<state_fwd_kernel<VAR, K, V, V, false, true, false, false, false, false, false, false, true>,
                    StateFwdLayout<VAR, K, V, V, false, true>::total>(replay_name, kStateFwdPhases, replay, 1, s);
  DeltaParams bwd = p;
  bwd.count_weight = cut.bwd_weight;
  constexpr bool kQlo = VT<VAR>::gated, kKraw = VT<VAR>::scalar_gate;
  static const std::string bwd_name = kname("state_bwd_tbw_cut", VAR, K, V, V);
  launch_sequential<state_bwd_wg_kernel<VAR, K, V, V, true, true, true>, WgBwdShape<K, V, kQlo, kKraw, true>::total>(
      bwd_name, kStateBwdPhases, bwd, 1, s);
}

// ... and its correction O += Y H_in (segment_correct_kernel, G chunks a CTA); max_chunks: the
// longest segment's chunk count. (Y copied a chunk ahead through cp.async into two tiles,
// experiment segpf: 58 -> 57 µs at (1, 16384, 16), ncu, H100, 2026-12-05,
// docs/measurements/2026-12-05-s55/call3/ncu.txt: removed.)
template <int VAR, int K, int V>
void launch_segment_correct(const DeltaParams& p, int max_chunks, cudaStream_t s) {
  constexpr int kG = 8;
  using L = SegmentCorrectLayout<K, V, kG>;
  if (p.num_seqs == 0 || p.H == 0 || max_chunks == 0) return;
  static const std::string name = "segment_correct<" + std::to_string(K) + "," + std::to_string(V) + ">";
  static const bool once = (set_smem(segment_correct_kernel<VAR, K, V, kG>, L::total, name, 128), true);
  (void)once;
  const int groups = (max_chunks + kG - 1) / kG;
  timed_launch(name, s, [&] {
    segment_correct_kernel<VAR, K, V, kG><<<dim3(p.num_seqs * groups, p.H), 128, L::total, s>>>(p, groups);
  });
}

// The segment scan's scan over segments (segment_scan_kernel), 16 columns a CTA.
template <int VAR, int K, int V>
void launch_segment_scan(const SegmentScanParams& a, cudaStream_t s) {
  constexpr int kCS = 16;
  using L = SegmentScanLayout<K, kCS>;
  if (a.N * a.H == 0) return;
  static const std::string name = "segment_scan<" + std::to_string(K) + "," + std::to_string(V) + ">";
  static const bool once = (set_smem(segment_scan_kernel<VAR, K, V, kCS>, L::total, name, K), true);
  (void)once;
  timed_launch(name, s, [&] { segment_scan_kernel<VAR, K, V, kCS><<<dim3(a.N * a.H, V / kCS), K, L::total, s>>>(a); });
}

// state_bwd: the wgmma kernel for V-slices of 64 and 128, the mma.sync one for 16 and 32 (∂O is an
// MN-major wgmma operand only in whole 64-column panels).
template <int VAR, int K, int V, int BV>
void launch_state_bwd(const DeltaParams& p, cudaStream_t s, bool beside) {  // beside: LaunchInfo::overlap_passes
  constexpr bool kQlo = VT<VAR>::gated, kKraw = VT<VAR>::scalar_gate;  // as the kernels'
  if constexpr (BV % 64 == 0) {
    // GDN without Q̂ in global memory (the replay or the Save forward wrote none): from q and e^G,
    // state_bwd_wg_kernel's QRAW. (GDN alone instantiates it.) No W (the replay formed none,
    // replay_no_w in delta_cuda.cu): Wᵀ∂E from 𝒯 Diag(β) and k, its TBW.
    REWY_CHECK(p.W != nullptr || (replay_without_u(VAR, K, V) && p.Tbeta != nullptr),
               "state_bwd: neither W nor 𝒯 Diag(β) given");
    // p.dKs (Config::dk_state_term, DeltaNet's TBW at whole-V slices): the ∂K̄ state term in place of ∂H⁺.
    constexpr bool kCanDks = VAR == kDeltaNet && replay_without_u(VAR, K, V) && BV == V && K == V;
    REWY_CHECK(!p.dKs || (kCanDks && p.W == nullptr && p.E && !p.dHs && !beside),
               "state_bwd's ∂K̄ state term: DeltaNet's TBW at whole-V slices, after the replay's E, no ∂H⁺");
    dispatch_flag<VAR == kGDN>(p.Qg == nullptr, [&](auto qraw) {
      dispatch_flag<replay_without_u(VAR, K, V)>(p.W == nullptr, [&](auto tbw) {
        constexpr bool kTbw = decltype(tbw)::value;
        dispatch_flag<kCanDks && kTbw && !decltype(qraw)::value>(p.dKs != nullptr, [&](auto dks) {
          constexpr bool kDks = decltype(dks)::value;
          static const std::string name = kname(kDks ? "state_bwd_tbw_dks" : kTbw ? "state_bwd_tbw" : "state_bwd", VAR, K, V, BV);
          launch_sequential<state_bwd_wg_kernel<VAR, K, V, BV, decltype(qraw)::value, kTbw, false, kDks>,
                            WgBwdShape<K, BV, kQlo, kKraw, kTbw, kDks>::total>(name, kStateBwdPhases, p, V / BV, s, beside);
        });
      });
    });
  } else {
    REWY_CHECK(p.W != nullptr, "state_bwd at V-slices of {}: reads W, which the replay did not form", BV);
    REWY_CHECK(!p.path_flag, "state_bwd at V-slices of {}: not on a decay cut's word (the wgmma kernel reads it)", BV);
    static const std::string name = kname("state_bwd", VAR, K, V, BV);
    launch_sequential<state_bwd_kernel<VAR, K, V, BV>, SeqLayout<K, V, BV, kQlo, kKraw>::total>(name, kStateBwdPhases, p,
                                                                                                 V / BV, s, beside);
  }
}

// grad_chunk's products on warpgroups (wgmma, EXP 3: phase 1's s ∂O Hᵀ and s ∂O Eᵀ, phase 2's ∂W,
// phase 5's ∂K̄, with H, ∂O, E, ∂E, ∂H⁺ swizzled; EXP 2: phase 1's alone), each warp's part of the
// m64 fragment being its warp_mma fragment. DeltaNet's and GDN's default is EXP 3: phase 1 alone
// gave DeltaNet's grad_chunk 475.7 -> 455.3 us at shape 0 and its Recompute backward 1.027x (call
// 3); all three, against that, 1.028x more (DeltaNet's grad_chunk 24442 -> 23130 cycles), GDN's
// backward 1.007x (worst 0.999x; its grad_chunk 31048 -> 30493 cycles) (call 4). KDA's and GDN2's
// kernels spill with them (48 and 108 bytes) and lost (0.971x / 0.972x with EXP 2, 0.990x / 0.943x
// with EXP 3): they keep the warp products (H200, 2026-12-02, geomean of shapes 0, 3, 4, 5, `EXPERIMENTS=wgp1|wgp2
// OPS_SHAPES=0,3,4,5 bash scripts/device-experiments.sh`, docs/measurements/2026-12-02-s24/).
// Since the twenty-seventh session's call 1 (2026-12-02) GDN takes EXP 9, KDA 5 and GDN2 7 (the
// factored accumulators: chunk_bwd.cuh, kFac), at both warp counts.
template <int VAR>
inline constexpr int kGradWg = VAR == kDeltaNet ? 3 : VAR == kGDN ? 9 : VAR == kKDA ? 5 : 7;
// KDA's and GDN2's ReWY kernels at K = V = 128 stage ∂v (and ∂w) for 16-byte stores (EXP 15 / 17,
// kStageDV): Recompute backward KDA 1.007x, GDN2 1.018x, Save 1.010x / 1.037x (H200, 2026-12-02,
// `FLA_COMPILE=1 SETS='gdnconv@gdn dvstage@kda,gdn2' LIMIT_S=575 bash scripts/device-decide.sh`,
// docs/measurements/2026-12-02-s28/call1-decide/). S1 holds both tiles only there (static_assert).
// DeltaNet's and GDN's ReWY kernels form R_W = 𝒯ᵀ∂W as −R_U Hᵀ on warpgroups (∂W is never formed,
// the 𝒯ᵀ product goes) and ∂A on warpgroups (EXP 25 / 26, chunk_bwd.cuh's kRW3): Recompute
// backward 1.033x / 1.018x (worst 1.024x / 1.013x), grad_chunk at shape 0 432.7 -> 405.8 us and
// 509.3 -> 492.3 us (H200, 2026-12-02, `VARIANTS=deltanet,gdn,kda,gdn2 SETS='wgda@deltanet,gdn
// wgrw@deltanet,gdn' LIMIT_S=570 bash scripts/device-decide.sh`, docs/measurements/2026-12-02-s29/call2-decide/).
// KDA's at K = V = 128 forms R_W = −R_U Hᵀ too, by warp products (EXP 27: 15 with R_W in ∂E's slot
// and ∂v staged in ∂W's): Recompute backward 1.013x (worst 1.011x), Save 1.018x, grad_chunk at
// shape 0 791.0 -> 775.5 us (H200, 2026-12-02, `DEFAULT_TESTS=1 VARIANTS=deltanet,gdn,kda,gdn2
// SETS='rwkda@kda' LIMIT_S=560 bash scripts/device-decide.sh`, docs/measurements/2026-12-02-s29/call3-decide/).
// (GDN2's would need a fourth slot in phase 2: its ∂w staging and b take the ones KDA's uses.)
// The ReWY kernels at K = V = 128 form ∂A = −stril(R_U Eᵀ) (EXP + 100, chunk_bwd.cuh's kEForm): KDA
// and GDN2 (127 / 117) Recompute backward 1.015x / 1.008x (worst 1.013x / 1.000x), grad_chunk at
// shape 0 779.0 -> 757.9 us and 854.5 -> 828.6 us (H200, 2026-12-03, `FLA_COMPILE=1 TABLE=0
// VARIANTS=deltanet,gdn,kda,gdn2 SETS='eform' bash scripts/device-decide.sh`,
// docs/measurements/2026-12-03-s37/call1/); DeltaNet and GDN (125 / 126, ∂A by warp products on
// the swizzled tiles) 1.017x / 1.019x, grad_chunk 408.8 -> 390.5 us and 496.6 -> 476.2 us
// (experiment `eformw`, docs/measurements/2026-12-03-s37/call2/).
// KDA's and GDN2's kernels at K = V = 128, ReWY and baseline, build phase 4's channel-gate
// operands once a row and chain the blocks' frames on the accumulators (EXP + 1000,
// chunk_bwd.cuh's kOnePack; 1127 / 1117, baseline 1005 / 1007): Recompute backward KDA 1.059x
// (worst 1.049x), GDN2 1.063x (1.059x), Save backward 1.080x / 1.088x, baseline backward 1.050x /
// 1.054x; grad_chunk at shape 0 747.5 -> 685.7 us and 817.1 -> 742.5 us (H200, 2026-12-03,
// `VARIANTS=kda,gdn2 SETS='onepack@kda,gdn2' LIMIT_S=570 bash scripts/device-decide.sh`,
// docs/measurements/2026-12-03-s38/call1/). Other K, V keep the packed per-block operands (K = 128,
// V = 64 has no room for the four one-row tiles in S1-S2).
// KDA's ReWY kernel at K = V = 128 takes ∂Q̂ = s ∂O Hᵀ in phase 2's k-loop beside R_W = −R_U Hᵀ
// (EXP + 2000, chunk_bwd.cuh's kStackH; 3127): Recompute backward 1.031x (worst 1.028x), grad_chunk
// at shape 0 685.7 -> 658.5 us (H200, 2026-12-03, experiment `stackh`, docs/measurements/2026-12-03-s39/call1/).
template <int VAR, int K, int V, bool REWY>
inline constexpr int kGradExp =
    VT<VAR>::vec_gate ? (K == 128 && V == 128 ? 1000 + (REWY ? (VAR == kKDA ? 2127 : 117) : kGradWg<VAR>) : kGradWg<VAR>)
    : REWY            ? (VAR == kDeltaNet ? 25 : 26) + (K == 128 && V == 128 ? 100 : 0)
                      : kGradWg<VAR>;

// The bf16 twin (chunk.cpp) rounds R_W as −R_U Hᵀ exactly where the default kernels form it so.
static_assert(int(Variant::DeltaNet) == kDeltaNet && int(Variant::GDN) == kGDN && int(Variant::KDA) == kKDA &&
              int(Variant::GDN2) == kGDN2, "VariantId follows Variant");
template <int VAR, int K, int V, bool REWY>
inline constexpr bool kTwinMatchesRW =
    kGradRW3<REWY, kGradExp<VAR, K, V, REWY> % 100> == (REWY && rewy_rw_from_ru(static_cast<Variant>(VAR), K, V));
// ... and ∂A as −stril(R_U Eᵀ) exactly where they do (EXP + 100).
template <int VAR, int K, int V, bool REWY>
inline constexpr bool kTwinMatchesDA =
    kGradEForm<REWY, kGradExp<VAR, K, V, REWY>> == (REWY && rewy_da_from_e(static_cast<Variant>(VAR), K, V));

template <int VAR, int K, int V, bool REWY, int NT, int EXP = kGradExp<VAR, K, V, REWY>>
void launch_grad_threads(const DeltaParams& p, cudaStream_t s, bool beside) {
  static_assert(kTwinMatchesRW<VAR, K, V, REWY>,
                "the default grad_chunk forms R_W from R_U where kernels/delta/rw_from_ru.h says it does not, or the reverse");
  static_assert(kTwinMatchesDA<VAR, K, V, REWY>,
                "the default grad_chunk forms ∂A from E where kernels/delta/rw_from_ru.h says it does not, or the reverse");
  constexpr bool kDks = EXP == kGradExp<VAR, K, V, REWY> + 4000;  // Config::dk_state_term's
  constexpr bool kExp = EXP != kGradExp<VAR, K, V, REWY> && !kDks;  // REWY_EXPERIMENTS' kernels time under names with _exp
  static const std::string name = kname(REWY ? (kDks ? "grad_chunk_rewy_dks" : kExp ? "grad_chunk_rewy_exp" : "grad_chunk_rewy")
                                             : (kExp ? "grad_chunk_baseline_exp" : "grad_chunk_baseline"),
                                        VAR, K, V, NT / 32);
  launch_chunk_parallel<grad_chunk_kernel<VAR, K, V, REWY, NT, EXP>, NT, GradLayout<VAR, K, V, kGradSw<EXP % 100>>::total>(
      name, kGradPhases, p, s, beside);
}

// warps: LaunchInfo::grad_warps; beside: LaunchInfo::overlap_grad (p then holds the counts).
// Experiments go here (16 warps only: every instantiation lengthens the variant's translation
// unit, the build's critical path): `if (warps == 16 && experiment("name", VAR)) return
// launch_grad_threads<VAR, K, V, REWY, 512, EXP>(p, s, beside);` (REWY_EXPERIMENTS=name:kda scopes
// one to a variant). None open.
// (The experiments wgp1 and wgp2, EXP 2 and 3 for every variant, measured above, were removed in
// the twenty-sixth session, and EXP 2 with them. EXP 4, phase 5's ∂K̄ alone on warpgroups, experiment wgp5: KDA's phase
// 5 6447 -> 5538 cycles, but its phases 1 and 4, unchanged, slower at the register cap; kernel
// 828.7 -> 884.4 us, backward 0.961x, every variant 0.96-0.98x (H200, 2026-12-02,
// docs/measurements/2026-12-02-s25/call1-wgp5/): removed. With the factored accumulators,
// `facwg2` (EXP 8, EXP 3's warpgroups) and `facpf` (EXP 6, the fragment prefetch everywhere) gave
// KDA's Recompute backward 1.009x / 1.013x and GDN2's 1.008x / 1.016x where `factor` (EXP 5) gave
// 1.018x / 1.020x and `facpair` (EXP 7) GDN2 1.031x (H200, 2026-12-02, docs/measurements/2026-12-02-s27/call1-decide/):
// removed; 5 and 7 are the defaults. On them, `gdnpair` (EXP 10, GDN's ReWY kernel with
// DeltaNet's paired row products: 0.992x), `kdatri1` (EXP 11, KDA's phase-1 ∂P skip: 0.999x) and
// `kdapf2` (EXP 13, KDA's phase-2 prefetch: 1.000x ReWY, 0.987x baseline) lost (H200, 2026-12-02,
// `DEFAULT_TESTS=1 SETS='gdnpair@gdn kdatri1@kda kdapf2@kda' NOSAN='gdnpair kdatri1 kdapf2'
// LIMIT_S=500 bash scripts/device-decide.sh`, docs/measurements/2026-12-02-s27/call2-decide/): removed.
// `gdnconv` (EXP 14, GDN's ReWY kernel with phase 5's conversion of the factored sums while ∂K̄'s
// warpgroup product runs) gave 1.001x (worst 0.997x) where `dvstage` won (kGradExp above; H200,
// 2026-12-02, docs/measurements/2026-12-02-s28/call1-decide/): removed. `bal4` (EXP 19 / 21, KDA's
// and GDN2's ReWY kernels at K = V = 128: phase 4's triangular contractions balanced across the
// row-block warps, partial fragments handed over through S5 behind a two-warp named barrier;
// correct, sanitizers clean) gave 0.996x / 0.992x (H200, 2026-12-02,
// docs/measurements/2026-12-02-s28/call2-decide/): removed. `wgda` (EXP 23 / 24, DeltaNet's and GDN's
// ReWY ∂A alone on warpgroups) gave 1.005x / 1.000x where `wgrw` (the same with R_W = −R_U Hᵀ) won
// (kGradExp above; H200, 2026-12-02, docs/measurements/2026-12-02-s29/call2-decide/): removed.
// `rwgdn2` (EXP 28, GDN2's ReWY kernel at K = V = 128 with R_W = −R_U Hᵀ as KDA's EXP 27, R_W kept
// in registers to phase 3 since GDN2's b takes S4) gave 0.986x (H200, 2026-12-03,
// docs/measurements/2026-12-03-s30/call1-rwgdn2/): removed. `chainexp` (EXP 29 / 30, KDA's and
// GDN2's ReWY kernels at K = V = 128: phase 4's packed builds with one exponential a row and
// channel, the later blocks' factors chained through a ratio table, 41k exponentials a CTA to 16k)
// gave 1.002x / 1.001x: the builds are bound by shared-memory traffic, not the 16 exponentials a
// cycle (H200, 2026-12-03, docs/measurements/2026-12-03-s30/call3-chain/): removed. Of the
// load-order experiments on the ReWY defaults at K = V = 128 (H200, 2026-12-03,
// `VARIANTS=deltanet,gdn,kda,gdn2 SETS='nodh@deltanet qlate@gdn,kda,gdn2 deearly@kda,gdn2
// deqlate@kda,gdn2 dee4@kda,gdn2 dh45@kda' LIMIT_S=570 bash scripts/device-decide.sh`,
// docs/measurements/2026-12-03-s31/call1-decide/), GDN2's `deearly` (EXP 37: ∂E in phase 1's last
// group) won, 1.006x, and is its default (chunk_bwd.cuh, kEarlyDE); the rest lost or tied and were
// removed: `qlate` (EXP 32-34, q after the first barrier: GDN 1.003x, KDA 0.987x, GDN2 0.999x),
// `nodh` (31, DeltaNet's prologue without ∂H⁺: 1.004x), KDA's `deearly` (35: 0.995x), `deqlate`
// (36 / 38: 0.991x / 1.002x), `dee4` (39 / 40, phase 5's E at phase 4's start: 0.997x / 1.005x),
// `dh45` (41, KDA's phase-5 ∂H⁺ at phase 4's start: 0.995x).) `persist` (EXP 127, KDA's ReWY
// kernel at K = V = 128 on a persistent grid, one CTA an SM walking the items with a static
// stride and loading the next item's tiles behind the current one; correct at a grid capped to 2-3
// CTAs, sanitizers clean) lost in all three forms tried: the next ∂O, G, q, k, H, ∂H⁺, 𝒯 during
// phases 4-5 and the ∂g scan (grad_chunk alone at shape 0 778 -> 847 us); only ∂O, G, q, H (773 ->
// 826 us: phase 5 and the scan slowed by as much as the first barrier gained); ∂O, q, 𝒯 during
// phase 4, G and H at the item's start with the gate scan unrolled (782 -> 818 us: the first
// barrier 4725 -> 5257 cycles). Recompute backward 0.960-0.966x, worst 0.871x at 16 pairs, where
// the SMs state_bwd holds keep the static stride's CTAs and their items waiting (H200, 2026-12-03,
// docs/measurements/2026-12-03-s36/call1..call3/): removed. `eform` (EXP + 100: ∂A = −stril(R_U Eᵀ))
// won for KDA and GDN2 (kGradExp above); DeltaNet's and GDN's form (∂A on warpgroups, E kept in S3 to
// phase 5) spilled 20 / 60 bytes and lost, 0.984x / 0.985x (H200, 2026-12-03,
// docs/measurements/2026-12-03-s37/call1/): removed; theirs with ∂A by warp products (`eformw`) won
// (kGradExp above). `dhkeep` (EXP + 200, KDA's E-form kernel with ∂H⁺ kept in S4-S5 from the
// prologue to phase 5 instead of loaded twice, ∂O then ∂E and R_U in S2, ∂v staged in ∂E's slot
// behind one more barrier; no spill, tests and sanitizers clean) gave 0.992x (worst 0.987x): the
// second ∂H⁺ comes from L2 beside phase 5's conversion, where the dropped W and U came from HBM
// (H200, 2026-12-03, docs/measurements/2026-12-03-s37/call3/): removed. `onepack` (EXP + 1000) won
// for KDA and GDN2 (kGradExp above). On it, `dgreg` (EXP + 2000: ∂g's reverse cumsum on the
// fragments by shuffles across the row groups, the row blocks' column totals through S3, ∂g stored
// as float2 from the fragments, no fp32 ∂G or K̄ ⊙ ∂K̄ tile; no spill, tests and sanitizers clean)
// lost: Recompute backward KDA 0.968x, GDN2 0.970x, baseline 0.988x / 0.989x (H200, 2026-12-03,
// docs/measurements/2026-12-03-s38/call3/): removed. `stackh` won for KDA (EXP + 2000, kGradExp
// above); GDN2's (∂Q̂ = s ∂O Hᵀ beside phase 1's ∂W = −∂E Hᵀ) gave 1.001x and KDA's `stackhp` (with
// phase 1's ∂P = s ∂O Eᵀ beside phase 3's ∂A = −R_U Eᵀ too) 1.026x, below stackh's 1.031x (H200,
// 2026-12-03, docs/measurements/2026-12-03-s39/call1/): removed.
template <int VAR, int K, int V, bool REWY>
void launch_grad(const DeltaParams& p, cudaStream_t s, int warps, bool beside) {
  if constexpr (VAR == kDeltaNet && REWY && K == 128 && V == 128)
    if (p.dKs) {  // Config::dk_state_term: ∂K̄'s state term from state_bwd (EXP + 4000)
      REWY_CHECK(warps == 16, "grad_chunk with ∂K̄'s state term from state_bwd: 16 warps, not {}", warps);
      return launch_grad_threads<VAR, K, V, REWY, 512, kGradExp<VAR, K, V, REWY> + 4000>(p, s, beside);
    }
  REWY_CHECK(!p.dKs, "grad_chunk: ∂K̄'s state term from state_bwd serves DeltaNet's ReWY kernel at K = V = 128 alone");
  dispatch_threads(warps, [&](auto nt) { launch_grad_threads<VAR, K, V, REWY, decltype(nt)::value>(p, s, beside); });
}

// Runtime (K, V, BV) to template arguments; BV is capped at V (a slice wider than V is all of V).
template <int VAR, class F>
void dispatch_dims(const LaunchInfo& li, F&& f) {
  auto with_bv = [&](auto kc, auto vc) {
    auto slice = [&](auto bvc) { f(kc, vc, std::integral_constant<int, std::min(decltype(bvc)::value, decltype(vc)::value)>{}); };
    if (li.bv == 16) slice(std::integral_constant<int, 16>{});
    else if (li.bv == 32) slice(std::integral_constant<int, 32>{});
    else if (li.bv == 64) slice(std::integral_constant<int, 64>{});
    else slice(std::integral_constant<int, 128>{});
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
    if constexpr (fuses_wu(VAR) && K == 128 && V == 128)
      if (li.one_kernel) {
        if (li.one_kernel_pform) {
          if constexpr (BV == 64) return launch_fwd_fused<VAR, K, V, true, 64>(p, li.stream);
          return launch_fwd_fused<VAR, K, V, true>(p, li.stream);
        }
        if constexpr (VAR == kDeltaNet) return launch_fwd_fused<VAR, K, V>(p, li.stream);
        else REWY_FAIL("the one-kernel forward's solve form: DeltaNet's alone");
      }
    // Beside (p.prep_done set: delta_cuda.cu's forward decides): the pass first, wy_prep as its
    // programmatic dependent on the SMs it leaves (both wait on nothing else; REWY_KERNEL_TIMING
    // times kernels one at a time, so there they run in order without the flags).
    const bool beside = p.prep_done && !kernel_timing();
    DeltaParams q = p;
    if (!beside) q.prep_done = nullptr, q.prep_items = nullptr;
    auto pass = [&] {
      if (beside) {
        DeltaParams qs = q;  // REWY_BESIDE_CLOCK: the pass's phases beside wy_prep (not wy_prep's)
        if (q.beside_clock) qs.phase_cycles = q.beside_clock + kClockWords;
        if (li.store_state) launch_state_fwd<VAR, K, V, BV, true, true, true>(qs, li.stream);
        else launch_state_fwd<VAR, K, V, BV, true, false, true>(qs, li.stream);
      } else {
        if (li.store_state) launch_state_fwd<VAR, K, V, BV, true, true>(q, li.stream, li.maps);
        else launch_state_fwd<VAR, K, V, BV, true, false>(q, li.stream, li.maps);
      }
    };
    if (beside) {
      // wy_prep loaded first: its lazy load at launch would wait for the pass, which waits for it.
      launch_prep<VAR, K, V>(q, li.stream, li.prep_warps, li.prep_overlap, li.prep_split, true, true);
      pass();
    }
    DeltaParams qp = q;
    if (beside && q.prep_stall_for_test) qp.prep_done += int64_t(q.num_chunks) * q.H + kPrepWords;
    launch_prep<VAR, K, V>(qp, li.stream, li.prep_warps, li.prep_overlap, li.prep_split, beside);
    if (!beside) pass();
  });
}

// The two-pass form after its wy_prep: the plane pass (each segment's outputs and L from its own
// start, first segments from h0; Y and Φ from the identity), the scan (a.first_exact), then
// O += Y H_in over every segment but each sequence's first; longest: the longest segment's chunks.
template <int VAR, int K, int V>
void launch_two_pass(const DeltaParams& q, const SegmentScanParams& a, int longest, cudaStream_t s) {
  DeltaParams planes = q;
  planes.ht = a.L;
  planes.seg_maps = a.Phi;
  launch_state_planes<VAR, K, V>(planes, s);
  launch_segment_scan<VAR, K, V>(a, s);
  DeltaParams correct = q;
  correct.h0 = a.H_in;
  launch_segment_correct<VAR, K, V>(correct, longest, s);
}

// The segment scan (Config::scan_segments; p's sequences are the segments, sc's N the call's
// sequences): the fused wy_prep, the map pass (L, Φ), the scan over segments (H_in, ht), then the
// output pass of every segment from its H_in. DeltaNet's and GDN's fused forms at K = V = 128, the
// output pass at V-slices of 64 or 128 (delta_cuda.cu's forward takes it only there). The map pass
// runs whole-V slices: at 64 its kernel would share the replay pass's stage code at 64, and GDN's
// replay kernel compiled differently beside it (1624 -> 1640 instructions, another inlining).
// The two-pass form (p.seg_y set: SegmentForm::TwoPass; KDA's and GDN2's fused forms in that form
// alone): wy_prep, then launch_two_pass; max_chunks: the longest segment's chunks.
template <int VAR>
void launch_segmented_forward_impl(const DeltaParams& p, const LaunchInfo& li, const SegmentScanParams& sc,
                                   int max_chunks, const SegmentPass* fallback) {
  dispatch_dims<VAR>(li, [&](auto kc, auto vc, auto bvc) {
    constexpr int K = decltype(kc)::value, V = decltype(vc)::value, BV = decltype(bvc)::value;
    if constexpr (VT<VAR>::vec_gate && K == 128 && V == 128) {
      // KDA's and GDN2's fused form by the two-pass form: wy_prep_split writing K ⊙ Γ and 𝒯 Diag(β)
      // (KDA), or Y_W and Y_U with p.Tbeta at 𝒯 (GDN2), the plane pass (KFUSE), the scan, the
      // correction.
      const bool operands = VAR == kKDA ? p.W && !p.U && (p.Tbeta != p.Tinv) == !p.row_betas  // (row_betas: at 𝒯)
                                        : p.W && p.U && p.Tbeta == p.Tinv && !p.row_betas;
      REWY_CHECK(p.Tbeta && operands && !p.prep_done && li.prep_split && p.seg_y && p.seg_seq && sc.first_exact &&
                     !sc.h0 && !p.seg_plan && !fallback,
                 "{}'s segment scan: the fused form's wy_prep_split and the two-pass form", variant_name(VAR));
      launch_prep<VAR, K, V>(p, li.stream, li.prep_warps, false, true);
      launch_two_pass<VAR, K, V>(p, sc, max_chunks, li.stream);
    } else if constexpr (fused_replay(VAR, K, V, false, true, V) && fused_wu(VAR, true, false, BV)) {
      REWY_CHECK(p.Tbeta && !p.prep_done, "the segment scan: the fused forward's wy_prep, not beside the pass");
      REWY_CHECK(!p.seg_y || (p.seg_seq && sc.first_exact && !sc.h0),
                 "the segment scan's two-pass form: seg_seq and first_exact set, no h0 in the scan");
      REWY_CHECK(!p.seg_plan || (VAR == kGDN && p.seg_owner && p.seg_lead && p.seg_last),
                 "the decay cut: GDN's, with owners, first segments and last-segment flags");
      REWY_CHECK(!fallback || (p.seg_plan && p.path_flag && fallback->p.seg_y && fallback->p.path_flag && fallback->sc.path_flag),
                 "the decay cut's fallback: the two-pass form, both paths flagged");
      if constexpr (VAR == kGDN)
        if (p.seg_plan) launch_cut_plan<K>(p, li.stream);
      DeltaParams prep = p;
      prep.path_flag = nullptr;  // (both paths read its 𝒯, P and gates)
      // (wy_prep as a programmatic dependent of the plan, which it does not read here, experiment
      // planpdl: forward 1.003x, weak gates 0.999x at (2, 8192, 16), (1, 16384, 16), (1, 32768, 32);
      // H200, 2026-12-05, docs/measurements/2026-12-05-s55/call1/: removed.)
      launch_prep<VAR, K, V>(prep, li.stream, li.prep_warps, false, false);
      if (p.seg_plan) {
        if constexpr (VAR == kGDN) launch_decay_cut<VAR, K, V>(p, li.stream);
        if (fallback) launch_two_pass<VAR, K, V>(fallback->p, fallback->sc, fallback->max_chunks, li.stream);
        return;
      }
      if (p.seg_y) return launch_two_pass<VAR, K, V>(p, sc, max_chunks, li.stream);
      DeltaParams maps = p;
      maps.h0 = nullptr;
      maps.ht = sc.L;
      maps.seg_maps = sc.Phi;
      launch_state_maps<VAR, K, V, V>(maps, li.stream);
      launch_segment_scan<VAR, K, V>(sc, li.stream);
      DeltaParams out = p;
      out.h0 = sc.H_in;
      out.ht = nullptr;
      launch_state_fwd<VAR, K, V, BV, true, false>(out, li.stream);
    } else {
      REWY_FAIL("the segment scan runs DeltaNet's and GDN's fused forward at K = V = 128 and V-slices of 64 or 128 "
                "(KDA's and GDN2's in two passes at K = V = 128), not {} at K = {}, V = {}, slices of {}",
                variant_name(VAR), K, V, BV);
    }
  });
}

// The decay cut ahead of the sequential forward as its fallback (SegmentChoice::fallback 1): the
// plan, then the cut's wy_prep (the fused kernel, alone) and pass, each leaving at once where the
// plan found a look-back (p.path_flag, value 0); launch_forward then runs the sequential forward
// with the same word at value 1. p's sequences are the cut's segments.
template <int VAR>
void launch_cut_first_impl(const DeltaParams& p, const LaunchInfo& li) {
  dispatch_dims<VAR>(li, [&](auto kc, auto vc, auto bvc) {
    constexpr int K = decltype(kc)::value, V = decltype(vc)::value, BV = decltype(bvc)::value;
    if constexpr (VAR == kGDN && fused_replay(VAR, K, V, false, true, V) && fused_wu(VAR, true, false, BV)) {
      REWY_CHECK(p.seg_plan && p.path_flag && p.path_value == 0 && p.Tbeta && !p.prep_done,
                 "the decay cut ahead of the sequential forward: its plan, word, 𝒯 Diag(β), wy_prep alone");
      launch_cut_plan<K>(p, li.stream);
      launch_prep<VAR, K, V>(p, li.stream, 8, false, false);
      launch_decay_cut<VAR, K, V>(p, li.stream);
    } else {
      REWY_FAIL("the decay cut runs GDN's fused forward at K = V = 128, not {} at K = {}, V = {}", variant_name(VAR), K, V);
    }
  });
}

template <int VAR>
void launch_replay_impl(const DeltaParams& p, const LaunchInfo& li, const BackwardCut* cut) {
  dispatch_dims<VAR>(li, [&](auto kc, auto vc, auto bvc) {
    constexpr int K = decltype(kc)::value, V = decltype(vc)::value, BV = decltype(bvc)::value;
    REWY_CHECK(!cut || (p.path_flag && p.path_value == 1 && !li.maps && li.bwd_bv % 64 == 0),
               "the backward's decay cut: the default passes on the plan's word at value 1, no clusters, state_bwd "
               "on wgmma");
    constexpr bool kCut = VAR == kGDN && fused_replay(VAR, K, V, false, true, V);
    REWY_CHECK(kCut || !cut, "the backward's decay cut runs GDN's fused replay at K = V = 128, not {} at K = {}, V = {}",
               variant_name(VAR), K, V);
    if constexpr (kCut)
      if (cut) launch_cut_plan<K>(cut->p, li.stream);
    DeltaParams shared = p;
    shared.path_flag = nullptr;  // (wy_replay serves both paths)
    if (!li.tbeta_saved) launch_wy_replay<VAR, K, V>(shared, li.stream, li.replay_warps);
    if constexpr (kCut)
      if (cut) launch_backward_cut<VAR, K, V>(*cut, li.stream);
    launch_state_fwd<VAR, K, V, BV, false, true>(p, li.stream, li.maps);
  });
}

template <int VAR>
void launch_backward_impl(const DeltaParams& p, const LaunchInfo& li_pass, bool rewy) {
  LaunchInfo li = li_pass;
  li.bv = li.bwd_bv;
  dispatch_dims<VAR>(li, [&](auto kc, auto vc, auto bvc) {
    constexpr int K = decltype(kc)::value, V = decltype(vc)::value, BV = decltype(bvc)::value;
    launch_state_bwd<VAR, K, V, BV>(p, li.stream, li.overlap_passes);
    if (rewy) launch_grad<VAR, K, V, true>(p, li.stream, li.grad_warps, li.overlap_grad);
    else launch_grad<VAR, K, V, false>(p, li.stream, li.grad_warps, li.overlap_grad);
  });
}

}  // namespace rewy::delta::cuda_impl

#define REWY_DELTA_INSTANTIATE(VAR)                                                                              \
  namespace rewy::delta::cuda_impl {                                                                             \
  template <> void launch_forward<VAR>(const DeltaParams& p, const LaunchInfo& li) { launch_forward_impl<VAR>(p, li); } \
  template <> void launch_segmented_forward<VAR>(const DeltaParams& p, const LaunchInfo& li,                    \
                                                 const SegmentScanParams& sc, int max_chunks,                    \
                                                 const SegmentPass* fallback) {                                  \
    launch_segmented_forward_impl<VAR>(p, li, sc, max_chunks, fallback);                                         \
  }                                                                                                              \
  template <> void launch_cut_first<VAR>(const DeltaParams& p, const LaunchInfo& li) { launch_cut_first_impl<VAR>(p, li); } \
  template <> void launch_replay<VAR>(const DeltaParams& p, const LaunchInfo& li, const BackwardCut* cut) {     \
    launch_replay_impl<VAR>(p, li, cut);                                                                          \
  }                                                                                                              \
  template <> void launch_backward<VAR>(const DeltaParams& p, const LaunchInfo& li, bool rewy) {               \
    launch_backward_impl<VAR>(p, li, rewy);                                                                      \
  }                                                                                                              \
  }
