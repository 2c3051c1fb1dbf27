// Softmax and log-softmax along one dimension, shared by _softmax and _log_softmax.
#pragma once

#include <cmath>
#include <cstddef>

#include "kernels/portable/util/kernel_args.h"

namespace kiln {
namespace portable {

/// The input viewed as [outer, n, inner] with the softmax dimension in the middle.
struct SoftmaxShape {
  size_t outer = 1;
  size_t n = 1;
  size_t inner = 1;
};

inline SoftmaxShape softmax_shape(const Tensor& t, int32_t dim) {
  SoftmaxShape s;
  for (int32_t d = 0; d < t.dim(); ++d) {
    const size_t size = static_cast<size_t>(t.size(d));
    if (d < dim) s.outer *= size;
    if (d == dim) s.n = size;
    if (d > dim) s.inner *= size;
  }
  return s;
}

/// out = softmax(in) (or log_softmax when `log`) along the middle dimension of `s`.
/// The maximum is subtracted first so that exp never overflows; sums accumulate in double.
template <typename T>
void softmax_along(const T* in, T* out, const SoftmaxShape& s, bool log) {
  if (s.n == 0) return;
  for (size_t o = 0; o < s.outer; ++o) {
    for (size_t i = 0; i < s.inner; ++i) {
      const T* x = in + o * s.n * s.inner + i;
      T* y = out + o * s.n * s.inner + i;
      const size_t stride = s.inner;
      T max = x[0];
      for (size_t k = 1; k < s.n; ++k) {
        const T v = x[k * stride];
        if (v > max || v != v) max = v;
      }
      double sum = 0;
      if (log) {
        for (size_t k = 0; k < s.n; ++k) sum += std::exp(x[k * stride] - max);
        const T log_sum = static_cast<T>(std::log(sum));
        for (size_t k = 0; k < s.n; ++k) y[k * stride] = x[k * stride] - max - log_sum;
      } else {
        for (size_t k = 0; k < s.n; ++k) {
          const T e = std::exp(x[k * stride] - max);
          y[k * stride] = e;
          sum += e;
        }
        const T scale = static_cast<T>(1.0 / sum);
        for (size_t k = 0; k < s.n; ++k) y[k * stride] *= scale;
      }
    }
  }
}

/// The kernel body of _softmax.out / _log_softmax.out: [self, dim, half_to_float, out, out].
inline void softmax_kernel(KernelContext& ctx, const char* name, Span<EValue*> args, bool log) {
  ArgReader r(ctx, name, args, 5);
  Tensor* in = r.tensor(0);
  const int64_t dim_arg = r.int_value(1);
  const bool half_to_float = r.bool_value(2);
  Tensor* out = r.tensor(3);
  if (!r.ok()) return;
  KILN_KERNEL_CHECK(ctx, !half_to_float, Error::NotSupported, name,
                    "half_to_float=true needs a Half input, which is not supported");
  int32_t dim = 0;
  if (!normalize_dim(ctx, name, dim_arg, in->dim(), &dim)) return;
  if (!check_same_dtype(ctx, name, *in, *out, "self", "out")) return;
  if (!resize_output_like(ctx, name, *out, *in)) return;
  const SoftmaxShape shape = softmax_shape(*in, dim);
  if (in->scalar_type() == ScalarType::Float) {
    softmax_along(in->const_data_ptr<float>(), out->mutable_data_ptr<float>(), shape, log);
  } else if (in->scalar_type() == ScalarType::Double) {
    softmax_along(in->const_data_ptr<double>(), out->mutable_data_ptr<double>(), shape, log);
  } else {
    KILN_KERNEL_FAIL(ctx, Error::InvalidType, name, "dtype %s is not supported (Float, Double)",
                     scalar_type_name(in->scalar_type()));
  }
}

}  // namespace portable
}  // namespace kiln
