// Shared bodies of the elementwise predicates: comparisons of two tensors, logical
// ops, isnan/isinf. Each result is a truth value, written to the out tensor as bool or,
// when a program asks for another out dtype (PyTorch allows it), as 0/1 of that dtype.
#pragma once

#include <cstddef>

#include "kernels/portable/util/elementwise.h"

namespace kiln {
namespace portable {

/// PyTorch's result dtype of an op on tensors `a` and `b`: promote_types of the two,
/// except that a 0-dim tensor beside a dimensioned one only counts when its category
/// (bool < integer < floating point) is higher: int8 [3] vs int64 0-dim is int8.
inline ScalarType result_type(const Tensor& a, const Tensor& b) {
  if ((a.dim() == 0) == (b.dim() == 0)) return promote_types(a.scalar_type(), b.scalar_type());
  const Tensor& shaped = a.dim() == 0 ? b : a;
  const Tensor& zero_dim = a.dim() == 0 ? a : b;
  auto category = [](ScalarType t) { return t == ScalarType::Bool ? 0 : (is_float_type(t) ? 2 : 1); };
  if (category(zero_dim.scalar_type()) > category(shaped.scalar_type())) {
    return promote_types(shaped.scalar_type(), zero_dim.scalar_type());
  }
  return shaped.scalar_type();
}

/// Writes truth values to an out tensor of any dtype of kAllTypes: directly when it is
/// bool (the common case), else as 0/1 converted to its dtype.
class TruthWriter {
 public:
  explicit TruthWriter(Tensor& out)
      : type_(out.scalar_type()), data_(out.mutable_data_ptr()),
        bools_(type_ == ScalarType::Bool ? out.mutable_data_ptr<bool>() : nullptr) {}

  void operator()(size_t i, bool value) const {
    if (bools_ != nullptr) {
      bools_[i] = value;
      return;
    }
    visit_dtype<kAllTypes>(type_, [&](auto tag) {
      using O = decltype(tag);
      static_cast<O*>(data_)[i] = static_cast<O>(value);
    });
  }

 private:
  ScalarType type_;
  void* data_;
  bool* bools_;
};

/// Fails the kernel unless `out` (a truth-valued result) has one of kAllTypes.
inline bool check_truth_out(KernelContext& ctx, const char* name, const Tensor& out) {
  if (visit_dtype<kAllTypes>(out.scalar_type(), [](auto) {})) return true;
  KILN_KERNEL_FAIL(ctx, Error::InvalidType, name, "out dtype %s is not supported",
                   scalar_type_name(out.scalar_type()));
  return false;
}

/// out[i] = pred(in[i]), pred called with in's own element type (any of kAllTypes).
template <typename Pred>
void unary_predicate_op(KernelContext& ctx, const char* name, const Tensor& in, Tensor& out, Pred pred) {
  if (!resize_output_like(ctx, name, out, in) || !check_truth_out(ctx, name, out)) return;
  const TruthWriter write(out);
  dispatch_dtype<kAllTypes>(ctx, name, in.scalar_type(), [&](auto tag) {
    using T = decltype(tag);
    const Elements<T> x = elements_of<T>(in);
    for (size_t i = 0; i < in.numel(); ++i) write(i, pred(x[i]));
  });
}

/// The kernel body of a unary predicate with arguments [self, out, out].
template <typename Pred>
void unary_predicate_kernel(KernelContext& ctx, const char* name, Span<EValue*> args, Pred pred) {
  ArgReader r(ctx, name, args, 3);
  Tensor* in = r.tensor(0);
  Tensor* out = r.tensor(1);
  if (!r.ok()) return;
  unary_predicate_op(ctx, name, *in, *out, pred);
}

/// out = pred(a, b) with broadcasting, both sides converted to `compute` first (any of
/// kAllTypes; it need not be the dtype of either input: int8 vs uint8 compares as int16).
template <typename Pred>
void binary_predicate_op(KernelContext& ctx, const char* name, const Tensor& a, const Tensor& b,
                         Tensor& out, ScalarType compute, Pred pred) {
  if (!resize_to_broadcast(ctx, name, a, b, out) || !check_truth_out(ctx, name, out)) return;
  const TruthWriter write(out);
  const Tensor* const inputs[2] = {&a, &b};
  const size_t n = out.numel();
  if (a.scalar_type() == compute && b.scalar_type() == compute) {
    dispatch_dtype<kAllTypes>(ctx, name, compute, [&](auto tag) {
      using T = decltype(tag);
      const Elements<T> x = elements_of<T>(a);
      const Elements<T> y = elements_of<T>(b);
      if (a.numel() == n && b.numel() == n) {
        for (size_t i = 0; i < n; ++i) write(i, pred(x[i], y[i]));
      } else {
        for_each_broadcast<2>(out.sizes(), inputs, [&](size_t i, const size_t* k) { write(i, pred(x[k[0]], y[k[1]])); });
      }
    });
    return;
  }
  if (!is_computable_type(a.scalar_type()) || !is_computable_type(b.scalar_type()) ||
      !visit_dtype<kAllTypes>(compute, [&](auto tag) {
        using T = decltype(tag);
        for_each_broadcast<2>(out.sizes(), inputs, [&](size_t i, const size_t* k) {
          write(i, pred(load_as<T>(a.scalar_type(), a.const_data_ptr(), k[0]),
                        load_as<T>(b.scalar_type(), b.const_data_ptr(), k[1])));
        });
      })) {
    KILN_KERNEL_FAIL(ctx, Error::InvalidType, name, "inputs %s and %s are not supported",
                     scalar_type_name(a.scalar_type()), scalar_type_name(b.scalar_type()));
  }
}

/// The kernel body of a comparison of two tensors, arguments [self, other, out, out]:
/// both sides are converted to result_type(self, other), as in PyTorch.
template <typename Cmp>
void compare_tensor_kernel(KernelContext& ctx, const char* name, Span<EValue*> args, Cmp cmp) {
  ArgReader r(ctx, name, args, 4);
  Tensor* a = r.tensor(0);
  Tensor* b = r.tensor(1);
  Tensor* out = r.tensor(2);
  if (!r.ok()) return;
  binary_predicate_op(ctx, name, *a, *b, *out, result_type(*a, *b), cmp);
}

/// The kernel body of a logical op, arguments [self, other, out, out]: each element is
/// true when non-zero (NaN included), as in PyTorch.
template <typename Op>
void logical_binary_kernel(KernelContext& ctx, const char* name, Span<EValue*> args, Op op) {
  ArgReader r(ctx, name, args, 4);
  Tensor* a = r.tensor(0);
  Tensor* b = r.tensor(1);
  Tensor* out = r.tensor(2);
  if (!r.ok()) return;
  binary_predicate_op(ctx, name, *a, *b, *out, ScalarType::Bool, op);
}

}  // namespace portable
}  // namespace kiln
