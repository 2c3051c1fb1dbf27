#include "runtime/core/evalue.h"

namespace kiln {

const char* tag_name(Tag tag) {
  switch (tag) {
    case Tag::None: return "None";
    case Tag::Int: return "Int";
    case Tag::Double: return "Double";
    case Tag::Bool: return "Bool";
    case Tag::String: return "String";
    case Tag::Tensor: return "Tensor";
    case Tag::ListInt: return "ListInt";
    case Tag::ListDouble: return "ListDouble";
    case Tag::ListBool: return "ListBool";
    case Tag::ListTensor: return "ListTensor";
    case Tag::ListOptionalTensor: return "ListOptionalTensor";
  }
  return "Unknown";
}

EValue EValue::string(const char* data, size_t size) {
  EValue v;
  v.tag_ = Tag::String;
  v.payload_.as_string = {data, size};
  return v;
}

EValue EValue::int_list(BoxedIntList list) {
  EValue v;
  v.tag_ = Tag::ListInt;
  v.payload_.as_int_list = list;
  return v;
}

EValue EValue::double_list(Span<const double> list) {
  EValue v;
  v.tag_ = Tag::ListDouble;
  v.payload_.as_double_list = list;
  return v;
}

EValue EValue::bool_list(Span<const bool> list) {
  EValue v;
  v.tag_ = Tag::ListBool;
  v.payload_.as_bool_list = list;
  return v;
}

EValue EValue::tensor_list(Span<Tensor* const> list) {
  EValue v;
  v.tag_ = Tag::ListTensor;
  v.payload_.as_tensor_list = list;
  return v;
}

EValue EValue::optional_tensor_list(Span<Tensor* const> list) {
  EValue v;
  v.tag_ = Tag::ListOptionalTensor;
  v.payload_.as_tensor_list = list;
  return v;
}

Span<const int64_t> EValue::to_int_list() const {
  const BoxedIntList& list = payload_.as_int_list;
  for (size_t i = 0; i < list.size; ++i) {
    list.scratch[i] = list.items[i]->to_int();
  }
  return {list.scratch, list.size};
}

double EValue::scalar_to_double() const {
  switch (tag_) {
    case Tag::Int: return static_cast<double>(payload_.as_int);
    case Tag::Double: return payload_.as_double;
    case Tag::Bool: return payload_.as_bool ? 1.0 : 0.0;
    default: return 0.0;
  }
}

int64_t EValue::scalar_to_int() const {
  switch (tag_) {
    case Tag::Int: return payload_.as_int;
    case Tag::Double: return static_cast<int64_t>(payload_.as_double);
    case Tag::Bool: return payload_.as_bool ? 1 : 0;
    default: return 0;
  }
}

}  // namespace kiln
