#include "engine/allocator.h"

#include <atomic>
#include <cstdlib>
#include <mutex>

#include "engine/check.h"

namespace rewy {

size_t allocation_size_class(size_t bytes) {
  constexpr size_t kSmall = 512, kLarge = size_t(2) << 20, kSplit = size_t(1) << 20;
  if (bytes == 0) return 0;
  if (bytes < kSplit) return (bytes + kSmall - 1) / kSmall * kSmall;
  return (bytes + kLarge - 1) / kLarge * kLarge;
}

namespace {
std::atomic<bool> g_poison{false};
}  // namespace

void set_allocation_poisoning(bool on) { g_poison = on; }
bool allocation_poisoning() { return g_poison; }

namespace {

// Host memory: plain aligned allocation (malloc is already a caching allocator on the host).
class CpuAllocator final : public Allocator {
 public:
  void* allocate(size_t bytes, const Stream&) override {
    const size_t n = (bytes + 63) / 64 * 64;
    void* p = std::aligned_alloc(64, n);
    REWY_CHECK(p, "host allocation of {} bytes failed", bytes);
    std::lock_guard<std::mutex> g(mu_);
    st_.bytes_in_use += bytes;
    st_.allocations++;
    st_.system_allocs++;
    return p;
  }
  void deallocate(void* p, size_t bytes, const Stream&) override {
    std::free(p);
    std::lock_guard<std::mutex> g(mu_);
    st_.bytes_in_use -= bytes;
  }
  AllocatorStats stats() const override {
    std::lock_guard<std::mutex> g(mu_);
    return st_;
  }
 private:
  mutable std::mutex mu_;
  AllocatorStats st_;
};

}  // namespace

#if REWY_WITH_CUDA
Allocator& cuda_allocator_for(int device);  // engine/cuda/allocator.cu
#endif

Allocator& allocator_for(Device d) {
  if (d.is_cpu()) {
    static CpuAllocator cpu_alloc;
    return cpu_alloc;
  }
#if REWY_WITH_CUDA
  return cuda_allocator_for(d.index);
#else
  REWY_FAIL("memory on {} requested, but rewy was built without CUDA (-DREWY_CUDA=OFF)", d.str());
#endif
}

}  // namespace rewy
