// aten::_native_batch_norm_legit_no_training.out(Tensor input, Tensor? weight,
//     Tensor? bias, Tensor running_mean, Tensor running_var, float momentum, float eps,
//     *, Tensor(a!) out0, Tensor(b!) out1, Tensor(c!) out2)
//
// Inference batch norm over dim 1 of an [N, C, ...] input:
//   out0 = (x - mean[c]) / sqrt(var[c] + eps) * weight[c] + bias[c].
// out1 and out2 (save_mean / save_invstd) are empty in inference programs; they are
// left untouched.
#include <cmath>

#include "kernels/portable/util/kernel_args.h"

namespace kiln {
namespace portable {

namespace {

constexpr const char* kName = "aten::_native_batch_norm_legit_no_training.out";

bool check_per_channel(KernelContext& ctx, const Tensor* t, int64_t channels, ScalarType type,
                       const char* what) {
  if (t == nullptr) return true;
  if (t->dim() != 1 || t->size(0) != channels) {
    KILN_KERNEL_FAIL(ctx, Error::InvalidArgument, kName, "%s has shape %s, expected [%lld]", what,
                     ShapeString(*t).c_str(), static_cast<long long>(channels));
    return false;
  }
  return check_dtype(ctx, kName, *t, type, what);
}

template <typename T>
void batch_norm(const Tensor& in, const Tensor* weight, const Tensor* bias, const Tensor& mean,
                const Tensor& var, double eps, Tensor& out) {
  const size_t batch = static_cast<size_t>(in.size(0));
  const size_t channels = static_cast<size_t>(in.size(1));
  const size_t inner = channels == 0 || batch == 0 ? 0 : in.numel() / (batch * channels);
  const T* x = in.const_data_ptr<T>();
  T* y = out.mutable_data_ptr<T>();
  for (size_t c = 0; c < channels; ++c) {
    // One scale per channel; x - mean is kept (not folded into the shift) so that inputs
    // close to a large mean do not lose precision.
    const double invstd = 1.0 / std::sqrt(static_cast<double>(var.const_data_ptr<T>()[c]) + eps);
    const double w = weight != nullptr ? static_cast<double>(weight->const_data_ptr<T>()[c]) : 1.0;
    const double b = bias != nullptr ? static_cast<double>(bias->const_data_ptr<T>()[c]) : 0.0;
    const T scale = static_cast<T>(invstd * w);
    const T m = mean.const_data_ptr<T>()[c];
    const T shift = static_cast<T>(b);
    for (size_t n = 0; n < batch; ++n) {
      const size_t base = (n * channels + c) * inner;
      for (size_t i = 0; i < inner; ++i) y[base + i] = (x[base + i] - m) * scale + shift;
    }
  }
}

}  // namespace

void native_batch_norm_legit_no_training_out(KernelContext& ctx, Span<EValue*> args) {
  ArgReader r(ctx, kName, args, 11);
  Tensor* in = r.tensor(0);
  Tensor* weight = r.optional_tensor(1);
  Tensor* bias = r.optional_tensor(2);
  Tensor* mean = r.tensor(3);
  Tensor* var = r.tensor(4);
  const double eps = r.double_value(6);
  Tensor* out = r.tensor(7);
  if (!r.ok()) return;
  KILN_KERNEL_CHECK(ctx, in->dim() >= 2, Error::InvalidArgument, kName,
                    "input must be [N, C, ...], got %s", ShapeString(*in).c_str());
  const ScalarType type = in->scalar_type();
  const int64_t channels = in->size(1);
  if (!check_per_channel(ctx, weight, channels, type, "weight") ||
      !check_per_channel(ctx, bias, channels, type, "bias") ||
      !check_per_channel(ctx, mean, channels, type, "running_mean") ||
      !check_per_channel(ctx, var, channels, type, "running_var") ||
      !check_dtype(ctx, kName, *out, type, "out0") ||
      !resize_output_like(ctx, kName, *out, *in)) {
    return;
  }
  if (type == ScalarType::Float) {
    batch_norm<float>(*in, weight, bias, *mean, *var, eps, *out);
  } else if (type == ScalarType::Double) {
    batch_norm<double>(*in, weight, bias, *mean, *var, eps, *out);
  } else {
    KILN_KERNEL_FAIL(ctx, Error::InvalidType, kName, "dtype %s is not supported (Float, Double)",
                     scalar_type_name(type));
  }
}

}  // namespace portable
}  // namespace kiln
