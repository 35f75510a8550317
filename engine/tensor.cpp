#include "engine/tensor.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "engine/copy.h"

namespace rewy {

std::string shape_str(const Shape& s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + "]";
}

int64_t shape_numel(const Shape& s) {
  int64_t n = 1;
  for (auto d : s) n *= d;
  return n;
}

Shape contiguous_strides(const Shape& s) {
  Shape st(s.size());
  int64_t acc = 1;
  for (int i = int(s.size()) - 1; i >= 0; --i) {
    st[i] = acc;
    acc *= std::max<int64_t>(s[i], 1);
  }
  return st;
}

Storage::Storage(size_t nbytes, Device d, const Stream& s) : bytes(nbytes), device(d), stream(s) {
  ptr = nbytes ? allocator_for(d).allocate(nbytes, s) : nullptr;
}

Storage::~Storage() {
  if (ptr) allocator_for(device).deallocate(ptr, bytes, stream);
}

Stream stream_or_default(const Tensor& t, const Stream* s) {
  return s ? *s : Stream::default_for(t.device());
}

Tensor Tensor::empty(const Shape& shape, DType dt, Device d, const Stream* s) {
  for (auto x : shape) REWY_CHECK(x >= 0, "negative size in shape {}", shape_str(shape));
  Tensor t;
  Stream st = s ? *s : Stream::default_for(d);
  REWY_CHECK(st.device == d, "stream of {} used for a tensor on {}", st.device.str(), d.str());
  t.storage_ = std::make_shared<Storage>(size_t(shape_numel(shape)) * dtype_size(dt), d, st);
  t.shape_ = shape;
  t.strides_ = contiguous_strides(shape);
  t.dtype_ = dt;
  return t;
}

Tensor Tensor::zeros(const Shape& shape, DType dt, Device d, const Stream* s) {
  Tensor t = empty(shape, dt, d, s);
  fill(t, 0.0, s);
  return t;
}

Tensor Tensor::full(const Shape& shape, double value, DType dt, Device d, const Stream* s) {
  Tensor t = empty(shape, dt, d, s);
  fill(t, value, s);
  return t;
}

Tensor Tensor::from_vector(const std::vector<double>& v, const Shape& shape, DType dt) {
  REWY_CHECK(int64_t(v.size()) == shape_numel(shape), "from_vector: {} values for shape {}", v.size(),
             shape_str(shape));
  Tensor t = empty(shape, dt);
  host_from_f64(t, v.data());
  return t;
}

int64_t Tensor::size(int d) const {
  int n = dim();
  if (d < 0) d += n;
  REWY_CHECK(d >= 0 && d < n, "dim {} out of range for {}", d, shape_str(shape_));
  return shape_[d];
}

int64_t Tensor::stride(int d) const {
  int n = dim();
  if (d < 0) d += n;
  REWY_CHECK(d >= 0 && d < n, "dim {} out of range for {}", d, shape_str(shape_));
  return strides_[d];
}

const Stream& Tensor::stream() const {
  REWY_CHECK(storage_, "undefined tensor has no stream");
  return storage_->stream;
}

bool Tensor::is_contiguous() const {
  if (numel() == 0) return true;  // no element to misplace
  int64_t acc = 1;
  for (int i = dim() - 1; i >= 0; --i) {
    if (shape_[i] == 1) continue;
    if (strides_[i] != acc) return false;
    acc *= shape_[i];
  }
  return true;
}

void* Tensor::data_ptr() const {
  REWY_CHECK(storage_, "access to an undefined tensor");
  return static_cast<char*>(storage_->ptr) + offset_ * int64_t(dtype_size(dtype_));
}

Tensor Tensor::view(const Shape& shape) const {
  REWY_CHECK(is_contiguous(), "view {} of a non-contiguous tensor {}", shape_str(shape), str());
  Shape s = shape;
  int infer = -1;
  int64_t known = 1;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == -1) {
      REWY_CHECK(infer < 0, "view {}: more than one -1", shape_str(shape));
      infer = int(i);
    } else {
      known *= s[i];
    }
  }
  if (infer >= 0) {
    REWY_CHECK(known > 0 && numel() % known == 0, "view {} of {}: sizes do not divide", shape_str(shape), str());
    s[infer] = numel() / known;
  }
  REWY_CHECK(shape_numel(s) == numel(), "view {} of {}: element counts differ", shape_str(s), str());
  Tensor t = *this;
  t.shape_ = s;
  t.strides_ = contiguous_strides(s);
  return t;
}

