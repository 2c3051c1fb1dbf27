// dtype dispatch: the one place that maps a runtime ScalarType to a C++ element type.
//
//   dispatch_dtype<kRealTypes>(ctx, op, out.scalar_type(), [&](auto tag) {
//     using T = decltype(tag);
//     ...
//   });
//
// The generic lambda is instantiated only for the types in the set; any other dtype
// fails the kernel with InvalidType and a log line naming the op and the dtype.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/portable/util/kernel_args.h"
#include "runtime/core/scalar_type.h"

// Dtype-selective builds (tools/codegen/gen_registration.py --dtype-selective) compile
// each kernel source through a generated file that defines KILN_DTYPE_SELECTIVE and
// KILN_DTYPE_SELECTED_<Dtype> (0 or 1) for the dtypes that kernel's selected operators
// see. dispatch_dtype then instantiates only those dtypes' branches; the others fail
// like any unsupported dtype. visit_dtype and load_as (conversions of inputs) keep
// every dtype, so that a dtype outside the selection is reported, never misread.
// (Every dispatch site is a template over its kernel file's own lambdas, so files built
// with different selections never share an instantiation.)
#if defined(KILN_DTYPE_SELECTIVE)
#define KILN_DTYPE_IS_SELECTED(stype) (KILN_DTYPE_SELECTED_##stype != 0)
#else
#define KILN_DTYPE_IS_SELECTED(stype) true
#endif

namespace kiln {
namespace portable {

/// Sets of dtypes a kernel supports (bit flags, combine with |).
enum DtypeSet : uint32_t {
  kFloatTypes = 1u << 0,  ///< float, double
  kIntTypes = 1u << 1,    ///< uint8, int8, int16, int32, int64
  kBoolType = 1u << 2,    ///< bool
  kRealTypes = kFloatTypes | kIntTypes,
  kAllTypes = kRealTypes | kBoolType,
};

/// Calls `f(T{})` with T the C++ type of `type` if `type` is in `Set` (and, when
/// `OnlySelected`, selected by a dtype-selective build); returns false (without
/// logging) otherwise.
template <uint32_t Set, bool OnlySelected = false, typename F>
bool visit_dtype(ScalarType type, F&& f) {
#define KILN_VISIT_CASE(stype, ctype, group)                                    \
  case ScalarType::stype:                                                       \
    if constexpr ((Set & (group)) != 0 && (!OnlySelected || KILN_DTYPE_IS_SELECTED(stype))) { \
      f(ctype{});                                                               \
      return true;                                                              \
    }                                                                           \
    break;
  switch (type) {
    KILN_VISIT_CASE(Float, float, kFloatTypes)
    KILN_VISIT_CASE(Double, double, kFloatTypes)
    KILN_VISIT_CASE(Byte, uint8_t, kIntTypes)
    KILN_VISIT_CASE(Char, int8_t, kIntTypes)
    KILN_VISIT_CASE(Short, int16_t, kIntTypes)
    KILN_VISIT_CASE(Int, int32_t, kIntTypes)
    KILN_VISIT_CASE(Long, int64_t, kIntTypes)
    KILN_VISIT_CASE(Bool, bool, kBoolType)
    default:
      break;
  }
#undef KILN_VISIT_CASE
  return false;
}

/// visit_dtype that fails the kernel (InvalidType, logged) for an unsupported dtype, or
/// one a dtype-selective build left out.
template <uint32_t Set, typename F>
bool dispatch_dtype(KernelContext& ctx, const char* op, ScalarType type, F&& f) {
  if (visit_dtype<Set, /*OnlySelected=*/true>(type, static_cast<F&&>(f))) return true;
  KILN_KERNEL_FAIL(ctx, Error::InvalidType, op, "dtype %s is not supported", scalar_type_name(type));
  return false;
}

/// True for the dtypes kernels compute with (kAllTypes): load_as reads only these.
inline bool is_computable_type(ScalarType t) {
  return visit_dtype<kAllTypes>(t, [](auto) {});
}

inline bool is_float_type(ScalarType t) { return t == ScalarType::Float || t == ScalarType::Double; }
inline bool is_int_type(ScalarType t) {
  return t == ScalarType::Byte || t == ScalarType::Char || t == ScalarType::Short ||
         t == ScalarType::Int || t == ScalarType::Long;
}

/// Read access to elements of C++ type T (x[i], like a const T*). Bool elements are read as
/// bytes, any non-zero byte true: a hostile program can make a bool tensor's memory hold
/// other bytes (planned memory it shares with another tensor), and loading such a byte as
/// a C++ bool is undefined behaviour.
template <typename T>
class Elements {
 public:
  explicit Elements(const void* data) : data_(data) {}
  T operator[](size_t i) const {
    if constexpr (std::is_same_v<T, bool>) {
      return static_cast<const uint8_t*>(data_)[i] != 0;
    } else {
      return static_cast<const T*>(data_)[i];
    }
  }

 private:
  const void* data_;
};

/// The elements of `t` read as T (which must be t's C++ element type).
template <typename T>
inline Elements<T> elements_of(const Tensor& t) {
  return Elements<T>(t.const_data_ptr());
}

/// Element i of `data` (of dtype `type`, one of kAllTypes) converted to T. Used on the
/// mixed-dtype paths; same-dtype paths read T directly.
template <typename T>
inline T load_as(ScalarType type, const void* data, size_t i) {
  T result{};
  visit_dtype<kAllTypes>(type, [&](auto tag) {
    using S = decltype(tag);
    result = static_cast<T>(Elements<S>(data)[i]);
  });
  return result;
}

/// PyTorch's result dtype for two tensors of these dtypes (bool < ints < floats; two
/// different ints promote to the wider signed type as torch does for the common pairs).
ScalarType promote_types(ScalarType a, ScalarType b);

/// True when a result of dtype `from` may be written to an out tensor of dtype `to`
/// (PyTorch's can_cast: never float -> int or non-bool -> bool).
inline bool can_cast(ScalarType from, ScalarType to) {
  if (is_float_type(from) && !is_float_type(to)) return false;
  if (from != ScalarType::Bool && to == ScalarType::Bool) return false;
  return true;
}

}  // namespace portable
}  // namespace kiln
