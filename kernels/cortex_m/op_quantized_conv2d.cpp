// cortex_m::quantized_conv2d.out and cortex_m::quantized_conv2d_nhwc.out
//   (Tensor input, Tensor weight, Tensor? bias, int[] stride, int[] padding,
//    int[] dilation, int input_offset, int output_offset, Tensor requantize_multipliers,
//    Tensor requantize_shifts, int activation_min, int activation_max, Tensor scratch,
//    *, Tensor(a!) out)
//
// int8 convolution, CMSIS-NN arithmetic: acc = bias + sum((x + input_offset) * w) per
// output channel, requantized with that channel's multiplier and shift, plus
// output_offset, clamped. Weights are OHWI with I = input channels / groups.
// A 1x1 convolution with stride 1 and no padding multiplies the NHWC pixels directly
// (gemm_s8_packed: its filters packed into scratch memory three at a time);
// any other gathers four output pixels' windows (im2col) into scratch memory at a time.
#include <cstring>

#include "kernels/cortex_m/util/conv_args.h"
#include "kernels/cortex_m/util/gemm_s8.h"

namespace kiln {
namespace cortex_m {
namespace {

constexpr int32_t kIm2colRows = 4;

// Writes the receptive field of output pixel (oy, ox) of group g: KH*KW slices of
// `group_channels` bytes; taps in the padding get the input zero point (-input_offset),
// which contributes nothing once the offset is added.
void im2col_row(const ConvArgs& a, const int8_t* image, int32_t oy, int32_t ox, int32_t g,
                int32_t group_channels, int8_t* row) {
  const int8_t pad = static_cast<int8_t>(-a.input_offset);
  for (int32_t kh = 0; kh < a.kernel[0]; ++kh) {
    const int32_t iy = oy * a.stride[0] - a.padding[0] + kh * a.dilation[0];
    for (int32_t kw = 0; kw < a.kernel[1]; ++kw) {
      const int32_t ix = ox * a.stride[1] - a.padding[1] + kw * a.dilation[1];
      if (iy < 0 || iy >= a.in.h || ix < 0 || ix >= a.in.w) {
        std::memset(row, pad, static_cast<size_t>(group_channels));
      } else {
        const int8_t* src = image + (static_cast<int64_t>(iy) * a.in.w + ix) * a.in.c + g * group_channels;
        std::memcpy(row, src, static_cast<size_t>(group_channels));
      }
      row += group_channels;
    }
  }
}

void conv2d(KernelContext& ctx, Span<EValue*> args, const char* op, Layout layout) {
  ArgReader r(ctx, op, args, 15);
  ConvArgs a;
  a.input = r.tensor_any_layout(0);
  a.weight = r.tensor(1);
  a.bias = r.optional_tensor(2);
  a.out = r.tensor_any_layout(13);
  if (!r.ok() || !read_conv_tail(r, 3, false, false, nullptr, &a)) return;
  if (!check_int8(ctx, op, *a.input, "input") || !check_int8(ctx, op, *a.weight, "weight") ||
      !check_int8(ctx, op, *a.out, "out") ||
      !activation_geometry(ctx, op, *a.input, layout, "input", &a.in)) {
    return;
  }
  if (a.weight->dim() != 4) {
    KILN_KERNEL_FAIL(ctx, Error::InvalidArgument, op, "weight must be 4-D OHWI, has %d dims",
                     static_cast<int>(a.weight->dim()));
    return;
  }
  const int32_t out_channels = a.weight->size(0);
  const int32_t group_channels = a.weight->size(3);
  a.kernel[0] = a.weight->size(1);
  a.kernel[1] = a.weight->size(2);
  if (group_channels < 1 || a.in.c % group_channels != 0 || out_channels < 1 ||
      out_channels % (a.in.c / group_channels) != 0 || a.kernel[0] > kMaxWindow || a.kernel[1] > kMaxWindow) {
    KILN_KERNEL_FAIL(ctx, Error::InvalidArgument, op,
                     "weight %dx%dx%dx%d (OHWI) does not fit %d input channels (groups must divide both)",
                     static_cast<int>(out_channels), static_cast<int>(a.kernel[0]), static_cast<int>(a.kernel[1]),
                     static_cast<int>(group_channels), static_cast<int>(a.in.c));
    return;
  }
  const int32_t groups = a.in.c / group_channels;
  if (!finish_conv_args(ctx, op, layout, out_channels,
                        conv_output_size(a.in.h, a.kernel[0], a.stride[0], a.padding[0], a.dilation[0]),
                        conv_output_size(a.in.w, a.kernel[1], a.stride[1], a.padding[1], a.dilation[1]), &a)) {
    return;
  }

  const int32_t depth = a.kernel[0] * a.kernel[1] * group_channels;
  const int32_t group_out = out_channels / groups;
  const bool direct = a.kernel[0] == 1 && a.kernel[1] == 1 && a.stride[0] == 1 && a.stride[1] == 1 &&
                      a.padding[0] == 0 && a.padding[1] == 0 && groups == 1;
  // Scratch: the im2col rows, or for the direct product the filters' packing.
  int8_t* scratch = scratch_memory(ctx, op, a.scratch,
                                   direct ? gemm_pack_bytes(depth) : static_cast<size_t>(kIm2colRows) * depth);
  if (scratch == nullptr) return;
  const int8_t* input = a.input->const_data_ptr<int8_t>();
  const int8_t* weight = a.weight->const_data_ptr<int8_t>();
  const int32_t* bias = a.bias != nullptr ? a.bias->const_data_ptr<int32_t>() : nullptr;
  int8_t* out = a.out->mutable_data_ptr<int8_t>();
  const int32_t out_pixels = a.output.h * a.output.w;
  const int64_t in_image = static_cast<int64_t>(a.in.h) * a.in.w * a.in.c;
  const int64_t out_image = static_cast<int64_t>(out_pixels) * out_channels;

  int32_t terms[kGemmColumnChunk];
  for (int32_t g = 0; g < groups; ++g) {
    for (int32_t c0 = 0; c0 < group_out; c0 += kGemmColumnChunk) {
      const int32_t oc = g * group_out + c0;
      const int32_t cols = group_out - c0 < kGemmColumnChunk ? group_out - c0 : kGemmColumnChunk;
      const int8_t* filters = weight + static_cast<int64_t>(oc) * depth;
      gemm_column_terms(filters, cols, depth, bias != nullptr ? bias + oc : nullptr, nullptr, a.input_offset, 0,
                        terms);
      const OutputStage stage{a.multipliers + oc, a.shifts + oc, 1, a.output_offset, a.activation_min,
                              a.activation_max};
      if (direct) {
        gemm_s8_packed(input, static_cast<int32_t>(a.in.pixels()), a.in.c, filters, cols, depth, terms, stage,
                       out + oc, out_channels, scratch);
        continue;
      }
      for (int32_t n = 0; n < a.in.n; ++n) {
        const int8_t* image = input + n * in_image;
        int8_t* out_n = out + n * out_image;
        for (int32_t p0 = 0; p0 < out_pixels; p0 += kIm2colRows) {
          const int32_t count = out_pixels - p0 < kIm2colRows ? out_pixels - p0 : kIm2colRows;
          for (int32_t i = 0; i < count; ++i) {
            const int32_t p = p0 + i;
            im2col_row(a, image, p / a.output.w, p % a.output.w, g, group_channels, scratch + i * depth);
          }
          gemm_s8(scratch, count, depth, filters, cols, depth, terms, 0, stage,
                  out_n + static_cast<int64_t>(p0) * out_channels + oc, out_channels);
        }
      }
    }
  }
}

}  // namespace

void quantized_conv2d_out(KernelContext& ctx, Span<EValue*> args) {
  conv2d(ctx, args, "cortex_m::quantized_conv2d.out", Layout::ChannelsLastNchw);
}

void quantized_conv2d_nhwc_out(KernelContext& ctx, Span<EValue*> args) {
  conv2d(ctx, args, "cortex_m::quantized_conv2d_nhwc.out", Layout::Nhwc);
}

}  // namespace cortex_m
}  // namespace kiln
