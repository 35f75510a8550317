#include "engine/io/h5.h"

#include <hdf5.h>

#include <algorithm>
#include <filesystem>
#include <mutex>

#include "engine/io/atomic_file.h"

namespace rewy::io {

static_assert(std::is_same_v<hid_t, h5id>, "rewy needs HDF5 >= 1.10 (64-bit hid_t)");

namespace {

// HDF5 prints its error stack to stderr by default; rewy reports it in its exceptions instead.
void init_hdf5() {
  static std::once_flag once;
  std::call_once(once, [] { H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr); });
}

// Owns one HDF5 id of any kind (dataset, dataspace, datatype, attribute, group, property list).
class Handle {
 public:
  explicit Handle(hid_t id) : id_(id) {}
  ~Handle() {
    if (id_ >= 0) H5Idec_ref(id_);
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  operator hid_t() const { return id_; }

 private:
  hid_t id_;
};

// bf16 as an HDF5 float: sign bit 15, 8 exponent bits at 7, 7 mantissa bits, bias 127.
hid_t bf16_type() {
  static hid_t t = [] {
    hid_t id = H5_CHECK(H5Tcopy(H5T_IEEE_F32LE));
    H5_CHECK(H5Tset_fields(id, 15, 7, 8, 0, 7));
    H5_CHECK(H5Tset_precision(id, 16));
    H5_CHECK(H5Tset_size(id, 2));
    H5_CHECK(H5Tset_ebias(id, 127));
    return id;
  }();
  return t;
}

bool is_bf16_type(hid_t t) {
  if (H5Tget_class(t) != H5T_FLOAT || H5Tget_size(t) != 2) return false;
  size_t spos, epos, esize, mpos, msize;
  H5_CHECK(H5Tget_fields(t, &spos, &epos, &esize, &mpos, &msize));
  return spos == 15 && epos == 7 && esize == 8 && mpos == 0 && msize == 7 && H5Tget_ebias(t) == 127;
}

hid_t memory_type(DType dt) {
  switch (dt) {
    case DType::F32: return H5T_NATIVE_FLOAT;
    case DType::F64: return H5T_NATIVE_DOUBLE;
    case DType::BF16: return bf16_type();
    case DType::I32: return H5T_NATIVE_INT32;
    case DType::I64: return H5T_NATIVE_INT64;
  }
  REWY_FAIL("bad dtype");
}

hid_t file_type(DType dt) {
  switch (dt) {
    case DType::F32: return H5T_IEEE_F32LE;
    case DType::F64: return H5T_IEEE_F64LE;
    case DType::BF16: return bf16_type();
    case DType::I32: return H5T_STD_I32LE;
    case DType::I64: return H5T_STD_I64LE;
  }
  REWY_FAIL("bad dtype");
}

// The dtype a stored HDF5 type reads into (see H5File::read).
DType dtype_for(hid_t t, const std::string& what) {
  const size_t size = H5Tget_size(t);
  switch (H5Tget_class(t)) {
    case H5T_FLOAT:
      if (is_bf16_type(t)) return DType::BF16;
      return size <= 4 ? DType::F32 : DType::F64;
    case H5T_INTEGER: {
      const bool is_signed = H5Tget_sign(t) == H5T_SGN_2;
      return size < 4 || (size == 4 && is_signed) ? DType::I32 : DType::I64;
    }
    default: REWY_FAIL("{} is not a numeric array (HDF5 type class {})", what, int(H5Tget_class(t)));
  }
}

Shape extent(hid_t space) {
  const int nd = H5_CHECK(H5Sget_simple_extent_ndims(space));
  std::vector<hsize_t> dims(static_cast<size_t>(nd));
  H5_CHECK(H5Sget_simple_extent_dims(space, dims.data(), nullptr));
  return Shape(dims.begin(), dims.end());
}

// A fresh dataspace for `shape` ([] is a scalar).
hid_t make_space(const Shape& shape) {
  if (shape.empty()) return H5_CHECK(H5Screate(H5S_SCALAR));
  std::vector<hsize_t> dims(shape.begin(), shape.end());
  return H5_CHECK(H5Screate_simple(int(dims.size()), dims.data(), nullptr));
}

// H5Lexists checks one link, so walk the path one component at a time.
bool link_exists(hid_t file, const std::string& name) {
  size_t pos = name[0] == '/' ? 1 : 0;
  while (true) {
    const size_t slash = name.find('/', pos);
    const std::string prefix = name.substr(0, slash);
    if (H5_CHECK(H5Lexists(file, prefix.c_str(), H5P_DEFAULT)) <= 0) return false;
    if (slash == std::string::npos) return true;
    pos = slash + 1;
  }
}

herr_t collect_dataset(hid_t group, const char* name, const H5L_info_t* info, void* out) {
  if (info->type != H5L_TYPE_HARD) return 0;
  const hid_t obj = H5Oopen(group, name, H5P_DEFAULT);
  if (obj < 0) return -1;
  if (H5Iget_type(obj) == H5I_DATASET) static_cast<std::vector<std::string>*>(out)->push_back(name);
  return H5Oclose(obj);
}

herr_t collect_message(unsigned, const H5E_error2_t* e, void* out) {
  auto& msgs = *static_cast<std::vector<std::string>*>(out);
  if (e->desc && *e->desc && std::find(msgs.begin(), msgs.end(), e->desc) == msgs.end()) msgs.push_back(e->desc);
  return 0;
}

}  // namespace

std::string h5_error_text() {
  std::vector<std::string> msgs;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, collect_message, &msgs);
  H5Eclear2(H5E_DEFAULT);
  if (msgs.empty()) return "unknown HDF5 error";
  std::string r;
  for (size_t i = 0; i < msgs.size() && i < 3; ++i) r += (i ? "; " : "") + msgs[i];
  return r;
}

