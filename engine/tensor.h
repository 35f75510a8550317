// Tensor: a strided view of a reference-counted buffer on one device.
//   shape   [d0, d1, ...]      sizes
//   strides [s0, s1, ...]      in elements
// Views (reshape of contiguous, transpose, permute, slice, select) share storage; contiguous()
// and to() copy. No autograd tape: layers call forward/backward functions explicitly.
#pragma once
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "engine/allocator.h"
#include "engine/check.h"
#include "engine/device.h"
#include "engine/dtype.h"

namespace rewy {

using Shape = std::vector<int64_t>;
std::string shape_str(const Shape& s);  // "[2, 3, 4]"
int64_t shape_numel(const Shape& s);
Shape contiguous_strides(const Shape& s);

struct Storage {
  void* ptr = nullptr;
  size_t bytes = 0;
  Device device{};
  Stream stream{};  // the stream the buffer is ordered on (returned to the pool on it)
  Storage(size_t bytes, Device d, const Stream& s);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;
};

class Tensor {
 public:
  Tensor() = default;  // undefined: defined() is false

  // Uninitialised memory. On CUDA it is ordered on `s` (default: the device's default stream).
  static Tensor empty(const Shape& shape, DType dt, Device d = cpu(), const Stream* s = nullptr);
  static Tensor zeros(const Shape& shape, DType dt, Device d = cpu(), const Stream* s = nullptr);
  static Tensor full(const Shape& shape, double value, DType dt, Device d = cpu(), const Stream* s = nullptr);
  // CPU tensor from host values (converted to dt).
  static Tensor from_vector(const std::vector<double>& v, const Shape& shape, DType dt = DType::F64);

  bool defined() const { return storage_ != nullptr; }
  const Shape& shape() const { return shape_; }
  const Shape& strides() const { return strides_; }
  int dim() const { return int(shape_.size()); }
  int64_t size(int d) const;  // negative d counts from the end
  int64_t stride(int d) const;
  int64_t numel() const { return shape_numel(shape_); }
  DType dtype() const { return dtype_; }
  Device device() const { return storage_ ? storage_->device : Device{}; }
  const Stream& stream() const;  // the storage's stream
  bool is_contiguous() const;
  int64_t offset() const { return offset_; }
  size_t nbytes() const { return size_t(numel()) * dtype_size(dtype_); }

  void* data_ptr() const;  // first element of the view
  template <typename T> T* data() const {
    REWY_CHECK(dtype_of<T>::value == dtype_, "tensor holds {}, accessed as {}", dtype_name(dtype_),
               dtype_name(dtype_of<T>::value));
    return static_cast<T*>(data_ptr());
  }

  // Views (no copy).
  Tensor view(const Shape& shape) const;  // contiguous only; one dim may be -1
  Tensor transpose(int d0, int d1) const;
  Tensor permute(const std::vector<int>& dims) const;
  Tensor slice(int d, int64_t start, int64_t end) const;  // [start, end)
  Tensor select(int d, int64_t i) const;                  // drops dim d

  // Copies.
  Tensor contiguous(const Stream* s = nullptr) const;
  Tensor to(Device d, const Stream* s = nullptr) const;  // same dtype, contiguous result
  Tensor to(DType dt, const Stream* s = nullptr) const;  // same device, contiguous result
  Tensor clone(const Stream* s = nullptr) const;
  void copy_from(const Tensor& src, const Stream* s = nullptr);  // same shape; casts dtype; any devices

  // Host access for tests and small data (copies to CPU and converts).
  std::vector<double> to_vector() const;
  double item() const;  // single element

  std::string str() const;  // "f32[2, 3] cuda:0"

 private:
  std::shared_ptr<Storage> storage_;
  int64_t offset_ = 0;  // elements
  Shape shape_, strides_;
  DType dtype_ = DType::F32;
};

// The stream to run on: *s if given, else the default stream of t's device.
Stream stream_or_default(const Tensor& t, const Stream* s);

// Calls f(T{}) with T the C++ type of a floating dtype; other dtypes are an error naming `what`.
template <typename F>
decltype(auto) dispatch_float(DType t, const char* what, F&& f) {
  switch (t) {
    case DType::F32: return f(float{});
    case DType::F64: return f(double{});
    case DType::BF16: return f(bf16{});
    default: REWY_FAIL("{}: unsupported dtype {}", what, dtype_name(t));
  }
}

// Shape/dtype/device preconditions with messages that name the tensor.
void check_shape(const Tensor& t, const Shape& expected, const char* name);
void check_same_device(const Tensor& a, const Tensor& b, const char* what);

}  // namespace rewy
