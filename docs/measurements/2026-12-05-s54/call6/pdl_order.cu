// Does a kernel launched normally after a programmatic dependent that never waits (griddepcontrol.wait)
// wait for the dependent's primary too? A (primary) triggers its dependents at once, spins about 2 ms,
// then writes a flag; B (programmatic dependent of A) never waits; C reads the flag. C launched
// normally must see 1 on every trial for the decay-cut plan to go beside wy_prep that way; C launched
// as a programmatic dependent of B (the control) should see 0, showing that the probe can see a race.
#include <cstdio>
#include <cuda_runtime.h>
#define CHECK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); return 1; } } while (0)

__global__ void primary(volatile int* flag) {
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
  unsigned long long t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do { asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)); } while (t - t0 < 2000000ull);
  *flag = 1;
}
__global__ void dependent(int* ran) { *ran = 1; }
__global__ void reader(const volatile int* flag, int* seen) { *seen = *flag; }

static cudaError_t launch_pdl(void (*k)(int*), int* arg, cudaStream_t s) {
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(1); cfg.blockDim = dim3(32); cfg.stream = s; cfg.attrs = attr; cfg.numAttrs = 1;
  return cudaLaunchKernelEx(&cfg, k, arg);
}
static cudaError_t launch_pdl_reader(const volatile int* flag, int* seen, cudaStream_t s) {
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = dim3(1); cfg.blockDim = dim3(32); cfg.stream = s; cfg.attrs = attr; cfg.numAttrs = 1;
  return cudaLaunchKernelEx(&cfg, reader, flag, seen);
}

int main() {
  int *d = nullptr;
  CHECK(cudaMalloc(&d, 3 * sizeof(int)));
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  for (int control = 0; control < 2; ++control) {
    int seen_one = 0, trials = 20;
    for (int i = 0; i < trials; ++i) {
      CHECK(cudaMemsetAsync(d, 0, 3 * sizeof(int), s));
      primary<<<1, 32, 0, s>>>(d);
      CHECK(launch_pdl(dependent, d + 1, s));
      if (control) CHECK(launch_pdl_reader(d, d + 2, s));
      else reader<<<1, 32, 0, s>>>(d, d + 2);
      CHECK(cudaGetLastError());
      int h[3];
      CHECK(cudaMemcpyAsync(h, d, sizeof(h), cudaMemcpyDeviceToHost, s));
      CHECK(cudaStreamSynchronize(s));
      seen_one += h[2];
    }
    printf("%s: the reader saw the primary's flag in %d of %d trials\n",
           control ? "control (reader a programmatic dependent of the dependent)" : "reader launched normally",
           seen_one, trials);
  }
  return 0;
}
