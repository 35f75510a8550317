// Command-line values for the benchmark tools, checked: each helper throws std::invalid_argument
// naming the flag and the value (the tools print it and exit 2 before anything runs).
#pragma once
#include <charconv>
#include <cstdint>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/shapes.h"

namespace rewy::bench {

// Walks argv[1..argc): `while (args.next())` visits each word as flag(); value() takes the word
// after it (throws "FLAG needs a value" at the end); word() is the flag's own argv entry, for the
// words a tool passes on (Google Benchmark's flags).
class ArgWalker {
 public:
  ArgWalker(int argc, char** argv) : argc_(argc), argv_(argv) {}
  bool next() {
    if (++i_ >= argc_) return false;
    flag_ = argv_[i_];
    return true;
  }
  const std::string& flag() const { return flag_; }
  char* word() const { return argv_[i_]; }
  std::string value() {
    if (i_ + 1 >= argc_) throw std::invalid_argument(flag_ + " needs a value");
    return argv_[++i_];
  }

 private:
  int argc_;
  char** argv_;
  int i_ = 0;
  std::string flag_;
};

template <class I = int>
inline I parse_int(const std::string& flag, const std::string& v) {
  I x = 0;
  const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
  if (ec != std::errc() || end != v.data() + v.size() || v.empty())
    throw std::invalid_argument(flag + " needs an integer, got '" + v + "'");
  return x;
}
inline int int_at_least(const std::string& flag, const std::string& v, int lo, const char* unit) {
  const int x = parse_int(flag, v);
  if (x < lo) throw std::invalid_argument(flag + " needs at least " + std::to_string(lo) + unit + ", got " + v);
  return x;
}
inline int int_in(const std::string& flag, const std::string& v, std::initializer_list<int> allowed, const char* what) {
  const int x = parse_int(flag, v);
  for (int a : allowed)
    if (x == a) return x;
  throw std::invalid_argument(flag + " takes " + what + ", got " + v);
}
inline std::vector<std::string> words_in(const std::string& flag, const std::string& v,
                                         std::initializer_list<const char*> allowed, const char* what) {
  std::vector<std::string> out = split(v);
  if (out.empty()) throw std::invalid_argument(flag + " needs at least one of " + what);
  for (const auto& w : out) {
    bool ok = false;
    for (const char* a : allowed) ok = ok || w == a;
    if (!ok) throw std::invalid_argument(flag + ": unknown '" + w + "', expected " + what);
  }
  return out;
}
// "kda,gdn2": delta-rule operator names, at least one.
inline std::vector<std::string> op_names(const std::string& flag, const std::string& v) {
  return words_in(flag, v, {"deltanet", "gdn", "kda", "gdn2"}, "deltanet, gdn, kda or gdn2");
}
// "0,3,5": indices into kShapes, at least one.
inline std::vector<int> shape_indices(const std::string& flag, const std::string& v) {
  std::vector<int> out;
  for (const auto& s : split(v)) {
    const int si = parse_int(flag, s);
    if (si < 0 || si >= kNumShapes)
      throw std::invalid_argument(flag + ": shape " + s + " does not exist (0 to " + std::to_string(kNumShapes - 1) + ")");
    out.push_back(si);
  }
  if (out.empty()) throw std::invalid_argument(flag + " needs at least one shape index, got '" + v + "'");
  return out;
}

}  // namespace rewy::bench
