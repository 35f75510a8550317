// HDF5 tensor files: every dataset is a tensor (f32, f64, bf16, i32, i64), attributes are scalars
// or strings. Files written here read back with h5py/numpy (bf16 is a 2-byte HDF5 float type with
// bf16's bit layout; HDF5 converts it to f32 for readers that ask for f32).
// hdf5.h stays out of this header: handles are hid_t, which is int64_t since HDF5 1.10.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <type_traits>
#include <vector>

#include "engine/tensor.h"

namespace rewy::io {

using h5id = int64_t;  // hid_t

// The text of HDF5's error stack (most specific message first); clears the stack.
std::string h5_error_text();
[[noreturn]] void h5_fail(const char* call, const char* file, int line);
template <typename T> T h5_check(T r, const char* call, const char* file, int line) {
  if (r < 0) h5_fail(call, file, line);
  return r;
}

class H5File {
 public:
  static H5File open(const std::string& path);    // read-only; clear errors for missing/corrupt files
  static H5File create(const std::string& path);  // truncates an existing file
  H5File(H5File&& o) noexcept;
  H5File& operator=(H5File&& o) noexcept;
  H5File(const H5File&) = delete;
  H5File& operator=(const H5File&) = delete;
  ~H5File();     // closes quietly; call close() to see errors (a failed flush loses data)
  void close();  // idempotent
  const std::string& path() const { return path_; }

  // Datasets, named by path inside the file ("q", "model/layer0/wq").
  bool has(const std::string& name) const;
  std::vector<std::string> datasets() const;  // every dataset, sorted, without a leading '/'
  Shape shape(const std::string& name) const;
  DType dtype(const std::string& name) const;  // what read() returns
  // CPU, contiguous. Floats of 2 bytes other than bf16 and of 3-4 bytes read as f32, wider as f64;
  // integers of up to 4 bytes as i32 (u32 as i64), 8 bytes as i64.
  Tensor read(const std::string& name) const;
  Tensor read(const std::string& name, DType as) const;  // converted with Tensor::to
  // Any device, any strides; intermediate groups are created, an existing dataset is replaced.
  void write(const std::string& name, const Tensor& t);

  // Attributes of the object at `obj` ("/" is the file itself). set_* replaces.
  void set_attr(const std::string& key, const std::string& value, const std::string& obj = "/");
  void set_attr(const std::string& key, const char* value, const std::string& obj = "/") {
    set_attr(key, std::string(value), obj);
  }
  void set_attr(const std::string& key, double value, const std::string& obj = "/");
  template <typename I, std::enable_if_t<std::is_integral_v<I> && !std::is_same_v<I, bool>, int> = 0>
  void set_attr(const std::string& key, I value, const std::string& obj = "/") {
    set_int_attr(key, int64_t(value), obj);
  }
  bool has_attr(const std::string& key, const std::string& obj = "/") const;
  std::string attr_string(const std::string& key, const std::string& obj = "/") const;
  double attr_double(const std::string& key, const std::string& obj = "/") const;  // float or integer
  int64_t attr_int(const std::string& key, const std::string& obj = "/") const;    // integer only

 private:
  H5File(h5id id, std::string path) : id_(id), path_(std::move(path)) {}
  void set_int_attr(const std::string& key, int64_t value, const std::string& obj);
  h5id open_dataset(const std::string& name) const;  // caller closes
  h5id id_ = -1;
  std::string path_;
};

// atomic_write() for HDF5: `fill` writes into a fresh file that replaces `path` only when complete.
void write_h5_atomic(const std::string& path, const std::function<void(H5File&)>& fill);

}  // namespace rewy::io

// H5_CHECK(H5Dread(...)): a negative return (hid_t, herr_t, htri_t) throws rewy::Error naming the
// call, HDF5's own message and file:line; otherwise returns the value.
#define H5_CHECK(call) ::rewy::io::h5_check((call), #call, __FILE__, __LINE__)
