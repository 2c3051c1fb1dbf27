// aten::native_dropout.out(Tensor input, float p, bool? train, *, Tensor(a!) out0,
//     Tensor(b!) out1)
//
// Training (train true or None): each element is kept with probability 1 - p (mask
// out1 true) and scaled by 1 / (1 - p), or zeroed; p = 1 zeroes everything. Inference
// (train false): out0 = input, out1 all true. Draws come from util/random.h.
#include "kernels/portable/util/dtype_dispatch.h"
#include "kernels/portable/util/random.h"

namespace kiln {
namespace portable {

void native_dropout_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "aten::native_dropout.out";
  ArgReader r(ctx, kName, args, 6);
  Tensor* in = r.tensor(0);
  const double p = r.double_value(1);
  const bool train = r.is_none(2) || r.bool_value(2);
  Tensor* out = r.tensor(3);
  Tensor* mask = r.tensor(4);
  if (!r.ok()) return;
  KILN_KERNEL_CHECK(ctx, p >= 0 && p <= 1, Error::InvalidArgument, kName, "p %g is not in [0, 1]", p);
  if (!check_same_dtype(ctx, kName, *in, *out, "input", "out0") ||
      !check_dtype(ctx, kName, *mask, ScalarType::Bool, "out1") ||
      !resize_output_like(ctx, kName, *out, *in) || !resize_output_like(ctx, kName, *mask, *in)) {
    return;
  }
  bool* m = mask->mutable_data_ptr<bool>();
  dispatch_dtype<kFloatTypes>(ctx, kName, in->scalar_type(), [&](auto tag) {
    using T = decltype(tag);
    const T* x = in->const_data_ptr<T>();
    T* y = out->mutable_data_ptr<T>();
    const T scale = p < 1 ? static_cast<T>(1.0 / (1.0 - p)) : static_cast<T>(0);
    for (size_t i = 0; i < in->numel(); ++i) {
      const bool keep = !train || random_uniform<double>() >= p;
      m[i] = keep;
      y[i] = !train ? x[i] : (keep ? x[i] * scale : static_cast<T>(0));
    }
  });
}

}  // namespace portable
}  // namespace kiln
