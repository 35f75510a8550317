// HDF5 tensor I/O: exact round trips of every dtype and shape, groups, attributes, foreign types
// written with the raw HDF5 API (what numpy/h5py produce), atomic writes, and the errors.
// Storage is bit-preserving, so every comparison here is exact: any difference is a bug.
#include <gtest/gtest.h>
#include <hdf5.h>

#include <fstream>

#include "engine/io/atomic_file.h"
#include "engine/io/h5.h"
#include "test_io_util.h"

using namespace rewy;
using namespace rewy::io;
namespace fs = std::filesystem;

namespace {

class H5Test : public test::FileTest {
 protected:
  // Random values that dt holds exactly (so a round trip must reproduce them bit for bit).
  Tensor random(const Shape& shape, DType dt) {
    std::normal_distribution<double> normal;
    std::uniform_int_distribution<int64_t> ints(-(int64_t(1) << 40), int64_t(1) << 40);
    std::uniform_int_distribution<int32_t> ints32(INT32_MIN, INT32_MAX);
    std::vector<double> v(size_t(shape_numel(shape)));
    for (auto& x : v) {
      if (dt == DType::I64) x = double(ints(rng_));
      else if (dt == DType::I32) x = double(ints32(rng_));
      else x = normal(rng_) * 100;
    }
    return Tensor::from_vector(v, shape, dt);  // rounds to dt
  }
};

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_F(H5Test, RoundTripsEveryDtypeAndShape) {
  const std::vector<DType> dtypes = {DType::F32, DType::F64, DType::BF16, DType::I32, DType::I64};
  const std::vector<Shape> shapes = {{3, 5, 7}, {}, {0, 4}, {1}, {2, 1, 3, 2, 2}};
  std::vector<Tensor> written;
  {
    H5File f = H5File::create(file("a.h5"));
    for (size_t i = 0; i < dtypes.size(); ++i)
      for (size_t j = 0; j < shapes.size(); ++j) {
        written.push_back(random(shapes[j], dtypes[i]));
        f.write(fmt::format("t{}_{}", i, j), written.back());
      }
    f.close();
  }
  H5File f = H5File::open(file("a.h5"));
  for (size_t i = 0; i < dtypes.size(); ++i)
    for (size_t j = 0; j < shapes.size(); ++j) {
      const std::string name = fmt::format("t{}_{}", i, j);
      SCOPED_TRACE(name + " " + dtype_name(dtypes[i]) + shape_str(shapes[j]));
      EXPECT_EQ(f.dtype(name), dtypes[i]);
      EXPECT_EQ(f.shape(name), shapes[j]);
      Tensor r = f.read(name);
      EXPECT_EQ(r.dtype(), dtypes[i]);
      EXPECT_EQ(r.shape(), shapes[j]);
      EXPECT_EQ(r.to_vector(), written[i * shapes.size() + j].to_vector());
    }
}

TEST_F(H5Test, WritesStridedViewsAndConvertsOnRead) {
  Tensor t = random({4, 3, 5}, DType::F64);
  Tensor view = t.transpose(0, 2).slice(1, 1, 3);  // [5, 2, 4], not contiguous
  {
    H5File f = H5File::create(file("v.h5"));
    f.write("v", view);
  }
  H5File f = H5File::open(file("v.h5"));
  EXPECT_EQ(f.read("v").to_vector(), view.contiguous().to_vector());
  Tensor as32 = f.read("v", DType::F32);
  EXPECT_EQ(as32.dtype(), DType::F32);
  EXPECT_EQ(as32.to_vector(), view.to(DType::F32).to_vector());
}

TEST_F(H5Test, GroupsListingAndReplace) {
  H5File f = H5File::create(file("g.h5"));
  f.write("b", random({2}, DType::F32));
  f.write("a/x", random({3}, DType::I32));
  f.write("a/y/z", random({1, 2}, DType::F64));
  EXPECT_EQ(f.datasets(), (std::vector<std::string>{"a/x", "a/y/z", "b"}));
  EXPECT_TRUE(f.has("a/y/z"));
  EXPECT_FALSE(f.has("a"));  // a group, not a dataset
  EXPECT_FALSE(f.has("a/nope"));
  EXPECT_FALSE(f.has("nope/deeper"));
  Tensor b2 = random({4, 2}, DType::I64);
  f.write("b", b2);  // replaces, with another shape and dtype
  EXPECT_EQ(f.read("b").to_vector(), b2.to_vector());
  EXPECT_EQ(f.dtype("b"), DType::I64);
  EXPECT_EQ(f.datasets().size(), 3u);
}

TEST_F(H5Test, Attributes) {
  const double d = std::normal_distribution<double>{}(rng_);
  const int64_t i = int64_t(rng_() >> 1);
  {
    H5File f = H5File::create(file("attr.h5"));
    f.write("x", random({2}, DType::F32));
    f.set_attr("name", "gdn chunk");
    f.set_attr("scale", d);
    f.set_attr("step", i);
    f.set_attr("chunk", 64);  // int: the integral overload
    f.set_attr("unit", std::string("tokens"), "x");
    f.set_attr("name", "replaced");
    f.close();
  }
  H5File f = H5File::open(file("attr.h5"));
  EXPECT_EQ(f.attr_string("name"), "replaced");
  EXPECT_EQ(f.attr_double("scale"), d);
  EXPECT_EQ(f.attr_int("step"), i);
  EXPECT_EQ(f.attr_int("chunk"), 64);
  EXPECT_EQ(f.attr_double("chunk"), 64.0);
  EXPECT_EQ(f.attr_string("unit", "x"), "tokens");
  EXPECT_TRUE(f.has_attr("unit", "x"));
  EXPECT_FALSE(f.has_attr("unit"));
  EXPECT_NE(error_of([&] { f.attr_int("scale"); }).find("'scale'"), std::string::npos);
  EXPECT_NE(error_of([&] { f.attr_string("step"); }).find("not a string"), std::string::npos);
  EXPECT_NE(error_of([&] { f.attr_double("missing"); }).find("no attribute 'missing'"), std::string::npos);
  EXPECT_NE(error_of([&] { f.attr_double("a", "nowhere"); }).find("no object 'nowhere'"), std::string::npos);
}

// Types that rewy does not write but numpy/h5py do: fixed-length string attributes, i16, u32,
// big-endian f64, f16. bf16 datasets must also read as f32 through HDF5's own conversion.
TEST_F(H5Test, ForeignTypesFromTheRawApi) {
  const std::string path = file("raw.h5");
  std::uniform_int_distribution<int> small(-1000, 1000);
  std::vector<int16_t> i16(6);
  std::vector<uint32_t> u32(6);
  std::vector<double> f64(6);
  std::vector<float> f16src(6);  // values exact in f16: integers of magnitude < 2048
  for (int j = 0; j < 6; ++j) {
    i16[j] = int16_t(small(rng_));
    u32[j] = uint32_t(rng_());  // up to 2^32 - 1: needs i64
    f64[j] = std::normal_distribution<double>{}(rng_);
    f16src[j] = float(small(rng_));
  }
  {
    const hid_t file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    ASSERT_GE(file, 0);
    const hsize_t dims[2] = {2, 3};
    const hid_t space = H5Screate_simple(2, dims, nullptr);
    auto put = [&](const char* name, hid_t ftype, hid_t mtype, const void* data) {
      const hid_t ds = H5Dcreate2(file, name, ftype, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
      ASSERT_GE(ds, 0);
      ASSERT_GE(H5Dwrite(ds, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, data), 0);
      H5Dclose(ds);
    };
    put("i16", H5T_STD_I16LE, H5T_NATIVE_INT16, i16.data());
    put("u32", H5T_STD_U32LE, H5T_NATIVE_UINT32, u32.data());
    put("f64be", H5T_IEEE_F64BE, H5T_NATIVE_DOUBLE, f64.data());
    const hid_t f16 = H5Tcopy(H5T_IEEE_F32LE);
    H5Tset_fields(f16, 15, 10, 5, 0, 10);
    H5Tset_precision(f16, 16);
    H5Tset_size(f16, 2);
    H5Tset_ebias(f16, 15);
    put("f16", f16, H5T_NATIVE_FLOAT, f16src.data());
    H5Tclose(f16);
    const hid_t str = H5Tcopy(H5T_C_S1);
    H5Tset_size(str, 8);
    H5Tset_strpad(str, H5T_STR_NULLPAD);
    const hid_t scalar = H5Screate(H5S_SCALAR);
    const hid_t a = H5Acreate2(file, "fixed", str, scalar, H5P_DEFAULT, H5P_DEFAULT);
    const char text[8] = {'k', 'd', 'a', 0, 0, 0, 0, 0};
    H5Awrite(a, str, text);
    H5Aclose(a);
    H5Sclose(scalar);
    H5Tclose(str);
    H5Sclose(space);
    H5Fclose(file);
  }
  H5File f = H5File::open(path);
  EXPECT_EQ(f.attr_string("fixed"), "kda");
  Tensor t = f.read("i16");
  EXPECT_EQ(t.dtype(), DType::I32);
  EXPECT_EQ(t.to_vector(), std::vector<double>(i16.begin(), i16.end()));
  t = f.read("u32");
  EXPECT_EQ(t.dtype(), DType::I64);
  EXPECT_EQ(t.to_vector(), std::vector<double>(u32.begin(), u32.end()));
  t = f.read("f64be");
  EXPECT_EQ(t.dtype(), DType::F64);
  EXPECT_EQ(t.to_vector(), f64);
  t = f.read("f16");
  EXPECT_EQ(t.dtype(), DType::F32);
  EXPECT_EQ(t.to_vector(), std::vector<double>(f16src.begin(), f16src.end()));
  f.close();

  // bf16 written by rewy, read as f32 by plain HDF5 (what h5py does with an unknown float).
  Tensor b = random({5}, DType::BF16);
  {
    H5File w = H5File::create(file("bf16.h5"));
    w.write("b", b);
  }
  const hid_t file2 = H5Fopen(file("bf16.h5").c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  ASSERT_GE(file2, 0);
  const hid_t ds = H5Dopen2(file2, "b", H5P_DEFAULT);
  std::vector<float> got(5);
  ASSERT_GE(H5Dread(ds, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, got.data()), 0);
  H5Dclose(ds);
  H5Fclose(file2);
  EXPECT_EQ(std::vector<double>(got.begin(), got.end()), b.to_vector());
}

TEST_F(H5Test, AtomicWriteReplacesWholeOrNothing) {
  const std::string path = file("ckpt.h5");
  Tensor first = random({3, 4}, DType::F32);
  write_h5_atomic(path, [&](H5File& f) { f.write("w", first); });
  EXPECT_FALSE(fs::exists(path + ".tmp"));
  EXPECT_EQ(H5File::open(path).read("w").to_vector(), first.to_vector());

  // A writer that fails half-way leaves the previous file untouched and no temporary behind.
  const std::string err = error_of([&] {
    write_h5_atomic(path, [&](H5File& f) {
      f.write("w", random({3, 4}, DType::F32));
      REWY_FAIL("disk full (simulated)");
    });
  });
  EXPECT_NE(err.find("disk full"), std::string::npos);
  EXPECT_FALSE(fs::exists(path + ".tmp"));
  EXPECT_EQ(H5File::open(path).read("w").to_vector(), first.to_vector());

  // The generic form, with a plain file.
  atomic_write(file("note.txt"), [](const std::string& tmp) { std::ofstream(tmp) << "ok"; });
  std::ifstream in(file("note.txt"));
  std::string s;
  in >> s;
  EXPECT_EQ(s, "ok");
}

TEST_F(H5Test, ClearErrors) {
  const std::string missing = file("missing.h5");
  std::string e = error_of([&] { H5File::open(missing); });
  EXPECT_NE(e.find(missing), std::string::npos) << e;
  EXPECT_NE(e.find("no such file"), std::string::npos) << e;

  std::ofstream(file("text.h5")) << "not hdf5 at all\n";
  e = error_of([&] { H5File::open(file("text.h5")); });
  EXPECT_NE(e.find("not an HDF5 file"), std::string::npos) << e;

  // A file cut short: the superblock survives, the data does not.
  const std::string cut = file("cut.h5");
  {
    H5File f = H5File::create(cut);
    f.write("x", random({64, 64}, DType::F64));
  }
  fs::resize_file(cut, fs::file_size(cut) / 2);
  e = error_of([&] {
    H5File f = H5File::open(cut);
    f.read("x");
  });
  EXPECT_NE(e.find(cut), std::string::npos) << e;

  H5File f = H5File::create(file("e.h5"));
  f.write("g/x", random({2}, DType::F32));
  e = error_of([&] { f.read("y"); });
  EXPECT_NE(e.find("no dataset 'y'"), std::string::npos) << e;
  e = error_of([&] { f.read("g"); });
  EXPECT_NE(e.find("'g'"), std::string::npos) << e;
  EXPECT_NE(e.find("not a dataset"), std::string::npos) << e;
  e = error_of([&] { f.write("z", Tensor{}); });
  EXPECT_NE(e.find("undefined tensor"), std::string::npos) << e;

  // H5_CHECK names the call, HDF5's reason and this file:line.
  e = error_of([] { H5_CHECK(H5Dclose(hid_t(-1))); });
  EXPECT_NE(e.find("H5Dclose(hid_t(-1)) failed"), std::string::npos) << e;
  EXPECT_NE(e.find("test_h5.cpp:"), std::string::npos) << e;
}
