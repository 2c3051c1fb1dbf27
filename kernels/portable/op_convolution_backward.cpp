// aten::convolution_backward.out(Tensor grad_output, Tensor input, Tensor weight,
//     SymInt[]? bias_sizes, SymInt[] stride, SymInt[] padding, SymInt[] dilation,
//     bool transposed, SymInt[] output_padding, SymInt groups, bool[3] output_mask, *,
//     Tensor(a!) out0, Tensor(b!) out1, Tensor(c!) out2)
//
// The gradients of aten::convolution (1-D or 2-D, direct or transposed, Float or
// Double) with respect to input (out0), weight (out1) and bias (out2, summed over
// batch and positions), each computed when its output_mask entry is set. In terms of
// the direct convolution whose large side is the direct input / the transposed output
// (util/conv2d_transpose.h): a direct convolution's input gradient is a transposed
// convolution of grad_output, a transposed one's is a direct convolution.
#include "kernels/portable/util/conv2d_transpose.h"
#include "kernels/portable/util/conv_args.h"
#include "kernels/portable/util/dtype_dispatch.h"

namespace kiln {
namespace portable {

namespace {

constexpr const char* kName = "aten::convolution_backward.out";

/// True when a direct convolution of a `large` input has `small` outputs along one dim,
/// leaving `extra` positions unused at the end when transposed (its output_padding).
bool sizes_match(int64_t large, int64_t small, int64_t stride, int64_t pad, int64_t kernel, int64_t dilation,
                 bool transposed, int64_t extra) {
  const int64_t room = large + 2 * pad - (kernel - 1) * dilation - 1;  // where the last window may start
  if (room < 0 || small <= 0) return false;
  const int64_t left = room - (small - 1) * stride;
  return transposed ? left == extra : (left >= 0 && left < stride);
}

}  // namespace

void convolution_backward_out(KernelContext& ctx, Span<EValue*> args) {
  ArgReader r(ctx, kName, args, 15);
  Tensor* grad_out = r.tensor(0);
  Tensor* in = r.tensor(1);
  Tensor* weight = r.tensor(2);
  const Span<const int64_t> stride = r.int_list(4);
  const Span<const int64_t> padding = r.int_list(5);
  const Span<const int64_t> dilation = r.int_list(6);
  const bool transposed = r.bool_value(7);
  const Span<const int64_t> output_padding = r.int_list(8);
  const int64_t groups = r.int_value(9);
  EValue* mask_value = args.size() == 15 ? args[10] : nullptr;
  Tensor* grad_in = r.tensor(11);
  Tensor* grad_weight = r.tensor(12);
  Tensor* grad_bias = r.tensor(13);
  if (!r.ok()) return;
  KILN_KERNEL_CHECK(ctx, mask_value != nullptr && mask_value->is_bool_list() && mask_value->to_bool_list().size() == 3,
                    Error::InvalidArgument, kName, "output_mask must be a list of 3 bools");
  const Span<const bool> mask = mask_value->to_bool_list();
  KILN_KERNEL_CHECK(ctx, (in->dim() == 3 || in->dim() == 4) && weight->dim() == in->dim() && grad_out->dim() == in->dim(),
                    Error::InvalidArgument, kName, "input %s, weight %s and grad_output %s must all be 3-D or 4-D",
                    ShapeString(*in).c_str(), ShapeString(*weight).c_str(), ShapeString(*grad_out).c_str());
  if (!check_same_dtype(ctx, kName, *in, *weight, "input", "weight") ||
      !check_same_dtype(ctx, kName, *in, *grad_out, "input", "grad_output")) {
    return;
  }
  const int32_t spatial = in->dim() - 2;
  // s: the direct convolution. Its large side is input (direct) or grad_output (transposed).
  const Tensor& large = transposed ? *grad_out : *in;
  const Tensor& small = transposed ? *in : *grad_out;
  Conv2dShape s{};
  int64_t extra_h = 0, extra_w = 0;  // output_padding of a transposed convolution
  if (!read_spatial_pair(ctx, kName, stride, spatial, 1, "stride", 1, &s.stride_h, &s.stride_w) ||
      !read_spatial_pair(ctx, kName, padding, spatial, 0, "padding", 0, &s.pad_h, &s.pad_w) ||
      !read_spatial_pair(ctx, kName, dilation, spatial, 1, "dilation", 1, &s.dilation_h, &s.dilation_w) ||
      (transposed && !read_spatial_pair(ctx, kName, output_padding, spatial, 0, "output_padding", 0, &extra_h, &extra_w))) {
    return;
  }
  s.batch = in->size(0);
  s.groups = groups;
  s.in_channels = large.size(1);
  s.in_h = spatial == 2 ? large.size(2) : 1;
  s.in_w = large.size(-1);
  s.out_channels = small.size(1);
  s.out_h = spatial == 2 ? small.size(2) : 1;
  s.out_w = small.size(-1);
  s.kernel_h = spatial == 2 ? weight->size(2) : 1;
  s.kernel_w = weight->size(-1);
  const bool shapes_ok = groups >= 1 && groups <= INT32_MAX && s.in_channels % groups == 0 && s.out_channels % groups == 0 &&
                         grad_out->size(0) == in->size(0) && weight->size(0) == s.out_channels &&
                         weight->size(1) * groups == s.in_channels &&
                         sizes_match(s.in_h, s.out_h, s.stride_h, s.pad_h, s.kernel_h, s.dilation_h, transposed, extra_h) &&
                         sizes_match(s.in_w, s.out_w, s.stride_w, s.pad_w, s.kernel_w, s.dilation_w, transposed, extra_w);
  KILN_KERNEL_CHECK(ctx, shapes_ok, Error::InvalidArgument, kName,
                    "grad_output %s, input %s and weight %s do not form a %s convolution with %lld groups",
                    ShapeString(*grad_out).c_str(), ShapeString(*in).c_str(), ShapeString(*weight).c_str(),
                    transposed ? "transposed" : "direct", static_cast<long long>(groups));
  const SizesType bias_size = grad_out->size(1);
  if ((mask[0] && (!check_same_dtype(ctx, kName, *in, *grad_in, "input", "out0") ||
                   !resize_output_like(ctx, kName, *grad_in, *in))) ||
      (mask[1] && (!check_same_dtype(ctx, kName, *in, *grad_weight, "input", "out1") ||
                   !resize_output_like(ctx, kName, *grad_weight, *weight))) ||
      (mask[2] && (!check_same_dtype(ctx, kName, *in, *grad_bias, "input", "out2") ||
                   !resize_output(ctx, kName, *grad_bias, {&bias_size, 1})))) {
    return;
  }
  dispatch_dtype<kFloatTypes>(ctx, kName, in->scalar_type(), [&](auto tag) {
    using T = decltype(tag);
    const T* w = weight->const_data_ptr<T>();
    if (mask[0] && transposed) {
      conv2d<T>(s, grad_out->const_data_ptr<T>(), w, nullptr, grad_in->mutable_data_ptr<T>());
    } else if (mask[0]) {
      conv2d_transpose<T>(s, grad_out->const_data_ptr<T>(), w, nullptr, grad_in->mutable_data_ptr<T>());
    }
    if (mask[1]) {
      conv2d_weight_grad<T>(s, large.const_data_ptr<T>(), small.const_data_ptr<T>(), grad_weight->mutable_data_ptr<T>());
    }
    if (mask[2]) {
      const size_t channels = static_cast<size_t>(bias_size);
      const size_t plane = channels > 0 && s.batch > 0 ? grad_out->numel() / (channels * static_cast<size_t>(s.batch)) : 0;
      T* gb = grad_bias->mutable_data_ptr<T>();
      for (size_t c = 0; c < channels; ++c) {
        double sum = 0;
        for (int64_t n = 0; n < s.batch; ++n) {
          const T* g = grad_out->const_data_ptr<T>() + (static_cast<size_t>(n) * channels + c) * plane;
          for (size_t i = 0; i < plane; ++i) sum += static_cast<double>(g[i]);
        }
        gb[c] = static_cast<T>(sum);
      }
    }
  });
}

}  // namespace portable
}  // namespace kiln
