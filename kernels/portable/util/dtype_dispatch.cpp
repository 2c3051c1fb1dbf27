#include "kernels/portable/util/dtype_dispatch.h"

namespace kiln {
namespace portable {

ScalarType promote_types(ScalarType a, ScalarType b) {
  if (a == b) return a;
  if (a == ScalarType::Bool) return b;
  if (b == ScalarType::Bool) return a;
  if (is_float_type(a) || is_float_type(b)) {
    if (is_float_type(a) && is_float_type(b)) return ScalarType::Double;
    return is_float_type(a) ? a : b;
  }
  // Two different integer types: uint8 with a signed type needs the next wider signed
  // type (int8 + uint8 -> int16); otherwise the wider one wins.
  auto rank = [](ScalarType t) {
    switch (t) {
      case ScalarType::Char: return 1;
      case ScalarType::Short: return 2;
      case ScalarType::Int: return 3;
      case ScalarType::Long: return 4;
      default: return 0;  // Byte
    }
  };
  if (a == ScalarType::Byte || b == ScalarType::Byte) {
    const ScalarType other = a == ScalarType::Byte ? b : a;
    return other == ScalarType::Char ? ScalarType::Short : other;
  }
  return rank(a) > rank(b) ? a : b;
}

}  // namespace portable
}  // namespace kiln
