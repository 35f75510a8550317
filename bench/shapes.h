// FLA's six reference shapes and the small helpers the benchmarks share (no CUDA: the option
// parsers that read them are tested in the CPU build).
#pragma once
#include <algorithm>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

namespace rewy::bench {

// [B, T, H, D] of ../shared/bench/README.md's six shapes; "shape i" is kShapes[i].
struct Shape4 {
  int64_t B, T, H, D;
};
inline constexpr Shape4 kShapes[] = {{8, 2048, 16, 128}, {4, 4096, 16, 128}, {2, 8192, 16, 128},
                                     {1, 16384, 16, 128}, {8, 4096, 32, 128}, {1, 32768, 32, 128}};
inline constexpr int kNumShapes = int(sizeof(kShapes) / sizeof(kShapes[0]));

// "a,b,,c" -> {"a", "b", "c"}.
inline std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

}  // namespace rewy::bench
