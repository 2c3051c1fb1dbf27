// cortex_m::quantized_conv2d.out and cortex_m::quantized_conv2d_nhwc.out
//   (Tensor input, Tensor weight, Tensor? bias, int[] stride, int[] padding,
//    int[] dilation, int input_offset, int output_offset, Tensor requantize_multipliers,
//    Tensor requantize_shifts, int activation_min, int activation_max, Tensor scratch,
//    *, Tensor(a!) out)
//
// int8 convolution, CMSIS-NN arithmetic: acc = bias + sum((x + input_offset) * w) per
// output channel, requantized with that channel's multiplier and shift, plus
// output_offset, clamped. Weights are OHWI with I = input channels / groups.
// A 1x1 convolution with stride 1 and no padding multiplies the NHWC pixels directly; any
// other gathers four output pixels' windows (im2col) into scratch memory at a time. The
// product (util/gemm_s8.h) takes the rest of the scratch memory (conv_scratch_bytes).
#include "kernels/cortex_m/util/conv_args.h"
#include "kernels/cortex_m/util/copy_s8.h"
#include "kernels/cortex_m/util/gemm_s8.h"

namespace kiln {
namespace cortex_m {
namespace {

// Writes the receptive field of output pixel (oy, ox) of group g: KH*KW slices of
// `group_channels` bytes; taps in the padding get the input zero point (-input_offset),
// which contributes nothing once the offset is added. A window row inside the image, one
// group and no horizontal dilation is one contiguous run of KW * channels bytes: one copy.
void im2col_row(const ConvArgs& a, const int8_t* image, int32_t oy, int32_t ox, int32_t g,
                int32_t group_channels, int8_t* row) {
  const int8_t pad = static_cast<int8_t>(-a.input_offset);
  const int32_t iy0 = oy * a.stride[0] - a.padding[0];
  const int32_t ix0 = ox * a.stride[1] - a.padding[1];
  const int32_t kw = a.kernel[1];
  const bool columns_inside = ix0 >= 0 && ix0 + (kw - 1) * a.dilation[1] < a.in.w;
  const bool contiguous = columns_inside && (a.dilation[1] == 1 || kw == 1) && group_channels == a.in.c;
  const int32_t row_bytes = kw * group_channels;
  for (int32_t kh = 0, iy = iy0; kh < a.kernel[0]; ++kh, iy += a.dilation[0], row += row_bytes) {
    if (iy < 0 || iy >= a.in.h) {
      fill_s8(row, pad, row_bytes);
      continue;
    }
    const int8_t* src = image + (static_cast<int64_t>(iy) * a.in.w + ix0) * a.in.c + g * group_channels;
    if (contiguous) {
      copy_s8(row, src, row_bytes);
      continue;
    }
    int8_t* to = row;
    for (int32_t i = 0, ix = ix0; i < kw; ++i, ix += a.dilation[1], src += a.dilation[1] * a.in.c, to += group_channels) {
      if (ix < 0 || ix >= a.in.w) {
        fill_s8(to, pad, group_channels);
      } else {
        copy_s8(to, src, group_channels);
      }
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
  // Scratch: the gathered windows, then the product's memory (conv_scratch_bytes). With
  // less (a program sized for CMSIS-NN's buffers), fewer windows at a time and a product
  // without memory of its own.
  size_t got = 0;
  int8_t* scratch = scratch_memory_at_least(ctx, op, a.scratch, direct ? 1 : static_cast<size_t>(depth), &got);
  if (scratch == nullptr) return;
  const int32_t rows_at_once =
      direct ? 0 : static_cast<int32_t>(got / static_cast<size_t>(depth) < kIm2colRows ? got / depth : kIm2colRows);
  const size_t rows_bytes = im2col_bytes(rows_at_once, depth);
  int8_t* gemm_scratch = got >= rows_bytes + gemm_scratch_bytes(depth) && gemm_scratch_bytes(depth) > 0
                             ? scratch + rows_bytes
                             : nullptr;
  const int8_t* input = a.input->const_data_ptr<int8_t>();
  const int8_t* weight = a.weight->const_data_ptr<int8_t>();
  const int32_t* bias = a.bias != nullptr ? a.bias->const_data_ptr<int32_t>() : nullptr;
  int8_t* out = a.out->mutable_data_ptr<int8_t>();
  const int32_t out_pixels = a.output.h * a.output.w;
  const int64_t in_image = static_cast<int64_t>(a.in.h) * a.in.w * a.in.c;
  const int64_t out_image = static_cast<int64_t>(out_pixels) * out_channels;

  GemmColumns columns;
  for (int32_t g = 0; g < groups; ++g) {
    for (int32_t c0 = 0; c0 < group_out; c0 += kGemmColumnChunk) {
      const int32_t oc = g * group_out + c0;
      const int32_t cols = group_out - c0 < kGemmColumnChunk ? group_out - c0 : kGemmColumnChunk;
      const OutputStage stage{a.multipliers + oc, a.shifts + oc, 1, a.output_offset, a.activation_min,
                              a.activation_max};
      gemm_prepare_columns(weight + static_cast<int64_t>(oc) * depth, cols, depth,
                           bias != nullptr ? bias + oc : nullptr, nullptr, a.input_offset, 0, stage, &columns);
      if (direct) {
        gemm_s8(input, static_cast<int32_t>(a.in.pixels()), a.in.c, columns, 0, out + oc, out_channels,
                gemm_scratch);
        continue;
      }
      for (int32_t n = 0; n < a.in.n; ++n) {
        const int8_t* image = input + n * in_image;
        int8_t* out_n = out + n * out_image;
        for (int32_t p0 = 0; p0 < out_pixels; p0 += rows_at_once) {
          const int32_t count = out_pixels - p0 < rows_at_once ? out_pixels - p0 : rows_at_once;
          for (int32_t i = 0; i < count; ++i) {
            const int32_t p = p0 + i;
            im2col_row(a, image, p / a.output.w, p % a.output.w, g, group_channels, scratch + i * depth);
          }
          gemm_s8(scratch, count, depth, columns, 0, out_n + static_cast<int64_t>(p0) * out_channels + oc,
                  out_channels, gemm_scratch);
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
