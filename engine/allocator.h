// Memory. CPU: 64-byte aligned host memory. CUDA: one caching, stream-ordered allocator per
// device: freed blocks go back to a pool keyed by (size class, stream) and are handed out again
// on the same stream without synchronisation (stream order makes that safe); cudaMalloc is
// called only when the pool has no fitting block.
#pragma once
#include <cstddef>
#include <cstdint>

#include "engine/device.h"

namespace rewy {

struct AllocatorStats {
  size_t bytes_in_use = 0;     // handed out and not yet freed
  size_t bytes_cached = 0;     // held in the pool, free for reuse
  uint64_t allocations = 0;    // allocate() calls
  uint64_t system_allocs = 0;  // calls to the system allocator (cudaMalloc / aligned_alloc)
  uint64_t reuses = 0;         // allocate() calls served from the pool
};

class Allocator {
 public:
  virtual ~Allocator() = default;
  virtual void* allocate(size_t bytes, const Stream& s) = 0;
  virtual void deallocate(void* p, size_t bytes, const Stream& s) = 0;
  virtual AllocatorStats stats() const = 0;
  virtual void empty_cache() {}  // return pooled blocks to the system
};

// The allocator of a device; each GPU gets its own, created on first use (thread-safe).
Allocator& allocator_for(Device d);

// Debugging aid for tests: while on, every CUDA allocation is filled with 0xFF bytes (NaN in
// bf16/f32/f64) before it is handed out, so a kernel that leaves part of an output unwritten is
// caught. Process-wide; off by default.
void set_allocation_poisoning(bool on);
bool allocation_poisoning();

// Size classes: requests round up to 512 B below 1 MiB, to 2 MiB above, so that blocks of
// similar size are interchangeable.
size_t allocation_size_class(size_t bytes);

}  // namespace rewy
