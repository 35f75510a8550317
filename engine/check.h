// Errors carry file:line. Every CUDA/cuBLAS/NCCL/HDF5 call is wrapped in a check macro.
#pragma once
#include <fmt/format.h>
#include <stdexcept>
#include <string>

namespace rewy {

struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

[[noreturn]] inline void throw_error(const char* file, int line, const std::string& msg) {
  throw Error(fmt::format("{} ({}:{})", msg, file, line));
}

}  // namespace rewy

// REWY_CHECK(cond, "format {}", args...): throws rewy::Error with the message and file:line.
#define REWY_CHECK(cond, ...)                                                                 \
  do {                                                                                        \
    if (!(cond)) ::rewy::throw_error(__FILE__, __LINE__, ::fmt::format(__VA_ARGS__));         \
  } while (0)

#define REWY_FAIL(...) ::rewy::throw_error(__FILE__, __LINE__, ::fmt::format(__VA_ARGS__))
