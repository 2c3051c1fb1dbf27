// cortex_m::quantized_linear.out(Tensor input, Tensor weights, Tensor? bias,
//     Tensor? kernel_sum, int input_offset, int filter_offset, int output_offset,
//     int[] requantize_multipliers, int[] requantize_shifts, int activation_max,
//     int activation_min, *, Tensor(a!) out)
//
// A fully connected layer, per-tensor requantization: for each row x of the input
// (the last dim) and output feature o with weight row w,
//   without kernel_sum: acc = bias[o] + sum((x + input_offset) * (w + filter_offset))
//   with kernel_sum:    acc = kernel_sum[o] + sum(x * w) + filter_offset * sum(x)
// (ExecuTorch's passes give a kernel_sum, with the input offset folded in, for Helium
// targets and a bias otherwise; both give the same integers.) Then
// out = clamp(requantize(acc) + output_offset, activation_min, activation_max).
#include "kernels/cortex_m/util/args.h"
#include "kernels/cortex_m/util/gemm_s8.h"

namespace kiln {
namespace cortex_m {

void quantized_linear_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "cortex_m::quantized_linear.out";
  ArgReader r(ctx, kName, args, 13);
  Tensor* in = r.tensor(0);
  Tensor* weights = r.tensor(1);
  Tensor* bias = r.optional_tensor(2);
  Tensor* kernel_sum = r.optional_tensor(3);
  const int64_t input_offset = r.int_value(4);
  const int64_t filter_offset = r.int_value(5);
  const int64_t output_offset = r.int_value(6);
  Span<const int64_t> multipliers = r.int_list(7);
  Span<const int64_t> shifts = r.int_list(8);
  const int64_t activation_max = r.int_value(9);
  const int64_t activation_min = r.int_value(10);
  Tensor* out = r.tensor(11);
  if (!r.ok()) return;
  if (!check_int8(ctx, kName, *in, "input") || !check_int8(ctx, kName, *weights, "weights") ||
      !check_int8(ctx, kName, *out, "out") ||
      !check_range(ctx, kName, input_offset, -127, 128, "input_offset (minus the input zero point)") ||
      !check_range(ctx, kName, filter_offset, -127, 128, "filter_offset (minus the weight zero point)") ||
      !check_range(ctx, kName, output_offset, -128, 127, "output_offset (the output zero point)") ||
      !check_activation(ctx, kName, activation_min, activation_max)) {
    return;
  }
  if (multipliers.size() < 1 || shifts.size() < 1 ||
      !check_requantize_params(ctx, kName, multipliers[0], shifts[0], "output")) {
    if (multipliers.size() < 1 || shifts.size() < 1) {
      KILN_KERNEL_FAIL(ctx, Error::InvalidArgument, kName, "needs a requantize multiplier and shift");
    }
    return;
  }
  if (in->dim() < 1 || weights->dim() != 2 || weights->size(1) != in->size(-1)) {
    KILN_KERNEL_FAIL(ctx, Error::InvalidArgument, kName, "input %s does not fit weights %s (need [.., K] and [N, K])",
                     portable::ShapeString(*in).c_str(), portable::ShapeString(*weights).c_str());
    return;
  }
  const int32_t depth = weights->size(1);
  const int32_t features = weights->size(0);
  if (!check_bias(ctx, kName, bias, features, "bias") || !check_bias(ctx, kName, kernel_sum, features, "kernel_sum")) {
    return;
  }
  SizesType sizes[16];
  if (in->dim() > 16) {
    KILN_KERNEL_FAIL(ctx, Error::InvalidArgument, kName, "input has %d dims, at most 16 are supported",
                     static_cast<int>(in->dim()));
    return;
  }
  for (int32_t d = 0; d < in->dim(); ++d) sizes[d] = in->size(d);
  sizes[in->dim() - 1] = features;
  if (!portable::resize_output(ctx, kName, *out, {sizes, static_cast<size_t>(in->dim())})) return;

  const int32_t rows = depth > 0 ? static_cast<int32_t>(in->numel() / static_cast<size_t>(depth)) : 0;
  const int32_t mult = static_cast<int32_t>(multipliers[0]);
  const int32_t shift = static_cast<int32_t>(shifts[0]);
  const OutputStage stage{&mult, &shift, 0, static_cast<int32_t>(output_offset), static_cast<int32_t>(activation_min),
                          static_cast<int32_t>(activation_max)};
  const int8_t* x = in->const_data_ptr<int8_t>();
  const int8_t* w = weights->const_data_ptr<int8_t>();
  const int32_t* b = bias != nullptr ? bias->const_data_ptr<int32_t>() : nullptr;
  const int32_t* ks = kernel_sum != nullptr ? kernel_sum->const_data_ptr<int32_t>() : nullptr;
  int8_t* y = out->mutable_data_ptr<int8_t>();
  if (ks == nullptr && filter_offset == 0 && rows == 1) {
    gemm_s8_row_with_bias(x, w, features, depth, b, static_cast<int32_t>(input_offset), stage, y);
    return;
  }
  if (ks != nullptr) {
    // acc = kernel_sum + sum(x * w) + filter_offset * sum(x): the columns' terms are given.
    for (int32_t r = 0; r < rows; ++r) {
      const int8_t* row = x + static_cast<int64_t>(r) * depth;
      const int32_t row_term = filter_offset != 0 ? static_cast<int32_t>(filter_offset) * sum_s8(row, depth) : 0;
      gemm_s8_row_with_terms(row, w, features, depth, ks, row_term, stage, y + static_cast<int64_t>(r) * features);
    }
    return;
  }
  GemmColumns columns;
  for (int32_t c0 = 0; c0 < features; c0 += kGemmColumnChunk) {
    const int32_t cols = features - c0 < kGemmColumnChunk ? features - c0 : kGemmColumnChunk;
    gemm_prepare_columns(w + static_cast<int64_t>(c0) * depth, cols, depth, b != nullptr ? b + c0 : nullptr,
                         ks != nullptr ? ks + c0 : nullptr, static_cast<int32_t>(input_offset),
                         static_cast<int32_t>(filter_offset), stage, &columns);
    gemm_s8(x, rows, depth, columns, static_cast<int32_t>(filter_offset), y + c0, features, nullptr);
  }
}

}  // namespace cortex_m
}  // namespace kiln
