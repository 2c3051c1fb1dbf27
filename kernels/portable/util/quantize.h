// Shared pieces of the quantized_decomposed quantize / dequantize kernels.
//
// The arithmetic follows PyTorch's reference implementation of these ops exactly:
//   quantize:   q = clamp(round_half_even(x * (1 / scale)) + zero_point, qmin, qmax)
//   dequantize: x = (q - zero_point) * scale
// in float32 when scale is a Python float or a float32 tensor (double for float64
// scales), so that Kiln and PyTorch produce the same integers.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

#include "kernels/portable/util/dtype_dispatch.h"

namespace kiln {
namespace portable {

/// True for the integer dtypes a quantized tensor may have.
inline bool is_quantized_dtype(ScalarType t) {
  return t == ScalarType::Byte || t == ScalarType::Char || t == ScalarType::Short ||
         t == ScalarType::Int || t == ScalarType::UInt16;
}

/// Checks the `dtype` argument against the quantized tensor's dtype and that
/// [qmin, qmax] is a non-empty range inside that dtype.
inline bool check_quant_params(KernelContext& ctx, const char* op, const Tensor& quantized,
                               int64_t dtype_arg, int64_t qmin, int64_t qmax) {
  const ScalarType t = quantized.scalar_type();
  if (!is_quantized_dtype(t) || static_cast<int64_t>(t) != dtype_arg) {
    KILN_KERNEL_FAIL(ctx, Error::InvalidType, op,
                     "quantized tensor is %s, dtype argument is %lld (need matching Byte, Char, Short, Int or UInt16)",
                     scalar_type_name(t), static_cast<long long>(dtype_arg));
    return false;
  }
  int64_t lo = 0;
  int64_t hi = 0;
  switch (t) {
    case ScalarType::Byte: lo = 0; hi = 255; break;
    case ScalarType::Char: lo = -128; hi = 127; break;
    case ScalarType::Short: lo = -32768; hi = 32767; break;
    case ScalarType::UInt16: lo = 0; hi = 65535; break;
    default: lo = INT32_MIN; hi = INT32_MAX; break;
  }
  if (qmin < lo || qmax > hi || qmin > qmax) {
    KILN_KERNEL_FAIL(ctx, Error::InvalidArgument, op, "quant range [%lld, %lld] is invalid for %s",
                     static_cast<long long>(qmin), static_cast<long long>(qmax), scalar_type_name(t));
    return false;
  }
  return true;
}

/// Calls f(Q{}) with the C++ type of a quantized dtype (see is_quantized_dtype).
template <typename F>
void visit_quantized(ScalarType t, F&& f) {
  switch (t) {
    case ScalarType::Byte: f(uint8_t{}); break;
    case ScalarType::Char: f(int8_t{}); break;
    case ScalarType::Short: f(int16_t{}); break;
    case ScalarType::Int: f(int32_t{}); break;
    case ScalarType::UInt16: f(uint16_t{}); break;
    default: break;
  }
}

/// One quantized value; F is the compute type (float or double). `inv_scale` must be
/// finite (check_inv_scale). A NaN input quantizes as 0.0 does, to the zero point
/// (clamped to [qmin, qmax]): PyTorch leaves NaN to the float-to-int conversion, which
/// is undefined behaviour in C++; the zero point is the one value that dequantizes back
/// to a neutral 0.0. Infinities saturate at qmin / qmax.
template <typename Q, typename F>
inline Q quantize_value(F x, F inv_scale, F zero_point, F qmin, F qmax) {
  F q = std::nearbyint(x * inv_scale) + zero_point;  // nearbyint: ties to even, like torch.round
  if (std::isnan(q)) q = zero_point;
  q = q < qmin ? qmin : q;
  q = q > qmax ? qmax : q;
  return static_cast<Q>(q);
}

/// Quantizes the float32 elements of `in` into `out` (a quantized dtype, same element
/// count and layout) with one scale and zero point, as PyTorch does: the reciprocal of
/// `scale` in double (a Python float), used in float32. The caller has checked the
/// arguments (check_quant_params, check_scale).
inline void quantize_floats_per_tensor(const Tensor& in, Tensor& out, double scale, int64_t zero_point,
                                       int64_t qmin, int64_t qmax) {
  const float inv_scale = static_cast<float>(1.0 / scale);
  const float zp = static_cast<float>(zero_point);
  const float lo = static_cast<float>(qmin);
  const float hi = static_cast<float>(qmax);
  const float* x = in.const_data_ptr<float>();
  const size_t n = in.numel();
  visit_quantized(out.scalar_type(), [&](auto tag) {
    using Q = decltype(tag);
    Q* q = out.mutable_data_ptr<Q>();
    for (size_t i = 0; i < n; ++i) q[i] = quantize_value<Q, float>(x[i], inv_scale, zp, lo, hi);
  });
}

/// True if `scale` (named `what`[`index`] in the message) can quantize in the compute
/// type F: positive, finite, and with a finite reciprocal. A scale below 1 / FLT_MAX
/// (~2.9e-39 for float32) has none, and x * inf would turn every zero input into NaN.
/// Otherwise fails `ctx` with InvalidArgument and returns false. Checked once, before the
/// loop, so that the loop itself never sees an infinite inv_scale.
template <typename F>
inline bool check_scale(KernelContext& ctx, const char* op, double scale, const char* what,
                        size_t index) {
  if (!(scale > 0) || !std::isfinite(scale)) {
    KILN_KERNEL_FAIL(ctx, Error::InvalidArgument, op, "%s[%zu] must be positive and finite, got %g",
                     what, index, scale);
    return false;
  }
  if (1.0 / scale > static_cast<double>(std::numeric_limits<F>::max())) {
    KILN_KERNEL_FAIL(ctx, Error::InvalidArgument, op,
                     "%s[%zu] = %g is too small: 1 / scale overflows %s", what, index, scale,
                     sizeof(F) == 4 ? "float32" : "float64");
    return false;
  }
  return true;
}


/// Per-channel parameters: `axis` normalised, channel count and the size of the
/// dimensions after it (so element i belongs to channel (i / inner) % channels).
struct ChannelLayout {
  int32_t axis = 0;
  size_t channels = 1;
  size_t inner = 1;
};

/// Checks scales (Float or Double) and zero_points (Long or Int, may be null) are 1-D with
/// one entry per channel of `t` along `axis`.
inline bool check_channel_params(KernelContext& ctx, const char* op, const Tensor& t, const Tensor& scales,
                                 const Tensor* zero_points, int64_t axis, ChannelLayout* layout) {
  if (!normalize_dim(ctx, op, axis, t.dim(), &layout->axis)) return false;
  if (t.dim() == 0) {
    KILN_KERNEL_FAIL(ctx, Error::InvalidArgument, op, "per-channel quantization needs a tensor with dims");
    return false;
  }
  layout->channels = static_cast<size_t>(t.size(layout->axis));
  layout->inner = 1;
  for (int32_t d = layout->axis + 1; d < t.dim(); ++d) layout->inner *= static_cast<size_t>(t.size(d));
  if (scales.dim() != 1 || static_cast<size_t>(scales.numel()) != layout->channels ||
      (scales.scalar_type() != ScalarType::Float && scales.scalar_type() != ScalarType::Double)) {
    KILN_KERNEL_FAIL(ctx, Error::InvalidArgument, op, "scales %s (%s) must be [%zu] Float or Double",
                     ShapeString(scales).c_str(), scalar_type_name(scales.scalar_type()), layout->channels);
    return false;
  }
  if (zero_points != nullptr &&
      (zero_points->dim() != 1 || zero_points->numel() != layout->channels ||
       (zero_points->scalar_type() != ScalarType::Long && zero_points->scalar_type() != ScalarType::Int))) {
    KILN_KERNEL_FAIL(ctx, Error::InvalidArgument, op, "zero_points %s (%s) must be [%zu] Long or Int",
                     ShapeString(*zero_points).c_str(), scalar_type_name(zero_points->scalar_type()),
                     layout->channels);
    return false;
  }
  return true;
}

/// zero_points[c] as int64 (0 without zero points).
inline int64_t channel_zero_point(const Tensor* zero_points, size_t c) {
  if (zero_points == nullptr) return 0;
  return zero_points->scalar_type() == ScalarType::Long ? zero_points->const_data_ptr<int64_t>()[c]
                                                        : zero_points->const_data_ptr<int32_t>()[c];
}

}  // namespace portable
}  // namespace kiln
