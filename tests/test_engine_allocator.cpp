// Host allocator: alignment, stats, size classes. (Device reuse: gpu_test_engine_memory.cpp.)
#include <gtest/gtest.h>

#include "engine/allocator.h"
#include "engine/tensor.h"

using namespace rewy;

namespace {

TEST(EngineAllocator, SizeClassesRoundUp) {
  EXPECT_EQ(allocation_size_class(0), 0u);
  EXPECT_EQ(allocation_size_class(1), 512u);
  EXPECT_EQ(allocation_size_class(512), 512u);
  EXPECT_EQ(allocation_size_class(513), 1024u);
  EXPECT_EQ(allocation_size_class((1u << 20) - 1), size_t(1) << 20);
  EXPECT_EQ(allocation_size_class((1u << 20) + 1), size_t(2) << 20);  // 2 MiB steps above 1 MiB
  EXPECT_EQ(allocation_size_class(size_t(5) << 20), size_t(6) << 20);
}

TEST(EngineAllocator, HostBlocksAreAlignedAndCounted) {
  Allocator& a = allocator_for(cpu());
  const AllocatorStats before = a.stats();
  const Stream s = Stream::default_for(cpu());
  void* p = a.allocate(100, s);
  void* q = a.allocate(3, s);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(q) % 64, 0u);
  AllocatorStats mid = a.stats();
  EXPECT_EQ(mid.allocations - before.allocations, 2u);
  EXPECT_EQ(mid.bytes_in_use - before.bytes_in_use, 103u);
  a.deallocate(p, 100, s);
  a.deallocate(q, 3, s);
  EXPECT_EQ(a.stats().bytes_in_use, before.bytes_in_use);
}

TEST(EngineAllocator, TensorsReturnTheirMemory) {
  Allocator& a = allocator_for(cpu());
  const size_t before = a.stats().bytes_in_use;
  {
    Tensor t = Tensor::empty({16, 16}, DType::F32);
    Tensor v = t.slice(0, 2, 4);  // a view keeps the storage alive
    t = Tensor{};
    EXPECT_EQ(a.stats().bytes_in_use - before, 16u * 16 * 4);
    EXPECT_EQ(v.numel(), 32);
  }
  EXPECT_EQ(a.stats().bytes_in_use, before);
  Tensor empty = Tensor::empty({0, 8}, DType::F64);  // no bytes, no allocation
  EXPECT_EQ(a.stats().bytes_in_use, before);
  EXPECT_EQ(empty.numel(), 0);
}

}  // namespace