Tensor Tensor::transpose(int d0, int d1) const {
  int n = dim();
  if (d0 < 0) d0 += n;
  if (d1 < 0) d1 += n;
  REWY_CHECK(d0 >= 0 && d0 < n && d1 >= 0 && d1 < n, "transpose({}, {}) of {}", d0, d1, str());
  Tensor t = *this;
  std::swap(t.shape_[d0], t.shape_[d1]);
  std::swap(t.strides_[d0], t.strides_[d1]);
  return t;
}

Tensor Tensor::permute(const std::vector<int>& dims) const {
  REWY_CHECK(int(dims.size()) == dim(), "permute: {} dims for {}", dims.size(), str());
  std::vector<bool> seen(dims.size());
  Tensor t = *this;
  for (size_t i = 0; i < dims.size(); ++i) {
    int d = dims[i];
    REWY_CHECK(d >= 0 && d < dim() && !seen[d], "permute: bad dims for {}", str());
    seen[d] = true;
    t.shape_[i] = shape_[d];
    t.strides_[i] = strides_[d];
  }
  return t;
}

Tensor Tensor::slice(int d, int64_t start, int64_t end) const {
  int n = dim();
  if (d < 0) d += n;
  REWY_CHECK(d >= 0 && d < n, "slice dim {} of {}", d, str());
  REWY_CHECK(0 <= start && start <= end && end <= shape_[d], "slice [{}, {}) of dim {} of {}", start, end, d, str());
  Tensor t = *this;
  t.offset_ += start * strides_[d];
  t.shape_[d] = end - start;
  return t;
}

Tensor Tensor::select(int d, int64_t i) const {
  int n = dim();
  if (d < 0) d += n;
  Tensor t = slice(d, i, i + 1);
  t.shape_.erase(t.shape_.begin() + d);
  t.strides_.erase(t.strides_.begin() + d);
  return t;
}

Tensor Tensor::contiguous(const Stream* s) const {
  if (is_contiguous()) return *this;
  return clone(s);
}

Tensor Tensor::clone(const Stream* s) const {
  Stream st = stream_or_default(*this, s);
  Tensor t = empty(shape_, dtype_, device(), &st);
  t.copy_from(*this, &st);
  return t;
}

Tensor Tensor::to(Device d, const Stream* s) const {
  if (d == device() && is_contiguous()) return *this;
  // The stream belongs to the GPU side of the copy.
  Stream st = s ? *s : Stream::default_for(d.is_cuda() ? d : device());
  Stream dst_stream = d == st.device ? st : Stream::default_for(d);
  Tensor t = empty(shape_, dtype_, d, &dst_stream);
  t.copy_from(*this, &st);
  return t;
}

Tensor Tensor::to(DType dt, const Stream* s) const {
  if (dt == dtype_ && is_contiguous()) return *this;
  Stream st = stream_or_default(*this, s);
  Tensor t = empty(shape_, dt, device(), &st);
  t.copy_from(*this, &st);
  return t;
}

void Tensor::copy_from(const Tensor& src, const Stream* s) {
  REWY_CHECK(src.shape_ == shape_, "copy_from: shape {} into {}", shape_str(src.shape_), shape_str(shape_));
  copy_cast(*this, src, s);
}

std::vector<double> Tensor::to_vector() const {
  Tensor c = device().is_cpu() ? *this : to(cpu());
  std::vector<double> v(static_cast<size_t>(numel()));
  host_to_f64(c, v.data());
  return v;
}

double Tensor::item() const {
  REWY_CHECK(numel() == 1, "item() of {}", str());
  return to_vector()[0];
}

std::string Tensor::str() const {
  if (!defined()) return "undefined";
  return std::string(dtype_name(dtype_)) + shape_str(shape_) + " " + device().str();
}

void check_shape(const Tensor& t, const Shape& expected, const char* name) {
  REWY_CHECK(t.defined(), "{} is missing (expected shape {})", name, shape_str(expected));
  REWY_CHECK(t.shape() == expected, "{} has shape {}, expected {}", name, shape_str(t.shape()), shape_str(expected));
}

void check_same_device(const Tensor& a, const Tensor& b, const char* what) {
  REWY_CHECK(a.device() == b.device(), "{}: tensors on {} and {}", what, a.device().str(), b.device().str());
}

}  // namespace rewy
