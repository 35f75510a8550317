// Devices and streams. No process-wide "current GPU": every tensor names its device, every
// CUDA op runs on an explicit stream of that device (one process per GPU under NCCL).
#pragma once
#include <cstdint>
#include <string>

namespace rewy {

enum class DeviceType : uint8_t { CPU, CUDA };

struct Device {
  DeviceType type = DeviceType::CPU;
  int index = 0;  // GPU ordinal; 0 for the CPU
  bool is_cpu() const { return type == DeviceType::CPU; }
  bool is_cuda() const { return type == DeviceType::CUDA; }
  bool operator==(const Device& o) const { return type == o.type && index == o.index; }
  bool operator!=(const Device& o) const { return !(*this == o); }
  std::string str() const { return is_cpu() ? "cpu" : "cuda:" + std::to_string(index); }
};

inline Device cpu() { return {}; }
inline Device cuda(int index = 0) { return {DeviceType::CUDA, index}; }
Device parse_device(const std::string& s);  // "cpu", "cuda", "cuda:1"

// A stream handle: for CUDA an opaque cudaStream_t, null = the device's legacy default stream.
// CPU work is synchronous and ignores the stream.
struct Stream {
  Device device{};
  void* handle = nullptr;  // cudaStream_t
  static Stream default_for(Device d) { return Stream{d, nullptr}; }
};

// A stream this object creates and destroys (non-blocking w.r.t. the legacy stream).
class OwnedStream {
 public:
  explicit OwnedStream(Device d);
  ~OwnedStream();
  OwnedStream(const OwnedStream&) = delete;
  OwnedStream& operator=(const OwnedStream&) = delete;
  const Stream& get() const { return stream_; }
  operator const Stream&() const { return stream_; }
 private:
  Stream stream_;
};

bool cuda_built();        // compiled with REWY_CUDA
int cuda_device_count();  // 0 when built without CUDA or without a usable driver/GPU
bool cuda_available();    // cuda_device_count() > 0
void synchronize(const Stream& s);

// Selects `d` for the calling thread while alive (cudaSetDevice), restoring the previous one.
class DeviceGuard {
 public:
  explicit DeviceGuard(Device d);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;
 private:
  int prev_ = -1;
};

// rewy's kernels are built for Hopper (sm_90a) only. Throws "unsupported GPU ..." naming the
// device and its compute capability otherwise; checked once per device.
void require_supported_gpu(Device d);
std::string device_description(Device d);
// The SMs kernels on a CUDA device may use (a MIG instance's, not the whole GPU's), read once per
// device.
int cuda_sm_count(Device d);

}  // namespace rewy