void h5_fail(const char* call, const char* file, int line) {
  throw_error(file, line, fmt::format("{} failed: {}", call, h5_error_text()));
}

// ---------------------------------------------------------------------------------------------
// Files

H5File H5File::open(const std::string& path) {
  init_hdf5();
  std::error_code ec;
  REWY_CHECK(std::filesystem::is_regular_file(path, ec), "cannot open HDF5 file '{}': no such file", path);
  REWY_CHECK(H5Fis_hdf5(path.c_str()) > 0, "'{}' is not an HDF5 file ({})", path, h5_error_text());
  const hid_t id = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  REWY_CHECK(id >= 0, "cannot open HDF5 file '{}' (corrupt or truncated?): {}", path, h5_error_text());
  return H5File(id, path);
}

H5File H5File::create(const std::string& path) {
  init_hdf5();
  const hid_t id = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  REWY_CHECK(id >= 0, "cannot create HDF5 file '{}': {}", path, h5_error_text());
  return H5File(id, path);
}

H5File::H5File(H5File&& o) noexcept : id_(o.id_), path_(std::move(o.path_)) { o.id_ = -1; }

H5File& H5File::operator=(H5File&& o) noexcept {
  if (this != &o) {
    if (id_ >= 0) H5Fclose(id_);
    id_ = o.id_;
    path_ = std::move(o.path_);
    o.id_ = -1;
  }
  return *this;
}

H5File::~H5File() {
  if (id_ >= 0) H5Fclose(id_);
}

void H5File::close() {
  if (id_ < 0) return;
  const hid_t id = id_;
  id_ = -1;
  REWY_CHECK(H5Fclose(id) >= 0, "closing HDF5 file '{}' failed: {}", path_, h5_error_text());
}

// ---------------------------------------------------------------------------------------------
// Datasets

hid_t H5File::open_dataset(const std::string& name) const {
  REWY_CHECK(id_ >= 0, "HDF5 file '{}' is closed", path_);
  REWY_CHECK(!name.empty() && link_exists(id_, name), "'{}' has no dataset '{}'", path_, name);
  Handle obj(H5_CHECK(H5Oopen(id_, name.c_str(), H5P_DEFAULT)));
  REWY_CHECK(H5Iget_type(obj) == H5I_DATASET, "'{}' in '{}' is not a dataset", name, path_);
  return H5_CHECK(H5Dopen2(id_, name.c_str(), H5P_DEFAULT));
}

