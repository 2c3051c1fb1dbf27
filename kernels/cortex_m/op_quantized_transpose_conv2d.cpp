// cortex_m::quantized_transpose_conv2d.out and cortex_m::quantized_transpose_conv2d_nhwc.out
//   (Tensor input, Tensor weight, Tensor? bias, int[] stride, int[] padding,
//    int[] output_padding, int[] dilation, int input_offset, int output_offset,
//    Tensor requantize_multipliers, Tensor requantize_shifts, int activation_min,
//    int activation_max, Tensor scratch, Tensor output_scratch, *, Tensor(a!) out)
//
// int8 transposed convolution (one group), CMSIS-NN arithmetic as quantized_conv2d.
// Weights are OHWI. Input y contributes to output y * stride - padding + k * dilation, so
// output pixel (oy, ox) takes tap (kh, kw) from input ((oy + padding - kh * dilation) /
// stride, ...) where that divides and lies inside. Each output pixel's taps are gathered
// into a row of KH * KW * C bytes (the taps that take no input hold the input zero point,
// which adds nothing once the offset is added) and the rows meet the OHWI filters in the
// same product as quantized_conv2d (util/gemm_s8.h); the scratch tensor takes the rows
// and the product's memory (conv_scratch_bytes).
#include "kernels/cortex_m/util/conv_args.h"
#include "kernels/cortex_m/util/copy_s8.h"
#include "kernels/cortex_m/util/gemm_s8.h"

namespace kiln {
namespace cortex_m {
namespace {

void transpose_conv2d(KernelContext& ctx, Span<EValue*> args, const char* op, Layout layout) {
  ArgReader r(ctx, op, args, 17);
  ConvArgs a;
  a.input = r.tensor_any_layout(0);
  a.weight = r.tensor(1);
  a.bias = r.optional_tensor(2);
  a.out = r.tensor_any_layout(15);
  if (!r.ok() || !read_conv_tail(r, 3, true, false, nullptr, &a)) return;
  if (!check_int8(ctx, op, *a.input, "input") || !check_int8(ctx, op, *a.weight, "weight") ||
      !check_int8(ctx, op, *a.out, "out") ||
      !activation_geometry(ctx, op, *a.input, layout, "input", &a.in)) {
    return;
  }
  if (a.weight->dim() != 4 || a.weight->size(3) != a.in.c || a.weight->size(1) > kMaxWindow ||
      a.weight->size(2) > kMaxWindow) {
    KILN_KERNEL_FAIL(ctx, Error::InvalidArgument, op, "weight %s must be OHWI with I = %d input channels (one group)",
                     portable::ShapeString(*a.weight).c_str(), static_cast<int>(a.in.c));
    return;
  }
  const int32_t out_channels = a.weight->size(0);
  a.kernel[0] = a.weight->size(1);
  a.kernel[1] = a.weight->size(2);
  int64_t size[2];
  for (int i = 0; i < 2; ++i) {
    const int64_t in = i == 0 ? a.in.h : a.in.w;
    size[i] = (in - 1) * a.stride[i] - 2 * a.padding[i] + static_cast<int64_t>(a.dilation[i]) * (a.kernel[i] - 1) +
              a.output_padding[i] + 1;
  }
  if (!finish_conv_args(ctx, op, layout, out_channels, size[0], size[1], &a)) return;
  const int32_t C = a.in.c;
  const int32_t depth = a.kernel[0] * a.kernel[1] * C;
  size_t got = 0;
  int8_t* scratch = scratch_memory_at_least(ctx, op, a.scratch, static_cast<size_t>(depth), &got);
  if (scratch == nullptr) return;
  const int32_t rows_at_once = static_cast<int32_t>(got / depth < kIm2colRows ? got / depth : kIm2colRows);
  const size_t rows_bytes = im2col_bytes(rows_at_once, depth);
  int8_t* gemm_scratch = got >= rows_bytes + gemm_scratch_bytes(depth) && gemm_scratch_bytes(depth) > 0
                             ? scratch + rows_bytes
                             : nullptr;
  const int8_t* input = a.input->const_data_ptr<int8_t>();
  const int8_t* weight = a.weight->const_data_ptr<int8_t>();
  const int32_t* bias = a.bias != nullptr ? a.bias->const_data_ptr<int32_t>() : nullptr;
  int8_t* out = a.out->mutable_data_ptr<int8_t>();
  const int8_t pad = static_cast<int8_t>(-a.input_offset);
  const int32_t out_pixels = a.output.h * a.output.w;
  GemmColumns columns;
  for (int32_t c0 = 0; c0 < out_channels; c0 += kGemmColumnChunk) {
    const int32_t cols = out_channels - c0 < kGemmColumnChunk ? out_channels - c0 : kGemmColumnChunk;
    const OutputStage stage{a.multipliers + c0, a.shifts + c0, 1, a.output_offset, a.activation_min,
                            a.activation_max};
    gemm_prepare_columns(weight + static_cast<int64_t>(c0) * depth, cols, depth, bias != nullptr ? bias + c0 : nullptr,
                         nullptr, a.input_offset, 0, stage, &columns);
    for (int32_t n = 0; n < a.in.n; ++n) {
      const int8_t* image = input + static_cast<int64_t>(n) * a.in.h * a.in.w * C;
      int8_t* out_n = out + static_cast<int64_t>(n) * out_pixels * out_channels;
      for (int32_t p0 = 0; p0 < out_pixels; p0 += rows_at_once) {
        const int32_t count = out_pixels - p0 < rows_at_once ? out_pixels - p0 : rows_at_once;
        for (int32_t i = 0; i < count; ++i) {
          const int32_t oy = (p0 + i) / a.output.w, ox = (p0 + i) % a.output.w;
          int8_t* row = scratch + static_cast<int64_t>(i) * depth;
          for (int32_t kh = 0; kh < a.kernel[0]; ++kh) {
            const int32_t ty = oy + a.padding[0] - kh * a.dilation[0];
            const bool row_in = ty >= 0 && ty % a.stride[0] == 0 && ty / a.stride[0] < a.in.h;
            for (int32_t kw = 0; kw < a.kernel[1]; ++kw, row += C) {
              const int32_t tx = ox + a.padding[1] - kw * a.dilation[1];
              if (row_in && tx >= 0 && tx % a.stride[1] == 0 && tx / a.stride[1] < a.in.w) {
                copy_s8(row, image + (static_cast<int64_t>(ty / a.stride[0]) * a.in.w + tx / a.stride[1]) * C, C);
              } else {
                fill_s8(row, pad, C);
              }
            }
          }
        }
        gemm_s8(scratch, count, depth, columns, 0, out_n + static_cast<int64_t>(p0) * out_channels + c0, out_channels,
                gemm_scratch);
      }
    }
  }
}

}  // namespace

void quantized_transpose_conv2d_out(KernelContext& ctx, Span<EValue*> args) {
  transpose_conv2d(ctx, args, "cortex_m::quantized_transpose_conv2d.out", Layout::ChannelsLastNchw);
}

void quantized_transpose_conv2d_nhwc_out(KernelContext& ctx, Span<EValue*> args) {
  transpose_conv2d(ctx, args, "cortex_m::quantized_transpose_conv2d_nhwc.out", Layout::Nhwc);
}

}  // namespace cortex_m
}  // namespace kiln
