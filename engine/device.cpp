#include "engine/device.h"

#include "engine/check.h"

namespace rewy {

Device parse_device(const std::string& s) {
  if (s == "cpu") return cpu();
  if (s == "cuda") return cuda(0);
  if (s.rfind("cuda:", 0) == 0) {
    const std::string n = s.substr(5);
    REWY_CHECK(!n.empty() && n.find_first_not_of("0123456789") == std::string::npos,
               "bad device '{}': expected cpu, cuda or cuda:N", s);
    return cuda(std::stoi(n));
  }
  REWY_FAIL("bad device '{}': expected cpu, cuda or cuda:N", s);
}

bool cuda_available() { return cuda_device_count() > 0; }

#if !REWY_WITH_CUDA
bool cuda_built() { return false; }
int cuda_device_count() { return 0; }
void synchronize(const Stream& s) {
  REWY_CHECK(s.device.is_cpu(), "synchronize on {}: rewy was built without CUDA", s.device.str());
}
OwnedStream::OwnedStream(Device d) : stream_{d, nullptr} {
  REWY_CHECK(d.is_cpu(), "stream on {}: rewy was built without CUDA", d.str());
}
OwnedStream::~OwnedStream() = default;
DeviceGuard::DeviceGuard(Device d) {
  REWY_CHECK(d.is_cpu(), "device {}: rewy was built without CUDA", d.str());
}
DeviceGuard::~DeviceGuard() = default;
void require_supported_gpu(Device d) {
  REWY_FAIL("device {}: rewy was built without CUDA (-DREWY_CUDA=OFF)", d.str());
}
std::string device_description(Device d) { return d.is_cpu() ? "cpu" : d.str() + " (not built)"; }
int cuda_sm_count(Device d) { REWY_FAIL("device {}: rewy was built without CUDA (-DREWY_CUDA=OFF)", d.str()); }
#endif

}  // namespace rewy
