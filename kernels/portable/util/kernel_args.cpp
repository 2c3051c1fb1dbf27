#include "kernels/portable/util/kernel_args.h"

namespace kiln {
namespace portable {

ShapeString::ShapeString(Span<const SizesType> sizes) {
  size_t pos = 0;
  text[pos++] = '[';
  for (size_t i = 0; i < sizes.size() && pos < sizeof(text) - 16; ++i) {
    const int n = snprintf(text + pos, sizeof(text) - pos, i == 0 ? "%d" : ", %d",
                           static_cast<int>(sizes[i]));
    if (n < 0) break;
    pos += static_cast<size_t>(n);
  }
  if (pos > sizeof(text) - 2) pos = sizeof(text) - 2;
  text[pos++] = ']';
  text[pos] = '\0';
}

ArgReader::ArgReader(KernelContext& ctx, const char* op, Span<EValue*> args,
                     size_t expected_count)
    : ctx_(ctx), op_(op), args_(args), ok_(true) {
  if (args.size() != expected_count) {
    KILN_KERNEL_FAIL(ctx_, Error::InvalidArgument, op_, "expected %zu arguments, got %zu",
                     expected_count, args.size());
    ok_ = false;
  }
}

void ArgReader::fail(Error error) {
  ctx_.fail(error);
  ok_ = false;
}

bool ArgReader::is_none(size_t i) const {
  return ok_ && i < args_.size() && args_[i] != nullptr && args_[i]->is_none();
}

EValue* ArgReader::get(size_t i, Tag tag) {
  if (!ok_) return nullptr;
  if (i >= args_.size() || args_[i] == nullptr) {
    KILN_KERNEL_FAIL(ctx_, Error::InvalidArgument, op_, "argument %zu is missing", i);
    ok_ = false;
    return nullptr;
  }
  if (args_[i]->tag() != tag) {
    KILN_KERNEL_FAIL(ctx_, Error::InvalidType, op_, "argument %zu is %s, expected %s", i,
                     tag_name(args_[i]->tag()), tag_name(tag));
    ok_ = false;
    return nullptr;
  }
  return args_[i];
}

bool ArgReader::check_tensor(size_t i, Tensor* t, bool need_default_layout) {
  if (t == nullptr) {
    KILN_KERNEL_FAIL(ctx_, Error::InvalidArgument, op_, "argument %zu is a null tensor", i);
    ok_ = false;
    return false;
  }
  if (t->numel() > 0 && t->const_data_ptr() == nullptr) {
    KILN_KERNEL_FAIL(ctx_, Error::InvalidArgument, op_,
                     "tensor argument %zu has %zu elements but no data", i, t->numel());
    ok_ = false;
    return false;
  }
  if (need_default_layout && !t->is_contiguous()) {
    KILN_KERNEL_FAIL(ctx_, Error::NotSupported, op_,
                     "tensor argument %zu has a non-default dim order; portable kernels "
                     "need contiguous tensors", i);
    ok_ = false;
    return false;
  }
  return true;
}

Tensor* ArgReader::tensor(size_t i) {
  EValue* v = get(i, Tag::Tensor);
  if (v == nullptr) return nullptr;
  Tensor* t = &v->to_tensor();
  return check_tensor(i, t, true) ? t : nullptr;
}

Tensor* ArgReader::tensor_any_layout(size_t i) {
  EValue* v = get(i, Tag::Tensor);
  if (v == nullptr) return nullptr;
  Tensor* t = &v->to_tensor();
  return check_tensor(i, t, false) ? t : nullptr;
}

Tensor* ArgReader::optional_tensor(size_t i) {
  if (!ok_ || is_none(i)) return nullptr;
  return tensor(i);
}

int64_t ArgReader::int_value(size_t i) {
  EValue* v = get(i, Tag::Int);
  return v != nullptr ? v->to_int() : 0;
}

int64_t ArgReader::optional_int(size_t i, int64_t fallback, bool* present) {
  const bool none = is_none(i);
  if (present != nullptr) *present = !none;
  return none ? fallback : int_value(i);
}

bool ArgReader::bool_value(size_t i) {
  EValue* v = get(i, Tag::Bool);
  return v != nullptr && v->to_bool();
}

double ArgReader::double_value(size_t i) {
  // Programs store float arguments as Double; accept an Int too (e.g. eps=0).
  if (ok_ && i < args_.size() && args_[i] != nullptr && args_[i]->is_int()) {
    return static_cast<double>(args_[i]->to_int());
  }
  EValue* v = get(i, Tag::Double);
  return v != nullptr ? v->to_double() : 0.0;
}

double ArgReader::scalar(size_t i) {
  if (!ok_) return 0.0;
  if (i >= args_.size() || args_[i] == nullptr || !args_[i]->is_scalar()) {
    KILN_KERNEL_FAIL(ctx_, Error::InvalidType, op_, "argument %zu is %s, expected a Scalar", i,
                     i < args_.size() && args_[i] != nullptr ? tag_name(args_[i]->tag())
                                                             : "missing");
    ok_ = false;
    return 0.0;
  }
  return args_[i]->scalar_to_double();
}

ScalarArg ArgReader::scalar_arg(size_t i) {
  ScalarArg value;
  value.real = scalar(i);
  if (ok_ && args_[i]->is_int()) {
    value.integer = args_[i]->to_int();
    value.integral = true;
  } else if (ok_ && args_[i]->is_bool()) {
    value.integer = args_[i]->to_bool() ? 1 : 0;
    value.integral = true;
  }
  return value;
}

double ArgReader::optional_scalar(size_t i, double fallback, bool* present) {
  const bool none = is_none(i);
  if (present != nullptr) *present = !none;
  return none ? fallback : scalar(i);
}

Span<const int64_t> ArgReader::int_list(size_t i) {
  EValue* v = get(i, Tag::ListInt);
  return v != nullptr ? v->to_int_list() : Span<const int64_t>();
}

Span<const int64_t> ArgReader::optional_int_list(size_t i, bool* present) {
  const bool none = is_none(i);
  if (present != nullptr) *present = !none;
  return none ? Span<const int64_t>() : int_list(i);
}

Span<const double> ArgReader::optional_double_list(size_t i, bool* present) {
  const bool none = is_none(i);
  if (present != nullptr) *present = !none;
  if (none) return {};
  EValue* v = get(i, Tag::ListDouble);
  return v != nullptr ? v->to_double_list() : Span<const double>();
}

Span<Tensor* const> ArgReader::tensor_list(size_t i) {
  EValue* v = get(i, Tag::ListTensor);
  if (v == nullptr) return {};
  Span<Tensor* const> list = v->to_tensor_list();
  for (size_t k = 0; k < list.size(); ++k) {
    if (!check_tensor(i, list[k], true)) return {};
  }
  return list;
}

Span<Tensor* const> ArgReader::optional_tensor_list(size_t i) {
  // A list without None items may come as a plain tensor list.
  const bool plain = ok_ && i < args_.size() && args_[i] != nullptr && args_[i]->is_tensor_list();
  EValue* v = get(i, plain ? Tag::ListTensor : Tag::ListOptionalTensor);
  if (v == nullptr) return {};
  Span<Tensor* const> list = plain ? v->to_tensor_list() : v->to_optional_tensor_list();
  for (size_t k = 0; k < list.size(); ++k) {
    if (list[k] != nullptr && !check_tensor(i, list[k], true)) return {};
  }
  return list;
}

Span<const char> ArgReader::string(size_t i) {
  EValue* v = get(i, Tag::String);
  return v != nullptr ? v->to_string() : Span<const char>();
}

bool resize_output(KernelContext& ctx, const char* op, Tensor& out, Span<const SizesType> sizes) {
  if (out.resize(sizes) != Error::Ok) {
    KILN_KERNEL_FAIL(ctx, Error::InvalidArgument, op, "out has shape %s, the result has shape %s",
                     ShapeString(out).c_str(), ShapeString(sizes).c_str());
    return false;
  }
  return true;
}

bool resize_output_like(KernelContext& ctx, const char* op, Tensor& out, const Tensor& like) {
  return resize_output(ctx, op, out, like.sizes());
}

bool check_dtype(KernelContext& ctx, const char* op, const Tensor& t, ScalarType type,
                 const char* what) {
  if (t.scalar_type() != type) {
    KILN_KERNEL_FAIL(ctx, Error::InvalidType, op, "%s has dtype %s, expected %s", what,
                     scalar_type_name(t.scalar_type()), scalar_type_name(type));
    return false;
  }
  return true;
}

bool check_same_dtype(KernelContext& ctx, const char* op, const Tensor& a, const Tensor& b,
                      const char* what_a, const char* what_b) {
  if (a.scalar_type() != b.scalar_type()) {
    KILN_KERNEL_FAIL(ctx, Error::InvalidType, op, "%s has dtype %s but %s has %s", what_a,
                     scalar_type_name(a.scalar_type()), what_b, scalar_type_name(b.scalar_type()));
    return false;
  }
  return true;
}

bool normalize_dim(KernelContext& ctx, const char* op, int64_t dim, int32_t rank, int32_t* out) {
  const int64_t extent = rank > 0 ? rank : 1;
  if (dim < -extent || dim >= extent) {
    KILN_KERNEL_FAIL(ctx, Error::InvalidArgument, op, "dim %lld is out of range for rank %d",
                     static_cast<long long>(dim), static_cast<int>(rank));
    return false;
  }
  *out = static_cast<int32_t>(dim < 0 ? dim + extent : dim);
  return true;
}

}  // namespace portable
}  // namespace kiln
