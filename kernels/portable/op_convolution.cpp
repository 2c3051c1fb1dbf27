// aten::convolution.out(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride,
//     SymInt[] padding, SymInt[] dilation, bool transposed, SymInt[] output_padding,
//     SymInt groups, *, Tensor(a!) out)
//
// 2-D (NCHW) and 1-D (NCL, run as 2-D with height 1) convolutions, Float or Double,
// direct and transposed. A transposed convolution is the adjoint of the direct one
// whose input has out's shape (util/conv2d_transpose.h): its weight is
// [in_channels, out_channels / groups, kh, kw] and out's size is
// (in - 1) * stride - 2 * padding + dilation * (kernel - 1) + output_padding + 1.
#include "kernels/portable/util/conv2d_transpose.h"
#include "kernels/portable/util/conv_args.h"
#include "kernels/portable/util/dtype_dispatch.h"
#include "kernels/portable/util/kernel_args.h"

namespace kiln {
namespace portable {

namespace {

constexpr const char* kName = "aten::convolution.out";

/// Size of a transposed convolution's output along one dimension.
int64_t transposed_size(int64_t in, int64_t stride, int64_t pad, int64_t dilation, int64_t kernel,
                        int64_t output_padding) {
  return (in - 1) * stride - 2 * pad + dilation * (kernel - 1) + output_padding + 1;
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
  const Span<const int64_t> output_padding = r.int_list(7);
  const int64_t groups = r.int_value(8);
  Tensor* out = r.tensor(9);
  if (!r.ok()) return;
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
  // s describes the direct convolution: for a transposed one, its input side is out.
  Conv2dShape s{};
  int64_t out_pad_h = 0, out_pad_w = 0;
  if (!read_spatial_pair(ctx, kName, stride, spatial, 1, "stride", 1, &s.stride_h, &s.stride_w) ||
      !read_spatial_pair(ctx, kName, padding, spatial, 0, "padding", 0, &s.pad_h, &s.pad_w) ||
      !read_spatial_pair(ctx, kName, dilation, spatial, 1, "dilation", 1, &s.dilation_h, &s.dilation_w) ||
      (transposed &&
       !read_spatial_pair(ctx, kName, output_padding, spatial, 0, "output_padding", 0, &out_pad_h, &out_pad_w))) {
    return;
  }
  const int64_t channels = in->size(1);
  const int64_t filters = weight->size(0);  // the small side's channels
  const int64_t per_group = weight->size(1);
  KILN_KERNEL_CHECK(ctx, groups >= 1 && groups <= INT32_MAX && channels % groups == 0 && filters % groups == 0,
                    Error::InvalidArgument, kName,
                    "groups %lld must divide the input channels %lld and weight's dim 0 %lld",
                    static_cast<long long>(groups), static_cast<long long>(channels),
                    static_cast<long long>(filters));
  KILN_KERNEL_CHECK(ctx, (transposed ? filters == channels : per_group * groups == channels),
                    Error::InvalidArgument, kName, "weight %s does not fit %lld input channels in %lld groups",
                    ShapeString(*weight).c_str(), static_cast<long long>(channels), static_cast<long long>(groups));
  KILN_KERNEL_CHECK(ctx, out_pad_h < s.stride_h || out_pad_h < s.dilation_h, Error::InvalidArgument, kName,
                    "output_padding must be smaller than stride or dilation");
  KILN_KERNEL_CHECK(ctx, out_pad_w < s.stride_w || out_pad_w < s.dilation_w, Error::InvalidArgument, kName,
                    "output_padding must be smaller than stride or dilation");
  s.batch = in->size(0);
  s.groups = groups;
  s.kernel_h = spatial == 2 ? weight->size(2) : 1;
  s.kernel_w = weight->size(-1);
  const int64_t in_h = spatial == 2 ? in->size(2) : 1;
  const int64_t in_w = in->size(-1);
  const int64_t out_channels = transposed ? per_group * groups : filters;
  KILN_KERNEL_CHECK(ctx, bias == nullptr || (bias->dim() == 1 && bias->size(0) == out_channels),
                    Error::InvalidArgument, kName, "bias %s must be [%lld]",
                    ShapeString(*bias).c_str(), static_cast<long long>(out_channels));
  const int64_t span_h = s.dilation_h * (s.kernel_h - 1) + 1;
  const int64_t span_w = s.dilation_w * (s.kernel_w - 1) + 1;
  int64_t out_h = 0, out_w = 0;
  if (transposed) {
    out_h = transposed_size(in_h, s.stride_h, s.pad_h, s.dilation_h, s.kernel_h, out_pad_h);
    out_w = transposed_size(in_w, s.stride_w, s.pad_w, s.dilation_w, s.kernel_w, out_pad_w);
    s.in_channels = out_channels;
    s.in_h = out_h;
    s.in_w = out_w;
    s.out_channels = channels;
    s.out_h = in_h;
    s.out_w = in_w;
  } else {
    KILN_KERNEL_CHECK(ctx, in_h + 2 * s.pad_h >= span_h && in_w + 2 * s.pad_w >= span_w,
                      Error::InvalidArgument, kName, "kernel %s is larger than the padded input %s",
                      ShapeString(*weight).c_str(), ShapeString(*in).c_str());
    out_h = (in_h + 2 * s.pad_h - span_h) / s.stride_h + 1;
    out_w = (in_w + 2 * s.pad_w - span_w) / s.stride_w + 1;
    s.in_channels = channels;
    s.in_h = in_h;
    s.in_w = in_w;
    s.out_channels = out_channels;
    s.out_h = out_h;
    s.out_w = out_w;
  }
  KILN_KERNEL_CHECK(ctx, out_h > 0 && out_w > 0 && out_h <= INT32_MAX && out_w <= INT32_MAX,
                    Error::InvalidArgument, kName, "output size %lld x %lld is invalid",
                    static_cast<long long>(out_h), static_cast<long long>(out_w));
  SizesType sizes[4] = {static_cast<SizesType>(s.batch), static_cast<SizesType>(out_channels),
                        static_cast<SizesType>(out_h), static_cast<SizesType>(out_w)};
  if (spatial == 1) sizes[2] = static_cast<SizesType>(out_w);
  if (!resize_output(ctx, kName, *out, {sizes, static_cast<size_t>(in->dim())})) return;
  KILN_KERNEL_CHECK(ctx, out->const_data_ptr() != in->const_data_ptr() || out->numel() == 0,
                    Error::InvalidArgument, kName, "out must not share memory with input");
  dispatch_dtype<kFloatTypes>(ctx, kName, in->scalar_type(), [&](auto tag) {
    using T = decltype(tag);
    const T* b = bias != nullptr ? bias->const_data_ptr<T>() : nullptr;
    if (transposed) {
      conv2d_transpose<T>(s, in->const_data_ptr<T>(), weight->const_data_ptr<T>(), b, out->mutable_data_ptr<T>());
    } else {
      conv2d<T>(s, in->const_data_ptr<T>(), weight->const_data_ptr<T>(), b, out->mutable_data_ptr<T>());
    }
  });
}

}  // namespace portable
}  // namespace kiln
