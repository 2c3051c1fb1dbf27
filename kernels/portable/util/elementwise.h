// Shared bodies of the elementwise kernels (unary, tensor-scalar, tensor-tensor).
//
// Results are computed in the out tensor's dtype T. When an input already has dtype T
// it is read directly (the fast, vectorisable path); otherwise each element is
// converted with load_as<T>. Ops are generic callables instantiated per dtype.
#pragma once

#include <cstddef>
#include <type_traits>

#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/dtype_dispatch.h"
#include "kernels/portable/util/kernel_args.h"

namespace kiln {
namespace portable {

/// out[i] = op(in[i]) for T = out's dtype (which must be in Set and a valid cast target
/// of in's dtype). Resizes out to in's shape.
template <uint32_t Set, typename Op>
void unary_op(KernelContext& ctx, const char* name, const Tensor& in, Tensor& out, Op op) {
  if (!resize_output_like(ctx, name, out, in)) return;
  if (!can_cast(in.scalar_type(), out.scalar_type()) || !is_computable_type(in.scalar_type())) {
    KILN_KERNEL_FAIL(ctx, Error::InvalidType, name, "cannot write a %s input to a %s out",
                     scalar_type_name(in.scalar_type()), scalar_type_name(out.scalar_type()));
    return;
  }
  dispatch_dtype<Set>(ctx, name, out.scalar_type(), [&](auto tag) {
    using T = decltype(tag);
    T* o = out.mutable_data_ptr<T>();
    const size_t n = out.numel();
    if (in.scalar_type() == out.scalar_type()) {
      const Elements<T> x = elements_of<T>(in);
      for (size_t i = 0; i < n; ++i) o[i] = static_cast<T>(op(x[i]));
    } else {
      for (size_t i = 0; i < n; ++i) {
        o[i] = static_cast<T>(op(load_as<T>(in.scalar_type(), in.const_data_ptr(), i)));
      }
    }
  });
}

/// A unary op's input and out: any dim order, as long as both have the same one (an
/// elementwise op walks both in memory order; ExecuTorch's Cortex-M programs keep float
/// activations between int8 kernels channels-last). Null (kernel failed) otherwise.
inline bool unary_tensors(ArgReader& r, size_t in_index, size_t out_index, Tensor** in, Tensor** out) {
  *in = r.tensor_any_layout(in_index);
  *out = r.tensor_any_layout(out_index);
  if (!r.ok()) return false;
  bool same = (*in)->dim() == (*out)->dim();
  for (int32_t d = 0; same && d < (*in)->dim(); ++d) same = (*in)->dim_order()[d] == (*out)->dim_order()[d];
  if (!same) {
    KILN_KERNEL_FAIL(r.context(), Error::NotSupported, r.op(), "input and out must have the same dim order");
    return false;
  }
  return true;
}

/// The kernel body of a unary op with arguments [self, out, out].
template <uint32_t Set, typename Op>
void unary_kernel(KernelContext& ctx, const char* name, Span<EValue*> args, Op op) {
  ArgReader r(ctx, name, args, 3);
  Tensor* in = nullptr;
  Tensor* out = nullptr;
  if (!unary_tensors(r, 0, 1, &in, &out)) return;
  unary_op<Set>(ctx, name, *in, *out, op);
}

/// Resizes `out` to the broadcast shape of `a` and `b`; fails the kernel (InvalidArgument,
/// both shapes logged) when they do not broadcast.
inline bool resize_to_broadcast(KernelContext& ctx, const char* name, const Tensor& a, const Tensor& b,
                                Tensor& out) {
  SizesType sizes[kTensorMaxDim];
  int32_t rank = 0;
  if (!broadcast_shapes(a.sizes(), b.sizes(), sizes, &rank)) {
    KILN_KERNEL_FAIL(ctx, Error::InvalidArgument, name, "shapes %s and %s do not broadcast",
                     ShapeString(a).c_str(), ShapeString(b).c_str());
    return false;
  }
  return resize_output(ctx, name, out, {sizes, static_cast<size_t>(rank)});
}

/// out = op(a, b) with broadcasting, computed in out's dtype T (in Set). Resizes out to
/// the broadcast shape; the promoted dtype of a and b must be castable to out's.
template <uint32_t Set, typename Op>
void binary_op(KernelContext& ctx, const char* name, const Tensor& a, const Tensor& b,
               Tensor& out, Op op) {
  if (!resize_to_broadcast(ctx, name, a, b, out)) return;
  const ScalarType common = promote_types(a.scalar_type(), b.scalar_type());
  if (!is_computable_type(a.scalar_type()) || !is_computable_type(b.scalar_type()) ||
      !can_cast(common, out.scalar_type())) {
    KILN_KERNEL_FAIL(ctx, Error::InvalidType, name, "inputs %s and %s cannot be written to a %s out",
                     scalar_type_name(a.scalar_type()), scalar_type_name(b.scalar_type()),
                     scalar_type_name(out.scalar_type()));
    return;
  }
  dispatch_dtype<Set>(ctx, name, out.scalar_type(), [&](auto tag) {
    using T = decltype(tag);
    T* o = out.mutable_data_ptr<T>();
    const size_t n = out.numel();
    const Tensor* const inputs[2] = {&a, &b};
    if (a.scalar_type() == out.scalar_type() && b.scalar_type() == out.scalar_type()) {
      const Elements<T> x = elements_of<T>(a);
      const Elements<T> y = elements_of<T>(b);
      // Fast paths: equal shapes, or one side a single element.
      if (a.numel() == n && b.numel() == n) {
        for (size_t i = 0; i < n; ++i) o[i] = static_cast<T>(op(x[i], y[i]));
      } else if (a.numel() == n && b.numel() == 1) {
        const T s = y[0];
        for (size_t i = 0; i < n; ++i) o[i] = static_cast<T>(op(x[i], s));
      } else if (a.numel() == 1 && b.numel() == n) {
        const T s = x[0];
        for (size_t i = 0; i < n; ++i) o[i] = static_cast<T>(op(s, y[i]));
      } else {
        for_each_broadcast<2>(out.sizes(), inputs, [&](size_t i, const size_t* k) {
          o[i] = static_cast<T>(op(x[k[0]], y[k[1]]));
        });
      }
      return;
    }
    // A one-element operand of another dtype (e.g. a Double constant) is converted once.
    if (a.scalar_type() == out.scalar_type() && a.numel() == n && b.numel() == 1) {
      const Elements<T> x = elements_of<T>(a);
      const T s = load_as<T>(b.scalar_type(), b.const_data_ptr(), 0);
      for (size_t i = 0; i < n; ++i) o[i] = static_cast<T>(op(x[i], s));
      return;
    }
    if (b.scalar_type() == out.scalar_type() && b.numel() == n && a.numel() == 1) {
      const Elements<T> y = elements_of<T>(b);
      const T s = load_as<T>(a.scalar_type(), a.const_data_ptr(), 0);
      for (size_t i = 0; i < n; ++i) o[i] = static_cast<T>(op(s, y[i]));
      return;
    }
    for_each_broadcast<2>(out.sizes(), inputs, [&](size_t i, const size_t* k) {
      o[i] = static_cast<T>(op(load_as<T>(a.scalar_type(), a.const_data_ptr(), k[0]),
                               load_as<T>(b.scalar_type(), b.const_data_ptr(), k[1])));
    });
  });
}

/// The kernel body of a comparison with a Scalar, arguments [self, other, out, out]:
/// out[i] = cmp(self[i], other) written as bool (or 0/1 in out's dtype). Like PyTorch,
/// both sides are first converted to result_type(self, other): self's dtype when other
/// is a number of the same kind (an integral scalar wraps into an integer dtype, a float
/// scalar rounds to a float dtype), float32 for a float scalar against an integer or
/// bool tensor, int64 for an integral scalar against a bool tensor.
template <typename Cmp>
void compare_scalar_kernel(KernelContext& ctx, const char* name, Span<EValue*> args, Cmp cmp) {
  ArgReader r(ctx, name, args, 4);
  Tensor* in = r.tensor(0);
  const ScalarArg other = r.scalar_arg(1);  // an Int keeps all 64 bits
  Tensor* out = r.tensor(2);
  if (!r.ok()) return;
  if (!resize_output_like(ctx, name, *out, *in)) return;
  const size_t n = in->numel();
  dispatch_dtype<kAllTypes>(ctx, name, out->scalar_type(), [&](auto out_tag) {
    using O = decltype(out_tag);
    O* o = out->mutable_data_ptr<O>();
    dispatch_dtype<kAllTypes>(ctx, name, in->scalar_type(), [&](auto in_tag) {
      using T = decltype(in_tag);
      const Elements<T> x = elements_of<T>(*in);
      if constexpr (std::is_floating_point_v<T>) {
        const T s = other.as<T>();
        for (size_t i = 0; i < n; ++i) o[i] = static_cast<O>(cmp(x[i], s));
      } else if (!other.integral) {
        const float s = static_cast<float>(other.real);
        for (size_t i = 0; i < n; ++i) o[i] = static_cast<O>(cmp(static_cast<float>(x[i]), s));
      } else if constexpr (std::is_same_v<T, bool>) {
        for (size_t i = 0; i < n; ++i) o[i] = static_cast<O>(cmp(static_cast<int64_t>(x[i]), other.integer));
      } else {
        const T s = other.as<T>();  // wraps like PyTorch's conversion of the scalar
        for (size_t i = 0; i < n; ++i) o[i] = static_cast<O>(cmp(x[i], s));
      }
    });
  });
}

}  // namespace portable
}  // namespace kiln
