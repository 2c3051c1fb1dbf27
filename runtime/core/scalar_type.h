// ScalarType: element types of tensors, numbered as in the .pte schema (c10 codes).
#pragma once

#include <cstddef>
#include <cstdint>

namespace kiln {

enum class ScalarType : int8_t {
  /// uint8_t
  Byte = 0,
  /// int8_t
  Char = 1,
  /// int16_t
  Short = 2,
  /// int32_t
  Int = 3,
  /// int64_t
  Long = 4,
  /// IEEE float16 (stored as uint16_t)
  Half = 5,
  /// float
  Float = 6,
  /// double
  Double = 7,
  /// bool, one byte
  Bool = 11,
  /// legacy quantized int8 (data only)
  QInt8 = 12,
  /// legacy quantized uint8 (data only)
  QUInt8 = 13,
  /// legacy quantized int32 (data only)
  QInt32 = 14,
  /// bfloat16 (stored as uint16_t)
  BFloat16 = 15,
  /// two 4-bit values per byte (data only)
  QUInt4x2 = 16,
  /// four 2-bit values per byte (data only)
  QUInt2x4 = 17,
  /// 16 opaque bits (data only)
  Bits16 = 22,
  /// float8 e5m2 (data only)
  Float8_e5m2 = 23,
  /// float8 e4m3fn (data only)
  Float8_e4m3fn = 24,
  /// float8 e5m2fnuz (data only)
  Float8_e5m2fnuz = 25,
  /// float8 e4m3fnuz (data only)
  Float8_e4m3fnuz = 26,
  /// uint16_t
  UInt16 = 27,
  /// uint32_t
  UInt32 = 28,
  /// uint64_t
  UInt64 = 29,
};

/// Size in bytes of one element, or 0 if `type` is not a known scalar type.
size_t element_size(ScalarType type);

/// Short name such as "Float" or "Char"; "Unknown" for an unknown code.
const char* scalar_type_name(ScalarType type);

/// True for the codes listed above.
inline bool is_valid_scalar_type(ScalarType type) { return element_size(type) != 0; }

/// Maps a C++ element type to its ScalarType at compile time.
template <typename T>
struct CppTypeToScalarType;
#define KILN_MAP_CPP_TYPE(ctype, stype) \
  template <>                           \
  struct CppTypeToScalarType<ctype> {   \
    static constexpr ScalarType value = ScalarType::stype; \
  };
KILN_MAP_CPP_TYPE(uint8_t, Byte)
KILN_MAP_CPP_TYPE(int8_t, Char)
KILN_MAP_CPP_TYPE(int16_t, Short)
KILN_MAP_CPP_TYPE(int32_t, Int)
KILN_MAP_CPP_TYPE(int64_t, Long)
KILN_MAP_CPP_TYPE(float, Float)
KILN_MAP_CPP_TYPE(double, Double)
KILN_MAP_CPP_TYPE(bool, Bool)
KILN_MAP_CPP_TYPE(uint16_t, UInt16)
KILN_MAP_CPP_TYPE(uint32_t, UInt32)
KILN_MAP_CPP_TYPE(uint64_t, UInt64)
#undef KILN_MAP_CPP_TYPE

}  // namespace kiln
