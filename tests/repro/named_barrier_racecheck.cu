// Does compute-sanitizer's racecheck accept wy_prep's overlapped barrier pattern? Not part of the
// build: a standalone check for the question left open on 2026-12-01 (docs/notes-history.md,
// the seventeenth and eighteenth sessions).
//
//   nvcc -gencode=arch=compute_90a,code=sm_90a -lineinfo -o /tmp/nbr tests/repro/named_barrier_racecheck.cu
//   compute-sanitizer --tool racecheck --error-exitcode 1 /tmp/nbr        # PATTERN 0, 1, 2 as argv[1]
//
// The pattern (wy_prep_kernel with OVERLAP): warps 0-2 exchange data through shared memory behind
// named barrier 1 of 96 threads, then write more of it; the other warps do their own work; then
// the block barrier (barrier 0, every thread) and every thread reads what warps 0-2 wrote after
// their named barrier. By PTX's bar.sync rules the block barrier orders those writes before the
// reads (each solver thread arrives at barrier 0 after its writes), so a hazard reported here is
// the tool's, not the kernel's. Pattern 1 lets the other warps bar.arrive at barrier 1 (counted
// 256); pattern 2 has no named barrier (the two steps separated by block barriers): the control.
#include <cstdio>
#include <cstdlib>

__global__ void kernel(int pattern, float* out) {
  __shared__ float first[96], second[96];
  const int tid = threadIdx.x;
  if (pattern == 2) {
    if (tid < 96) first[tid] = tid;
    __syncthreads();
    if (tid < 96) second[tid] = first[(tid + 1) % 96] + 1.f;
  } else if (tid < 96) {
    first[tid] = tid;
    if (pattern == 0) asm volatile("bar.sync 1, 96;\n" ::: "memory");
    else asm volatile("bar.sync 1, 256;\n" ::: "memory");
    second[tid] = first[(tid + 1) % 96] + 1.f;  // after the named barrier: first is complete
  } else {
    if (pattern == 1) asm volatile("bar.arrive 1, 256;\n" ::: "memory");
    out[blockIdx.x * 256 + tid] = -1.f;  // the other warps' own work
  }
  __syncthreads();
  out[blockIdx.x * 256 + tid] = second[(tid * 7) % 96];  // a row of its own a block
}

int main(int argc, char** argv) {
  const int pattern = argc > 1 ? std::atoi(argv[1]) : 0;
  constexpr int kBlocks = 4;
  float* out = nullptr;
  if (cudaMalloc(&out, kBlocks * 256 * sizeof(float)) != cudaSuccess) return 2;
  kernel<<<kBlocks, 256>>>(pattern, out);
  float host[kBlocks * 256];
  if (cudaMemcpy(host, out, sizeof host, cudaMemcpyDeviceToHost) != cudaSuccess) return 2;
  int bad = 0;
  for (int i = 0; i < kBlocks * 256; ++i) bad += host[i] != float(((i % 256 * 7) % 96 + 1) % 96 + 1);
  std::printf("pattern %d: %s\n", pattern, bad ? "wrong values" : "values right");
  cudaFree(out);
  return bad ? 1 : 0;
}
