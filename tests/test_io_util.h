// A fixture for tests that write files: a fresh seed that every failure reports
// (REWY_TEST_SEED=<n> replays it), an RNG seeded with it, and a temporary folder removed afterwards.
#pragma once
#include <gtest/gtest.h>
#include <unistd.h>

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

}  // namespace rewy::test
