// For tests that write files or run the `rewy` binary: a fixture with a fresh seed that every
// failure reports (REWY_TEST_SEED=<n> replays it), an RNG seeded with it and a temporary folder
// removed afterwards; and rewy_cli(), which runs the binary (path in REWY_BINARY) as a subprocess.
#pragma once
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <optional>
#include <random>
#include <string>

#include "test_engine_util.h"

namespace rewy::test {

class FileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    seed_ = fresh_seed();
    trace_.emplace(__FILE__, __LINE__, "seed " + std::to_string(seed_) + " (replay: REWY_TEST_SEED=" +
                                           std::to_string(seed_) + ")");
    rng_.seed(seed_);
    const std::string test = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    dir_ = std::filesystem::temp_directory_path() /
           ("rewy_" + test + "_" + std::to_string(::getpid()) + "_" + std::to_string(seed_));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override {
    std::filesystem::remove_all(dir_);
    trace_.reset();
  }
  std::string file(const std::string& name) const { return (dir_ / name).string(); }

  uint64_t seed_ = 0;
  std::mt19937_64 rng_;
  std::filesystem::path dir_;

 private:
  std::optional<::testing::ScopedTrace> trace_;
};

#ifdef REWY_BINARY
struct CliResult {
  int code = -1;
  std::string out;  // stdout and stderr
};

// Runs `rewy ARGS` through the shell (quote paths in ARGS).
inline CliResult rewy_cli(const std::string& args) {
  const std::string cmd = std::string("'") + REWY_BINARY + "' " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return {};
  CliResult r;
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) r.out.append(buf, n);
  const int st = pclose(p);
  r.code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  return r;
}
#endif

}  // namespace rewy::test
