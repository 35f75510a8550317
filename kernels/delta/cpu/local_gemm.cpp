#include "kernels/delta/cpu/local_gemm.h"

namespace rewy::delta::cpu {

namespace {
thread_local GemmRecorder* active = nullptr;
}

GemmRecorder::GemmRecorder() : prev_(active) { active = this; }
GemmRecorder::~GemmRecorder() { active = prev_; }

std::vector<GemmCall> GemmRecorder::calls(const std::string& stage) const {
  std::vector<GemmCall> r;
  for (const auto& c : calls_)
    if (c.stage == stage) r.push_back(c);
  return r;
}

void record_gemm(const char* stage, const char* tag, int64_t m, int64_t n, int64_t k) {
  if (active) active->calls_.push_back(GemmCall{stage, tag, m, n, k});
}

void record_pairwise_block() {
  if (active) ++active->pairwise_blocks_;
}

}  // namespace rewy::delta::cpu