bool H5File::has(const std::string& name) const {
  REWY_CHECK(id_ >= 0, "HDF5 file '{}' is closed", path_);
  if (name.empty() || !link_exists(id_, name)) return false;
  Handle obj(H5_CHECK(H5Oopen(id_, name.c_str(), H5P_DEFAULT)));
  return H5Iget_type(obj) == H5I_DATASET;
}

std::vector<std::string> H5File::datasets() const {
  REWY_CHECK(id_ >= 0, "HDF5 file '{}' is closed", path_);
  std::vector<std::string> names;
  H5_CHECK(H5Lvisit(id_, H5_INDEX_NAME, H5_ITER_INC, collect_dataset, &names));
  std::sort(names.begin(), names.end());
  return names;
}

Shape H5File::shape(const std::string& name) const {
  Handle ds(open_dataset(name));
  Handle space(H5_CHECK(H5Dget_space(ds)));
  return extent(space);
}

DType H5File::dtype(const std::string& name) const {
  Handle ds(open_dataset(name));
  Handle type(H5_CHECK(H5Dget_type(ds)));
  return dtype_for(type, fmt::format("dataset '{}' in '{}'", name, path_));
}

Tensor H5File::read(const std::string& name) const {
  Handle ds(open_dataset(name));
  Handle space(H5_CHECK(H5Dget_space(ds)));
  Handle type(H5_CHECK(H5Dget_type(ds)));
  Tensor t = Tensor::empty(extent(space), dtype_for(type, fmt::format("dataset '{}' in '{}'", name, path_)));
  if (t.numel() > 0) {
    REWY_CHECK(H5Dread(ds, memory_type(t.dtype()), H5S_ALL, H5S_ALL, H5P_DEFAULT, t.data_ptr()) >= 0,
               "reading dataset '{}' from '{}' failed: {}", name, path_, h5_error_text());
  }
  return t;
}

Tensor H5File::read(const std::string& name, DType as) const { return read(name).to(as); }

void H5File::write(const std::string& name, const Tensor& t) {
  REWY_CHECK(id_ >= 0, "HDF5 file '{}' is closed", path_);
  REWY_CHECK(!name.empty(), "empty dataset name");
  REWY_CHECK(t.defined(), "writing dataset '{}' to '{}': undefined tensor", name, path_);
  const Tensor c = t.to(cpu());  // contiguous
  if (link_exists(id_, name)) H5_CHECK(H5Ldelete(id_, name.c_str(), H5P_DEFAULT));
  Handle lcpl(H5_CHECK(H5Pcreate(H5P_LINK_CREATE)));
  H5_CHECK(H5Pset_create_intermediate_group(lcpl, 1));
  Handle space(make_space(c.shape()));
  Handle ds(H5_CHECK(H5Dcreate2(id_, name.c_str(), file_type(c.dtype()), space, lcpl, H5P_DEFAULT, H5P_DEFAULT)));
  if (c.numel() > 0) H5_CHECK(H5Dwrite(ds, memory_type(c.dtype()), H5S_ALL, H5S_ALL, H5P_DEFAULT, c.data_ptr()));
}

// ---------------------------------------------------------------------------------------------
// Attributes

namespace {

hid_t open_object(hid_t file, const std::string& path, const std::string& obj) {
  REWY_CHECK(file >= 0, "HDF5 file '{}' is closed", path);
  REWY_CHECK(obj == "/" || (!obj.empty() && link_exists(file, obj)), "'{}' has no object '{}'", path, obj);
  return H5_CHECK(H5Oopen(file, obj.c_str(), H5P_DEFAULT));
}

// Attributes are read as one value; an array attribute (h5py can write those) is an error.
hid_t open_attr(hid_t file, const std::string& path, const std::string& key, const std::string& obj) {
  Handle o(open_object(file, path, obj));
  REWY_CHECK(H5_CHECK(H5Aexists(o, key.c_str())) > 0, "'{}' has no attribute '{}' on '{}'", path, key, obj);
  const hid_t a = H5_CHECK(H5Aopen(o, key.c_str(), H5P_DEFAULT));
  Handle space(H5_CHECK(H5Aget_space(a)));
  if (H5Sget_simple_extent_npoints(space) != 1) {
    H5Aclose(a);
    REWY_FAIL("attribute '{}' on '{}' in '{}' is not a single value", key, obj, path);
  }
  return a;
}

// Writes a scalar attribute of type `type` from `value`, replacing any attribute of that name.
void write_attr(hid_t file, const std::string& path, const std::string& key, const std::string& obj, hid_t type,
                hid_t mem_type, const void* value) {
  Handle o(open_object(file, path, obj));
  if (H5_CHECK(H5Aexists(o, key.c_str())) > 0) H5_CHECK(H5Adelete(o, key.c_str()));
  Handle space(H5_CHECK(H5Screate(H5S_SCALAR)));
  Handle a(H5_CHECK(H5Acreate2(o, key.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT)));
  H5_CHECK(H5Awrite(a, mem_type, value));
}

}  // namespace

