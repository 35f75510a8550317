// bench_delta's command line: every value checked before anything runs (no CUDA here, so the CPU
// build tests it: tests/test_bench_options.cpp).
#pragma once
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/args.h"
#include "bench/shapes.h"

namespace rewy::bench {

struct DeltaOptions {
  std::vector<std::string> ops{"deltanet", "gdn", "kda", "gdn2"};
  std::vector<int> shapes{0, 1, 2, 3, 4, 5};  // indices into kShapes
  std::vector<std::string> policies{"recompute", "save"};
  std::vector<std::string> backward{"rewy", "baseline"};
  std::vector<std::string> gates{"bench", "realistic"};
  int samples = 30;
  std::string csv;
  int state_slice = 0;      // Config::state_slice (0: automatic)
  int state_bwd_slice = 0;  // Config::state_bwd_slice (0: automatic)
  int grad_warps = 0;       // Config::grad_warps (0: automatic)
  int prep_warps = 0;       // Config::prep_warps (0: automatic)
  int replay_warps = 0;     // Config::replay_warps (0: automatic)
  bool prep_overlap = false;         // Config::prep_overlap
  bool serial_state_passes = false;  // Config::concurrent_state_passes = false
  bool serial_grad = false;          // Config::overlap_grad = false
  bool serial_forward = false;       // Config::prep_beside = false
  bool multicast = false;            // Config::multicast_state_tiles = true
  bool unfused_kda_forward = false;  // Config::fuse_kda_forward = false
  int scan_segments = 0;             // Config::scan_segments (0: the rule; 1: off)
  bool two_pass_segments = false;    // Config::segment_form = TwoPass (where --scan-segments or the rule cuts)
  bool decay_cut = false;            // Config::segment_form = DecayCut (GDN; the same)
  int cut_fallback = 0;              // Config::cut_fallback_segments (the decay cut's fallback: 0 none, 1, S)
  int backward_cut = 0;              // Config::backward_cut_segments (GDN's backward; 0: the rule; 1: off)
  int flush_mb = 256;                // the L2 flush before each sample (time_samples)
};

// Reads bench_delta's flags from argv[1..argc); what it does not know (Google Benchmark's flags)
// goes to `rest` after argv[0]. Throws std::invalid_argument naming the flag and the value.
inline DeltaOptions parse_delta_options(int argc, char** argv, std::vector<char*>& rest) {
  DeltaOptions opt;
  rest.assign(1, argv[0]);
  for (ArgWalker args(argc, argv); args.next();) {
    const std::string& a = args.flag();
    if (a == "--ops") {
      opt.ops = op_names(a, args.value());
    } else if (a == "--shapes") {
      opt.shapes = shape_indices(a, args.value());
    } else if (a == "--policies") {
      opt.policies = words_in(a, args.value(), {"recompute", "save"}, "recompute or save");
    } else if (a == "--backward") {
      opt.backward = words_in(a, args.value(), {"rewy", "baseline"}, "rewy or baseline");
    } else if (a == "--gates") {
      opt.gates = words_in(a, args.value(), {"bench", "realistic", "weak"}, "bench, realistic or weak");
    } else if (a == "--samples") {
      opt.samples = int_at_least(a, args.value(), 1, "");
    } else if (a == "--csv") {
      opt.csv = args.value();
    } else if (a == "--state-slice") {
      opt.state_slice = int_in(a, args.value(), {0, 16, 32, 64, 128}, "0 (automatic), 16, 32, 64 or 128");
    } else if (a == "--bwd-slice") {
      opt.state_bwd_slice = int_in(a, args.value(), {0, 16, 32, 64, 128}, "0 (automatic), 16, 32, 64 or 128");
    } else if (a == "--grad-warps") {
      opt.grad_warps = int_in(a, args.value(), {0, 8, 16}, "0 (automatic), 8 or 16");
    } else if (a == "--prep-warps") {
      opt.prep_warps = int_in(a, args.value(), {0, 8, 16}, "0 (automatic), 8 or 16");
    } else if (a == "--replay-warps") {
      opt.replay_warps = int_in(a, args.value(), {0, 8, 16}, "0 (automatic), 8 or 16");
    } else if (a == "--prep-overlap") {
      opt.prep_overlap = true;
    } else if (a == "--serial-state-passes") {
      opt.serial_state_passes = true;
    } else if (a == "--serial-grad") {
      opt.serial_grad = true;
    } else if (a == "--serial-forward") {
      opt.serial_forward = true;
    } else if (a == "--multicast") {
      opt.multicast = true;
    } else if (a == "--unfused-kda-forward") {
      opt.unfused_kda_forward = true;
    } else if (a == "--scan-segments") {
      opt.scan_segments = int_at_least(a, args.value(), 0, "");
    } else if (a == "--two-pass-segments") {
      opt.two_pass_segments = true;
    } else if (a == "--decay-cut") {
      opt.decay_cut = true;
    } else if (a == "--cut-fallback") {
      opt.cut_fallback = int_at_least(a, args.value(), 0, "");
    } else if (a == "--backward-cut") {
      opt.backward_cut = int_at_least(a, args.value(), 0, "");
    } else if (a == "--flush-mb") {
      opt.flush_mb = int_at_least(a, args.value(), 1, " (MB)");
    } else {
      rest.push_back(args.word());
    }
  }
  return opt;
}

}  // namespace rewy::bench
