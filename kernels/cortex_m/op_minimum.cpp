// cortex_m::minimum.out(Tensor self, Tensor other, *, Tensor(a!) out)
//
// The smaller of two int8 tensors, element by element (the clamp bounds of a quantized
// clamp). `other` may be a single value or hold one value per channel.
#include "kernels/cortex_m/util/args.h"

namespace kiln {
namespace cortex_m {

void minimum_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "cortex_m::minimum.out";
  ArgReader r(ctx, kName, args, 4);
  Tensor* a = r.tensor_any_layout(0);
  Tensor* b = r.tensor_any_layout(1);
  Tensor* out = r.tensor_any_layout(2);
  if (!r.ok()) return;
  Pairing pair;
  if (!check_int8(ctx, kName, *a, "self") || !check_int8(ctx, kName, *b, "other") ||
      !check_int8(ctx, kName, *out, "out") || !pair_operands(ctx, kName, *a, *b, &pair) ||
      !portable::resize_output_like(ctx, kName, *out, *pair.big) ||
      !check_same_layout(ctx, kName, *pair.big, *out, "the larger operand", "out")) {
    return;
  }
  const int8_t* big = pair.big->const_data_ptr<int8_t>();
  const int8_t* small = pair.small->const_data_ptr<int8_t>();
  int8_t* y = out->mutable_data_ptr<int8_t>();
  const size_t n = out->numel();
  for (size_t i = 0, j = 0; i < n; ++i) {
    y[i] = small[j] < big[i] ? small[j] : big[i];
    if (++j == pair.period) j = 0;
  }
}

}  // namespace cortex_m
}  // namespace kiln
