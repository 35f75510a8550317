// Element types: f32, bf16, f64, i32, i64. bf16 on the host is a 16-bit pattern with the same
// layout as __nv_bfloat16, converted with round-to-nearest-even (the rounding the GPU uses).
#pragma once
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#if defined(__CUDACC__)
#define REWY_HD __host__ __device__ __forceinline__
#else
#define REWY_HD inline
#endif

namespace rewy {

enum class DType : uint8_t { F32, BF16, F64, I32, I64 };

struct bf16 {
  uint16_t bits = 0;
  bf16() = default;
  REWY_HD explicit bf16(float f) : bits(from_float(f)) {}
  REWY_HD explicit operator float() const { return to_float(bits); }
  REWY_HD static float to_float(uint16_t b) {
    uint32_t u = uint32_t(b) << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
  }
  REWY_HD static uint16_t from_float(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u) return uint16_t((u >> 16) | 0x40);  // quiet NaN
    u += 0x7fffu + ((u >> 16) & 1u);                                          // round to nearest even
    return uint16_t(u >> 16);
  }
};

// Round a value through bf16 and back (what a bf16 store followed by a load does).
REWY_HD float round_bf16(float x) { return float(bf16(x)); }
REWY_HD double round_bf16(double x) { return double(float(bf16(float(x)))); }

inline size_t dtype_size(DType t) {
  switch (t) {
    case DType::F32: return 4;
    case DType::BF16: return 2;
    case DType::F64: return 8;
    case DType::I32: return 4;
    case DType::I64: return 8;
  }
  return 0;
}

inline const char* dtype_name(DType t) {
  switch (t) {
    case DType::F32: return "f32";
    case DType::BF16: return "bf16";
    case DType::F64: return "f64";
    case DType::I32: return "i32";
    case DType::I64: return "i64";
  }
  return "?";
}

inline bool is_floating(DType t) { return t == DType::F32 || t == DType::BF16 || t == DType::F64; }

template <typename T> struct dtype_of;
template <> struct dtype_of<float> { static constexpr DType value = DType::F32; };
template <> struct dtype_of<bf16> { static constexpr DType value = DType::BF16; };
template <> struct dtype_of<double> { static constexpr DType value = DType::F64; };
template <> struct dtype_of<int32_t> { static constexpr DType value = DType::I32; };
template <> struct dtype_of<int64_t> { static constexpr DType value = DType::I64; };

}  // namespace rewy
