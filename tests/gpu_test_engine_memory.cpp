// Device memory and transfers: the caching allocator reuses freed blocks on their stream without
// new cudaMallocs, and host <-> device copies keep values, strides and casts. Skipped without a
// device.
#include <gtest/gtest.h>

#include "engine/allocator.h"
#include "engine/copy.h"
#include "test_engine_util.h"

using namespace rewy;
using namespace rewy::test;

namespace {

TEST(GpuMemory, FreedBlocksAreReusedOnTheirStream) {
  REWY_REQUIRE_CUDA();
  Allocator& a = allocator_for(cuda(0));
  OwnedStream s(cuda(0)), other(cuda(0));
  void* first = nullptr;
  {
    Tensor t = Tensor::empty({1000, 300}, DType::F32, cuda(0), &s.get());  // 1.2 MB: the 2 MiB class
    first = t.data_ptr();
  }
  const AllocatorStats before = a.stats();
  EXPECT_GE(before.bytes_cached, size_t(2) << 20);
  {
    Tensor t = Tensor::empty({1100, 280}, DType::F32, cuda(0), &s.get());  // same size class, same stream
    EXPECT_EQ(t.data_ptr(), first);
    const AllocatorStats after = a.stats();
    EXPECT_EQ(after.reuses - before.reuses, 1u);
    EXPECT_EQ(after.system_allocs, before.system_allocs);  // no new cudaMalloc
    EXPECT_EQ(after.allocations - before.allocations, 1u);
  }
  {
    // Another stream may still be using the cached block: it gets a fresh one.
    Tensor t = Tensor::empty({1000, 300}, DType::F32, cuda(0), &other.get());
    EXPECT_NE(t.data_ptr(), first);
  }
  synchronize(s.get());
  synchronize(other.get());
  a.empty_cache();
  EXPECT_EQ(a.stats().bytes_cached, 0u);
}

TEST(GpuMemory, TransfersKeepValuesStridesAndCasts) {
  REWY_REQUIRE_CUDA();
  REWY_TEST_SEED(seed);
  OwnedStream s(cuda(0));
  const Tensor x = uniform({6, 7, 5}, DType::F64, seed, 0, -100, 100);
  for (DType dt : {DType::F32, DType::BF16, DType::F64}) {
    SCOPED_TRACE(dtype_name(dt));
    const Tensor xt = x.to(dt);
    const Tensor g = on(xt, cuda(0), s.get());
    EXPECT_EQ(g.device(), cuda(0));
    EXPECT_EQ(on(g, cpu(), s.get()).to_vector(), xt.to_vector());
    // A strided device view read back, a host view written from the device.
    const Tensor gv = g.slice(1, 2, 6).transpose(0, 2);
    EXPECT_EQ(on(gv, cpu(), s.get()).to_vector(), xt.slice(1, 2, 6).transpose(0, 2).contiguous().to_vector());
    Tensor host = Tensor::zeros({5, 4, 6}, DType::F64);
    Tensor hv = host.transpose(0, 1);
    hv.copy_from(g.slice(1, 2, 6).permute({1, 2, 0}), &s.get());
    EXPECT_EQ(hv.contiguous().to_vector(), xt.slice(1, 2, 6).permute({1, 2, 0}).contiguous().to_vector());
  }
  // Casts on the device round like the host (f64 -> f32 -> bf16).
  const Tensor g64 = on(x, cuda(0), s.get());
  const Tensor g16 = g64.to(DType::BF16, &s.get());
  EXPECT_EQ(on(g16, cpu(), s.get()).to_vector(), x.to(DType::BF16).to_vector());
  // Integer tensors travel too (argmax, token ids).
  const Tensor ids = Tensor::from_vector({3, -1, 1 << 30}, {3}, DType::I64);
  EXPECT_EQ(on(on(ids, cuda(0), s.get()), cpu(), s.get()).to_vector(), ids.to_vector());
}

TEST(GpuMemory, UnsupportedDevicesAreClearErrors) {
  REWY_REQUIRE_CUDA();
  const int n = cuda_device_count();
  EXPECT_NE(error_of([&] { Tensor::empty({2}, DType::F32, cuda(n)); }).find("present"), std::string::npos);
}

}  // namespace
