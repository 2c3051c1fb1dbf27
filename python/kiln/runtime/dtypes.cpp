#include "python/kiln/runtime/dtypes.h"

namespace nb = nanobind;

namespace kiln::python {

std::optional<ScalarType> scalar_type_of(nb::dlpack::dtype dtype) {
  using Code = nb::dlpack::dtype_code;
  if (dtype.lanes != 1) return std::nullopt;
  const auto code = static_cast<Code>(dtype.code);
  switch (code) {
    case Code::Float:
      if (dtype.bits == 16) return ScalarType::Half;
      if (dtype.bits == 32) return ScalarType::Float;
      if (dtype.bits == 64) return ScalarType::Double;
      break;
    case Code::Bfloat:
      if (dtype.bits == 16) return ScalarType::BFloat16;
      break;
    case Code::Int:
      if (dtype.bits == 8) return ScalarType::Char;
      if (dtype.bits == 16) return ScalarType::Short;
      if (dtype.bits == 32) return ScalarType::Int;
      if (dtype.bits == 64) return ScalarType::Long;
      break;
    case Code::UInt:
      if (dtype.bits == 8) return ScalarType::Byte;
      if (dtype.bits == 16) return ScalarType::UInt16;
      if (dtype.bits == 32) return ScalarType::UInt32;
      if (dtype.bits == 64) return ScalarType::UInt64;
      break;
    case Code::Bool:
      if (dtype.bits == 8) return ScalarType::Bool;
      break;
    default:
      break;
  }
  return std::nullopt;
}

std::optional<nb::dlpack::dtype> dlpack_dtype_of(ScalarType type) {
  using Code = nb::dlpack::dtype_code;
  auto make = [](Code code, uint8_t bits) {
    nb::dlpack::dtype dtype;
    dtype.code = static_cast<uint8_t>(code);
    dtype.bits = bits;
    dtype.lanes = 1;
    return dtype;
  };
  switch (type) {
    case ScalarType::Half: return make(Code::Float, 16);
    case ScalarType::Float: return make(Code::Float, 32);
    case ScalarType::Double: return make(Code::Float, 64);
    case ScalarType::BFloat16: return make(Code::Bfloat, 16);
    case ScalarType::Char: return make(Code::Int, 8);
    case ScalarType::Short: return make(Code::Int, 16);
    case ScalarType::Int: return make(Code::Int, 32);
    case ScalarType::Long: return make(Code::Int, 64);
    case ScalarType::Byte: return make(Code::UInt, 8);
    case ScalarType::UInt16: return make(Code::UInt, 16);
    case ScalarType::UInt32: return make(Code::UInt, 32);
    case ScalarType::UInt64: return make(Code::UInt, 64);
    case ScalarType::Bool: return make(Code::Bool, 8);
    default: return std::nullopt;
  }
}

}  // namespace kiln::python