void H5File::set_attr(const std::string& key, const std::string& value, const std::string& obj) {
  // Variable-length UTF-8: h5py reads it back as str.
  Handle type(H5_CHECK(H5Tcopy(H5T_C_S1)));
  H5_CHECK(H5Tset_size(type, H5T_VARIABLE));
  H5_CHECK(H5Tset_cset(type, H5T_CSET_UTF8));
  const char* p = value.c_str();
  write_attr(id_, path_, key, obj, type, type, &p);
}

void H5File::set_attr(const std::string& key, double value, const std::string& obj) {
  write_attr(id_, path_, key, obj, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &value);
}

void H5File::set_int_attr(const std::string& key, int64_t value, const std::string& obj) {
  write_attr(id_, path_, key, obj, H5T_STD_I64LE, H5T_NATIVE_INT64, &value);
}

bool H5File::has_attr(const std::string& key, const std::string& obj) const {
  Handle o(open_object(id_, path_, obj));
  return H5_CHECK(H5Aexists(o, key.c_str())) > 0;
}

std::string H5File::attr_string(const std::string& key, const std::string& obj) const {
  Handle a(open_attr(id_, path_, key, obj));
  Handle type(H5_CHECK(H5Aget_type(a)));
  REWY_CHECK(H5Tget_class(type) == H5T_STRING, "attribute '{}' on '{}' in '{}' is not a string", key, obj, path_);
  if (H5_CHECK(H5Tis_variable_str(type)) > 0) {
    char* p = nullptr;
    H5_CHECK(H5Aread(a, type, &p));  // the stored type: HDF5 does not convert between charsets
    std::string s = p ? p : "";
    H5free_memory(p);
    return s;
  }
  std::string s(H5Tget_size(type), '\0');
  H5_CHECK(H5Aread(a, type, s.data()));
  s.erase(std::find(s.begin(), s.end(), '\0'), s.end());  // null-terminated or null-padded
  return s;
}

double H5File::attr_double(const std::string& key, const std::string& obj) const {
  Handle a(open_attr(id_, path_, key, obj));
  Handle type(H5_CHECK(H5Aget_type(a)));
  const H5T_class_t cls = H5Tget_class(type);
  REWY_CHECK(cls == H5T_FLOAT || cls == H5T_INTEGER, "attribute '{}' on '{}' in '{}' is not a number", key, obj,
             path_);
  double v = 0;
  H5_CHECK(H5Aread(a, H5T_NATIVE_DOUBLE, &v));
  return v;
}

int64_t H5File::attr_int(const std::string& key, const std::string& obj) const {
  Handle a(open_attr(id_, path_, key, obj));
  Handle type(H5_CHECK(H5Aget_type(a)));
  REWY_CHECK(H5Tget_class(type) == H5T_INTEGER, "attribute '{}' on '{}' in '{}' is not an integer", key, obj,
             path_);
  int64_t v = 0;
  H5_CHECK(H5Aread(a, H5T_NATIVE_INT64, &v));
  return v;
}

void write_h5_atomic(const std::string& path, const std::function<void(H5File&)>& fill) {
  atomic_write(path, [&](const std::string& tmp) {
    H5File f = H5File::create(tmp);
    fill(f);
    f.close();
  });
}

}  // namespace rewy::io
