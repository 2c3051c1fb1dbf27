// EValue: one entry of a method's value table — the arguments every kernel receives.
//
// An EValue is a tagged union of the kinds a .pte program can hold. Lists of ints
// refer to other Int values (so a size computed at run time flows into the list);
// lists of tensors refer to Tensor values. Everything is owned by the method.
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/core/span.h"
#include "runtime/core/tensor.h"

namespace kiln {

class EValue;

enum class Tag : uint8_t {
  /// No value (an optional argument left out).
  None = 0,
  /// int64_t
  Int,
  /// double
  Double,
  /// bool
  Bool,
  /// Characters in the program (not NUL-terminated).
  String,
  /// Tensor*
  Tensor,
  /// List of int64_t, boxed: each element is another Int EValue.
  ListInt,
  /// List of double.
  ListDouble,
  /// List of bool.
  ListBool,
  /// List of Tensor*.
  ListTensor,
  /// List of Tensor* where an element may be null (None).
  ListOptionalTensor,
};

/// Name of a tag, e.g. "Tensor", for error messages.
const char* tag_name(Tag tag);

/// A list of ints whose elements are Int EValues, unboxed into `scratch` on read.
struct BoxedIntList {
  EValue* const* items;
  int64_t* scratch;
  size_t size;
};

class EValue final {
 public:
  EValue() : tag_(Tag::None) { payload_.as_int = 0; }
  explicit EValue(int64_t v) : tag_(Tag::Int) { payload_.as_int = v; }
  explicit EValue(double v) : tag_(Tag::Double) { payload_.as_double = v; }
  explicit EValue(bool v) : tag_(Tag::Bool) { payload_.as_bool = v; }
  explicit EValue(Tensor* t) : tag_(Tag::Tensor) { payload_.as_tensor = t; }
  static EValue string(const char* data, size_t size);
  static EValue int_list(BoxedIntList list);
  static EValue double_list(Span<const double> list);
  static EValue bool_list(Span<const bool> list);
  static EValue tensor_list(Span<Tensor* const> list);
  static EValue optional_tensor_list(Span<Tensor* const> list);

  Tag tag() const { return tag_; }
  bool is_none() const { return tag_ == Tag::None; }
  bool is_int() const { return tag_ == Tag::Int; }
  bool is_double() const { return tag_ == Tag::Double; }
  bool is_bool() const { return tag_ == Tag::Bool; }
  bool is_tensor() const { return tag_ == Tag::Tensor; }
  bool is_int_list() const { return tag_ == Tag::ListInt; }
  bool is_double_list() const { return tag_ == Tag::ListDouble; }
  bool is_bool_list() const { return tag_ == Tag::ListBool; }
  bool is_tensor_list() const { return tag_ == Tag::ListTensor; }
  bool is_optional_tensor_list() const { return tag_ == Tag::ListOptionalTensor; }
  /// Int, Double or Bool: a PyTorch Scalar argument.
  bool is_scalar() const { return is_int() || is_double() || is_bool(); }

  // Accessors. Each requires the matching tag; kernels check tags first (see
  // kernels/portable/util) so that a malformed program fails with InvalidType.
  int64_t to_int() const { return payload_.as_int; }
  double to_double() const { return payload_.as_double; }
  bool to_bool() const { return payload_.as_bool; }
  Tensor& to_tensor() const { return *payload_.as_tensor; }
  /// The characters of a String value.
  Span<const char> to_string() const { return {payload_.as_string.data, payload_.as_string.size}; }
  /// Unboxes the current values of the list's Int EValues.
  Span<const int64_t> to_int_list() const;
  Span<const double> to_double_list() const { return payload_.as_double_list; }
  Span<const bool> to_bool_list() const { return payload_.as_bool_list; }
  Span<Tensor* const> to_tensor_list() const { return payload_.as_tensor_list; }
  /// Elements are null where the program has None.
  Span<Tensor* const> to_optional_tensor_list() const { return payload_.as_tensor_list; }
  /// Int, Double or Bool as a double (a Scalar argument).
  double scalar_to_double() const;
  /// Int, Double or Bool as an int64_t (doubles truncate toward zero).
  int64_t scalar_to_int() const;

  /// Replaces a Tensor value's tensor pointer (used for unplanned inputs).
  void set_tensor(Tensor* t) { tag_ = Tag::Tensor; payload_.as_tensor = t; }

 private:
  struct StringPayload {
    const char* data;
    size_t size;
  };
  union Payload {
    int64_t as_int;
    double as_double;
    bool as_bool;
    Tensor* as_tensor;
    StringPayload as_string;
    BoxedIntList as_int_list;
    Span<const double> as_double_list;
    Span<const bool> as_bool_list;
    Span<Tensor* const> as_tensor_list;
    Payload() : as_int(0) {}
  } payload_;
  Tag tag_;
};

}  // namespace kiln
