// cortex_m::quantized_activation.out(Tensor input, Tensor lut, *, Tensor(a!) out)
//
// A table lookup: out[i] = lut[input[i] + 128] with a 256-entry int8 table computed ahead
// of time from the activation (sigmoid, tanh, silu, ...) and the quantization parameters.
#include "kernels/cortex_m/util/args.h"

namespace kiln {
namespace cortex_m {

void quantized_activation_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "cortex_m::quantized_activation.out";
  ArgReader r(ctx, kName, args, 4);
  Tensor* in = r.tensor_any_layout(0);
  Tensor* lut = r.tensor(1);
  Tensor* out = r.tensor_any_layout(2);
  if (!r.ok()) return;
  if (!check_int8(ctx, kName, *in, "input") || !check_int8(ctx, kName, *lut, "lut") ||
      !check_int8(ctx, kName, *out, "out") || !portable::resize_output_like(ctx, kName, *out, *in) ||
      !check_same_layout(ctx, kName, *in, *out, "input", "out")) {
    return;
  }
  if (lut->numel() != 256) {
    KILN_KERNEL_FAIL(ctx, Error::InvalidArgument, kName, "lut has %zu entries, needs 256", lut->numel());
    return;
  }
  const int8_t* x = in->const_data_ptr<int8_t>();
  const int8_t* table = lut->const_data_ptr<int8_t>() + 128;
  int8_t* y = out->mutable_data_ptr<int8_t>();
  const size_t n = in->numel();
  for (size_t i = 0; i < n; ++i) y[i] = table[x[i]];
}

}  // namespace cortex_m
}  // namespace kiln
