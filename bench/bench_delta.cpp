// Forward and backward time of the CUDA delta-rule kernels at the six benchmark shapes of
// ../shared/bench/README.md, with its input distributions (generated on the GPU).
// Per row: CUDA events around one call, the L2 flushed before each sample, median of --samples.
// Backward = the whole low-level backward given the forward's saved tensors (what FLA's
// autograd.grad over a retained graph times), including the Recompute policy's replay.
//
//   bench_delta [--ops deltanet,gdn,kda,gdn2] [--shapes 0,1,2,3,4,5] [--policies recompute,save]
//               [--backward rewy,baseline] [--gates bench,realistic,weak] [--samples 30] [--csv FILE]
//               [--state-slice 0|16|32|64|128] [--bwd-slice 0|16|32|64|128] [--grad-warps 0|8|16]
//               [--prep-warps 0|8|16] [--replay-warps 0|8|16] [--serial-state-passes]
//               [--serial-grad] [--serial-forward] [--multicast] [--prep-overlap] [--unfused-kda-forward]
//               [--scan-segments 0|1|S] [--two-pass-segments] [--decay-cut] [--cut-fallback 0|1|S]
//               [--backward-cut 0|1|S] [--flush-mb 256]
//               [Google Benchmark flags]
// A malformed value (bench/delta_options.h) exits 2 with the flag and value named, before any run.
#include <benchmark/benchmark.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/bench_util.h"
#include "bench/delta_options.h"
#include "engine/cuda/check_cuda.h"
#include "kernels/delta/delta.h"
#include "kernels/delta/random_inputs.h"

using namespace rewy;
using namespace rewy::bench;
using namespace rewy::delta;

namespace {

using Options = DeltaOptions;

struct Row {
  std::string op, policy, gates, dir, algo;
  int shape;
  double median_ms, min_ms;
};
std::vector<Row> g_rows;

void bench_case(benchmark::State& state, const Options& opt, const std::string& op, int si, const std::string& pol,
                const std::string& gates, bool fwd_dir, const std::string& algo) {
  if (!cuda_available()) {
    state.SkipWithError("no CUDA device");
    return;
  }
  const Shape4 sh = kShapes[si];
  RandomSpec sp;
  sp.variant = parse_variant(op);
  sp.B = sh.B, sp.T = sh.T, sp.H = sh.H, sp.K = sh.D, sp.V = sh.D;
  sp.h0 = false, sp.dht = false;  // as fla_anchor.py: no initial state, no final-state cotangent
  // realistic: KDA's and GDN2's safe-gate range; weak: GDN with per-token log-decays uniform in
  // [-0.002, 0) (heads whose state outlives 300 chunks, within GDN's initial range).
  sp.gates = gates == "realistic" ? Gates::SafeGate : gates == "weak" ? Gates::Uniform : Gates::Bench;
  sp.gate = -0.002;
  sp.seed = 1234 + uint64_t(si);
  const RandomCase c = make_random_case_cuda(sp, cuda(0));
  Config cfg;
  cfg.variant = sp.variant;
  cfg.policy = parse_policy(pol);
  cfg.backward = parse_backward(algo);
  cfg.output_final_state = false;
  cfg.state_slice = opt.state_slice;
  cfg.state_bwd_slice = opt.state_bwd_slice;
  cfg.grad_warps = opt.grad_warps;
  cfg.prep_warps = opt.prep_warps;
  cfg.replay_warps = opt.replay_warps;
  cfg.prep_overlap = opt.prep_overlap;
  cfg.concurrent_state_passes = !opt.serial_state_passes;
  cfg.overlap_grad = !opt.serial_grad;
  cfg.prep_beside = !opt.serial_forward;
  cfg.multicast_state_tiles = opt.multicast;
  cfg.fuse_kda_forward = !opt.unfused_kda_forward;
  cfg.scan_segments = opt.scan_segments;
  if (opt.two_pass_segments) cfg.segment_form = SegmentForm::TwoPass;
  if (opt.decay_cut) cfg.segment_form = SegmentForm::DecayCut;
  cfg.cut_fallback_segments = opt.cut_fallback;
  cfg.backward_cut_segments = opt.backward_cut;
  std::vector<double> ms, host;
  for (auto _ : state) {
    host.clear();
    if (fwd_dir) {
      ms = time_samples([&] { benchmark::DoNotOptimize(forward(cfg, c.in)); }, opt.samples, opt.flush_mb, &host);
    } else {
      const ForwardResult f = forward(cfg, c.in);
      ms = time_samples([&] { benchmark::DoNotOptimize(backward(cfg, c.in, f, c.dout, c.dht)); }, opt.samples,
                        opt.flush_mb, &host);
    }
    state.SetIterationTime(median(ms) / 1e3);
  }
  const double med = median(ms), mn = *std::min_element(ms.begin(), ms.end());
  state.counters["median_ms"] = med;
  state.counters["min_ms"] = mn;
  state.counters["host_ms"] = median(host);  // the host time inside the call (median)
  g_rows.push_back({op, pol, gates, fwd_dir ? "fwd" : "bwd", fwd_dir ? "-" : algo, si, med, mn});
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<char*> rest;
  Options opt;
  try {
    opt = parse_delta_options(argc, argv, rest);
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "bench_delta: %s\n", e.what());
    return 2;
  }
  for (const auto& op : opt.ops)
    for (int si : opt.shapes)
      for (const auto& pol : opt.policies)
        for (const auto& gates : opt.gates) {
          if (gates == "realistic" && !channel_gate(parse_variant(op))) continue;
          if (gates == "weak" && parse_variant(op) != Variant::GDN) continue;
          auto add = [&](bool fwd, const std::string& algo) {
            const std::string name = fmt::format("{}/{}/shape{}/{}/{}{}", op, fwd ? "fwd" : "bwd", si, pol, gates,
                                                 fwd ? "" : "/" + algo);
            benchmark::RegisterBenchmark(name.c_str(), [=, &opt](benchmark::State& st) {
              bench_case(st, opt, op, si, pol, gates, fwd, algo);
            })->UseManualTime()->Iterations(1)->Unit(benchmark::kMillisecond);
          };
          add(true, "rewy");
          for (const auto& algo : opt.backward) add(false, algo);
        }
  int rargc = int(rest.size());
  benchmark::Initialize(&rargc, rest.data());
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  if (!opt.csv.empty()) {
    FILE* f = std::fopen(opt.csv.c_str(), "w");
    if (!f) {
      std::fprintf(stderr, "bench_delta: cannot write %s\n", opt.csv.c_str());
      return 1;
    }
    std::fprintf(f, "op,B,T,H,D,policy,gates,dir,algo,median_ms,min_ms\n");
    for (const Row& r : g_rows) {
      const Shape4 s = kShapes[r.shape];
      std::fprintf(f, "%s,%ld,%ld,%ld,%ld,%s,%s,%s,%s,%.4f,%.4f\n", r.op.c_str(), long(s.B), long(s.T), long(s.H),
                   long(s.D), r.policy.c_str(), r.gates.c_str(), r.dir.c_str(), r.algo.c_str(), r.median_ms, r.min_ms);
    }
    std::fclose(f);
  }
  return 0;
}
