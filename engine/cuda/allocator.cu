// Caching, stream-ordered device allocator, one per GPU.
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "engine/allocator.h"
#include "engine/cuda/check_cuda.h"

namespace rewy {
namespace {

class CudaCachingAllocator final : public Allocator {
 public:
  explicit CudaCachingAllocator(int device) : device_(device) {}
  ~CudaCachingAllocator() override {
    // Process teardown: the driver may already be gone; release what we can, ignore errors.
    for (auto& [key, blocks] : pool_)
      for (void* p : blocks) cudaFree(p);
  }

  void* allocate(size_t bytes, const Stream& s) override {
    void* p = allocate_block(bytes, s);
    if (allocation_poisoning()) {
      DeviceGuard guard(cuda(device_));
      CUDA_CHECK(cudaMemsetAsync(p, 0xff, allocation_size_class(bytes), static_cast<cudaStream_t>(s.handle)));
    }
    return p;
  }

  void* allocate_block(size_t bytes, const Stream& s) {
    const size_t cls = allocation_size_class(bytes);
    const Key key{s.handle, cls};
    {
      std::lock_guard<std::mutex> g(mu_);
      st_.allocations++;
      auto it = pool_.find(key);
      if (it != pool_.end() && !it->second.empty()) {
        void* p = it->second.back();
        it->second.pop_back();
        st_.reuses++;
        st_.bytes_cached -= cls;
        st_.bytes_in_use += cls;
        return p;
      }
    }
    DeviceGuard guard(cuda(device_));
    void* p = nullptr;
    cudaError_t e = cudaMalloc(&p, cls);
    if (e == cudaErrorMemoryAllocation) {  // give the pool back and try once more
      cudaGetLastError();
      empty_cache();
      e = cudaMalloc(&p, cls);
    }
    if (e != cudaSuccess) {
      cudaGetLastError();
      AllocatorStats st = stats();
      REWY_FAIL("cudaMalloc of {} bytes on cuda:{} failed: {} ({} bytes in use, {} cached)", cls, device_,
                cudaGetErrorString(e), st.bytes_in_use, st.bytes_cached);
    }
    std::lock_guard<std::mutex> g(mu_);
    st_.system_allocs++;
    st_.bytes_in_use += cls;
    return p;
  }

  void deallocate(void* p, size_t bytes, const Stream& s) override {
    const size_t cls = allocation_size_class(bytes);
    std::lock_guard<std::mutex> g(mu_);
    pool_[Key{s.handle, cls}].push_back(p);
    st_.bytes_in_use -= cls;
    st_.bytes_cached += cls;
  }

  AllocatorStats stats() const override {
    std::lock_guard<std::mutex> g(mu_);
    return st_;
  }

  void empty_cache() override {
    DeviceGuard guard(cuda(device_));
    CUDA_CHECK(cudaDeviceSynchronize());  // pooled blocks may still be read by queued work
    std::lock_guard<std::mutex> g(mu_);
    for (auto& [key, blocks] : pool_) {
      for (void* p : blocks) CUDA_CHECK(cudaFree(p));
      st_.bytes_cached -= key.second * blocks.size();
      blocks.clear();
    }
  }

 private:
  using Key = std::pair<void*, size_t>;  // (stream, size class)
  int device_;
  mutable std::mutex mu_;
  std::map<Key, std::vector<void*>> pool_;
  AllocatorStats st_;
};

}  // namespace

Allocator& cuda_allocator_for(int device) {
  static std::mutex mu;
  static std::vector<std::unique_ptr<CudaCachingAllocator>> allocators;
  std::lock_guard<std::mutex> g(mu);
  REWY_CHECK(device >= 0 && device < cuda_device_count(), "no CUDA device {} ({} present)", device,
             cuda_device_count());
  if (allocators.size() <= size_t(device)) allocators.resize(size_t(device) + 1);
  if (!allocators[device]) allocators[device] = std::make_unique<CudaCachingAllocator>(device);
  return *allocators[device];
}

}  // namespace rewy
