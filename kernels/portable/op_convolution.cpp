// aten::convolution.out(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride,
//     SymInt[] padding, SymInt[] dilation, bool transposed, SymInt[] output_padding,
//     SymInt groups, *, Tensor(a!) out)
//
// 2-D (NCHW) and 1-D (NCL, run as 2-D with height 1) convolutions, Float or Double.
// Transposed convolution is not supported.
#include "kernels/portable/util/conv2d.h"
#include "kernels/portable/util/kernel_args.h"

namespace kiln {
namespace portable {

namespace {

constexpr const char* kName = "aten::convolution.out";

/// Reads a per-spatial-dimension list (one value applies to all) into [h, w]. 1-D
/// convolutions get `neutral` (1 for stride/dilation, 0 for padding) as their height.
bool spatial_pair(KernelContext& ctx, Span<const int64_t> list, int32_t spatial_dims,
                  int64_t neutral, const char* what, int64_t min_value, int64_t* h, int64_t* w) {
  if (list.size() != 1 && list.size() != static_cast<size_t>(spatial_dims)) {
    KILN_KERNEL_FAIL(ctx, Error::InvalidArgument, kName, "%s has %zu entries for %d spatial dims",
                     what, list.size(), static_cast<int>(spatial_dims));
    return false;
  }
  *h = spatial_dims == 2 ? list[0] : neutral;
  *w = list[list.size() - 1];
  if ((spatial_dims == 2 && *h < min_value) || *w < min_value) {
    KILN_KERNEL_FAIL(ctx, Error::InvalidArgument, kName, "%s must be >= %lld", what,
                     static_cast<long long>(min_value));
    return false;
  }
  return true;
}

}  // namespace

void convolution_out(KernelContext& ctx, Span<EValue*> args) {
  ArgReader r(ctx, kName, args, 11);
  Tensor* in = r.tensor(0);
  Tensor* weight = r.tensor(1);
  Tensor* bias = r.optional_tensor(2);
  const Span<const int64_t> stride = r.int_list(3);
  const Span<const int64_t> padding = r.int_list(4);
  const Span<const int64_t> dilation = r.int_list(5);
  const bool transposed = r.bool_value(6);
  const int64_t groups = r.int_value(8);
  Tensor* out = r.tensor(9);
  if (!r.ok()) return;
  KILN_KERNEL_CHECK(ctx, !transposed, Error::NotSupported, kName,
                    "transposed convolution is not supported by the portable kernels");
  KILN_KERNEL_CHECK(ctx, in->dim() == 3 || in->dim() == 4, Error::InvalidArgument, kName,
                    "input must be 3-D (NCL) or 4-D (NCHW), got %s", ShapeString(*in).c_str());
  KILN_KERNEL_CHECK(ctx, weight->dim() == in->dim(), Error::InvalidArgument, kName,
                    "weight %s must have the input's rank %d", ShapeString(*weight).c_str(),
                    static_cast<int>(in->dim()));
  if (!check_same_dtype(ctx, kName, *in, *weight, "input", "weight") ||
      !check_same_dtype(ctx, kName, *in, *out, "input", "out") ||
      (bias != nullptr && !check_same_dtype(ctx, kName, *in, *bias, "input", "bias"))) {
    return;
  }
  const int32_t spatial = in->dim() - 2;
  Conv2dShape s{};
  s.batch = in->size(0);
  s.in_channels = in->size(1);
  s.in_h = spatial == 2 ? in->size(2) : 1;
  s.in_w = in->size(-1);
  s.out_channels = weight->size(0);
  s.kernel_h = spatial == 2 ? weight->size(2) : 1;
  s.kernel_w = weight->size(-1);
  s.groups = groups;
  if (!spatial_pair(ctx, stride, spatial, 1, "stride", 1, &s.stride_h, &s.stride_w) ||
      !spatial_pair(ctx, padding, spatial, 0, "padding", 0, &s.pad_h, &s.pad_w) ||
      !spatial_pair(ctx, dilation, spatial, 1, "dilation", 1, &s.dilation_h, &s.dilation_w)) {
    return;
  }
  KILN_KERNEL_CHECK(ctx, groups >= 1 && s.in_channels % groups == 0 && s.out_channels % groups == 0,
                    Error::InvalidArgument, kName,
                    "groups %lld must divide in channels %lld and out channels %lld",
                    static_cast<long long>(groups), static_cast<long long>(s.in_channels),
                    static_cast<long long>(s.out_channels));
  KILN_KERNEL_CHECK(ctx, weight->size(1) == s.in_channels / groups, Error::InvalidArgument, kName,
                    "weight %s needs %lld input channels per group", ShapeString(*weight).c_str(),
                    static_cast<long long>(s.in_channels / groups));
  KILN_KERNEL_CHECK(ctx, bias == nullptr || (bias->dim() == 1 && bias->size(0) == s.out_channels),
                    Error::InvalidArgument, kName, "bias %s must be [%lld]",
                    ShapeString(*bias).c_str(), static_cast<long long>(s.out_channels));
  const int64_t span_h = s.dilation_h * (s.kernel_h - 1) + 1;
  const int64_t span_w = s.dilation_w * (s.kernel_w - 1) + 1;
  s.out_h = (s.in_h + 2 * s.pad_h - span_h) / s.stride_h + 1;
  s.out_w = (s.in_w + 2 * s.pad_w - span_w) / s.stride_w + 1;
  KILN_KERNEL_CHECK(ctx, s.in_h + 2 * s.pad_h >= span_h && s.in_w + 2 * s.pad_w >= span_w,
                    Error::InvalidArgument, kName, "kernel %s is larger than the padded input %s",
                    ShapeString(*weight).c_str(), ShapeString(*in).c_str());
  SizesType sizes[4] = {static_cast<SizesType>(s.batch), static_cast<SizesType>(s.out_channels),
                        static_cast<SizesType>(s.out_h), static_cast<SizesType>(s.out_w)};
  if (spatial == 1) sizes[2] = static_cast<SizesType>(s.out_w);
  if (!resize_output(ctx, kName, *out, {sizes, static_cast<size_t>(in->dim())})) return;
  KILN_KERNEL_CHECK(ctx, out->const_data_ptr() != in->const_data_ptr() || out->numel() == 0,
                    Error::InvalidArgument, kName, "out must not share memory with input");
  if (in->scalar_type() == ScalarType::Float) {
    conv2d<float>(s, in->const_data_ptr<float>(), weight->const_data_ptr<float>(),
                  bias != nullptr ? bias->const_data_ptr<float>() : nullptr,
                  out->mutable_data_ptr<float>());
  } else if (in->scalar_type() == ScalarType::Double) {
    conv2d<double>(s, in->const_data_ptr<double>(), weight->const_data_ptr<double>(),
                   bias != nullptr ? bias->const_data_ptr<double>() : nullptr,
                   out->mutable_data_ptr<double>());
  } else {
    KILN_KERNEL_FAIL(ctx, Error::InvalidType, kName, "dtype %s is not supported (Float, Double)",
                     scalar_type_name(in->scalar_type()));
  }
}

}  // namespace portable
}  // namespace kiln
