#include <map>
#include <mutex>
#include <vector>

#include "engine/cuda/check_cuda.h"
#include "engine/device.h"

namespace rewy {

bool cuda_built() { return true; }

int cuda_device_count() {
  static int count = [] {
    int n = 0;
    // No driver or no GPU (the CI machine) is not an error: it means zero devices.
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
      cudaGetLastError();
      return 0;
    }
    return n;
  }();
  return count;
}

void synchronize(const Stream& s) {
  if (s.device.is_cpu()) return;
  DeviceGuard g(s.device);
  CUDA_CHECK(cudaStreamSynchronize(static_cast<cudaStream_t>(s.handle)));
}

OwnedStream::OwnedStream(Device d) : stream_{d, nullptr} {
  if (d.is_cpu()) return;
  DeviceGuard g(d);
  cudaStream_t h;
  CUDA_CHECK(cudaStreamCreateWithFlags(&h, cudaStreamNonBlocking));
  stream_.handle = h;
}

OwnedStream::~OwnedStream() {
  if (stream_.handle) {
    DeviceGuard g(stream_.device);
    cudaStreamSynchronize(static_cast<cudaStream_t>(stream_.handle));
    cudaStreamDestroy(static_cast<cudaStream_t>(stream_.handle));
  }
}

DeviceGuard::DeviceGuard(Device d) {
  if (d.is_cpu()) return;
  REWY_CHECK(d.index >= 0 && d.index < cuda_device_count(), "device {} not present ({} CUDA devices)", d.str(),
             cuda_device_count());
  CUDA_CHECK(cudaGetDevice(&prev_));
  if (prev_ == d.index) prev_ = -1;
  else CUDA_CHECK(cudaSetDevice(d.index));
}

DeviceGuard::~DeviceGuard() {
  if (prev_ >= 0) cudaSetDevice(prev_);
}

std::string device_description(Device d) {
  if (d.is_cpu()) return "cpu";
  cudaDeviceProp p{};
  CUDA_CHECK(cudaGetDeviceProperties(&p, d.index));
  return fmt::format("{} ({}, sm_{}{}, {} SMs, {:.1f} GiB)", d.str(), p.name, p.major, p.minor,
                     p.multiProcessorCount, double(p.totalGlobalMem) / (1 << 30));
}

int cuda_sm_count(Device d) {
  REWY_CHECK(d.is_cuda(), "cuda_sm_count on {}", d.str());
  static std::mutex mu;
  static std::map<int, int> sms;
  std::lock_guard<std::mutex> g(mu);
  auto [at, fresh] = sms.emplace(d.index, 0);
  if (fresh) CUDA_CHECK(cudaDeviceGetAttribute(&at->second, cudaDevAttrMultiProcessorCount, d.index));
  return at->second;
}

void require_supported_gpu(Device d) {
  REWY_CHECK(d.is_cuda(), "require_supported_gpu on {}", d.str());
  static std::mutex mu;
  static std::vector<int> ok;
  std::lock_guard<std::mutex> g(mu);
  for (int i : ok)
    if (i == d.index) return;
  REWY_CHECK(d.index >= 0 && d.index < cuda_device_count(), "device {} not present ({} CUDA devices)", d.str(),
             cuda_device_count());
  cudaDeviceProp p{};
  CUDA_CHECK(cudaGetDeviceProperties(&p, d.index));
  REWY_CHECK(p.major == 9 && p.minor == 0,
             "unsupported GPU: {} is {} (compute capability {}.{}); rewy's kernels are built for Hopper "
             "(sm_90a: H100/H200) only",
             d.str(), p.name, p.major, p.minor);
  ok.push_back(d.index);
}

}  // namespace rewy
