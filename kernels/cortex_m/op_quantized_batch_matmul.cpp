// cortex_m::quantized_batch_matmul.out(Tensor lhs, int lhs_zero_point,
//     Tensor rhs_transposed, int rhs_zero_point, int output_zero_point,
//     int output_multiplier, int output_shift, Tensor scratch, *, Tensor(a!) out)
//
// int8 [B, M, K] x [B, N, K]^T -> [B, M, N]. As in CMSIS-NN, the "zero points" are
// offsets added to the operands (the negated zero points):
//   acc = sum((lhs + lhs_zero_point) * (rhs + rhs_zero_point)),
//   out = saturate_int8(requantize(acc) + output_zero_point).
#include "kernels/cortex_m/util/args.h"
#include "kernels/cortex_m/util/gemm_s8.h"

namespace kiln {
namespace cortex_m {

void quantized_batch_matmul_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "cortex_m::quantized_batch_matmul.out";
  ArgReader r(ctx, kName, args, 10);
  Tensor* lhs = r.tensor(0);
  const int64_t lhs_offset = r.int_value(1);
  Tensor* rhs = r.tensor(2);
  const int64_t rhs_offset = r.int_value(3);
  const int64_t out_zp = r.int_value(4);
  const int64_t mult = r.int_value(5);
  const int64_t shift = r.int_value(6);
  (void)r.tensor(7);  // scratch: not needed
  Tensor* out = r.tensor(8);
  if (!r.ok()) return;
  if (!check_int8(ctx, kName, *lhs, "lhs") || !check_int8(ctx, kName, *rhs, "rhs_transposed") ||
      !check_int8(ctx, kName, *out, "out") || !check_range(ctx, kName, lhs_offset, -127, 128, "lhs_zero_point") ||
      !check_range(ctx, kName, rhs_offset, -127, 128, "rhs_zero_point") ||
      !check_range(ctx, kName, out_zp, -128, 127, "output_zero_point") ||
      !check_requantize_params(ctx, kName, mult, shift, "output")) {
    return;
  }
  if (lhs->dim() != 3 || rhs->dim() != 3 || lhs->size(0) != rhs->size(0) || lhs->size(2) != rhs->size(2)) {
    KILN_KERNEL_FAIL(ctx, Error::InvalidArgument, kName, "lhs %s and rhs_transposed %s must be [B, M, K] and [B, N, K]",
                     portable::ShapeString(*lhs).c_str(), portable::ShapeString(*rhs).c_str());
    return;
  }
  const int32_t batches = lhs->size(0), m = lhs->size(1), k = lhs->size(2), n = rhs->size(1);
  const SizesType sizes[3] = {batches, m, n};
  if (!portable::resize_output(ctx, kName, *out, {sizes, 3})) return;
  const int32_t mult32 = static_cast<int32_t>(mult);
  const int32_t shift32 = static_cast<int32_t>(shift);
  const OutputStage stage{&mult32, &shift32, 0, static_cast<int32_t>(out_zp), -128, 127};
  GemmColumns columns;
  for (int32_t b = 0; b < batches; ++b) {
    const int8_t* a = lhs->const_data_ptr<int8_t>() + static_cast<int64_t>(b) * m * k;
    const int8_t* w = rhs->const_data_ptr<int8_t>() + static_cast<int64_t>(b) * n * k;
    int8_t* y = out->mutable_data_ptr<int8_t>() + static_cast<int64_t>(b) * m * n;
    for (int32_t c0 = 0; c0 < n; c0 += kGemmColumnChunk) {
      const int32_t cols = n - c0 < kGemmColumnChunk ? n - c0 : kGemmColumnChunk;
      gemm_prepare_columns(w + static_cast<int64_t>(c0) * k, cols, k, nullptr, nullptr,
                           static_cast<int32_t>(lhs_offset), static_cast<int32_t>(rhs_offset), stage, &columns);
      gemm_s8(a, m, k, columns, static_cast<int32_t>(rhs_offset), y + c0, n, nullptr);
    }
  }
}

}  // namespace cortex_m
}  // namespace kiln
