// aten::_native_batch_norm_legit.out(Tensor input, Tensor? weight, Tensor? bias,
//     Tensor(a!) running_mean, Tensor(b!) running_var, bool training, float momentum,
//     float eps, *, Tensor(d!) out, Tensor(e!) save_mean, Tensor(f!) save_invstd)
// aten::_native_batch_norm_legit.no_stats_out(Tensor input, Tensor? weight, Tensor? bias,
//     bool training, float momentum, float eps, *, Tensor(a!) out, Tensor(b!) save_mean,
//     Tensor(c!) save_invstd)
//
// Batch norm over dim 1 of an [N, C, ...] input. Training: each channel is normalised
// with its batch mean and biased variance, save_mean / save_invstd ([C]) keep them,
// and running stats (when given) move by momentum (the variance unbiased):
// running = (1 - momentum) * running + momentum * batch. Otherwise (only with running
// stats) the running stats normalise and save_mean / save_invstd are empty.
#include <cmath>

#include "kernels/portable/util/dtype_dispatch.h"

namespace kiln {
namespace portable {

namespace {

struct BatchNormArgs {
  Tensor* in;
  Tensor* weight;
  Tensor* bias;
  Tensor* running_mean;  // null for no_stats
  Tensor* running_var;
  bool training;
  double momentum, eps;
  Tensor* out;
  Tensor* save_mean;
  Tensor* save_invstd;
};

bool check_channel_vector(KernelContext& ctx, const char* name, const Tensor* t, const Tensor& in, const char* what) {
  if (t == nullptr) return true;
  if (t->dim() != 1 || t->size(0) != in.size(1)) {
    KILN_KERNEL_FAIL(ctx, Error::InvalidArgument, name, "%s has shape %s, expected [%d]", what,
                     ShapeString(*t).c_str(), static_cast<int>(in.size(1)));
    return false;
  }
  return check_same_dtype(ctx, name, in, *t, "input", what);
}

template <typename T>
void normalize(const BatchNormArgs& a, size_t c, double mean, double invstd, size_t batch, size_t channels, size_t inner) {
  const double w = a.weight != nullptr ? static_cast<double>(a.weight->const_data_ptr<T>()[c]) : 1.0;
  const double b = a.bias != nullptr ? static_cast<double>(a.bias->const_data_ptr<T>()[c]) : 0.0;
  const T* x = a.in->const_data_ptr<T>();
  T* y = a.out->mutable_data_ptr<T>();
  for (size_t n = 0; n < batch; ++n) {
    const size_t base = (n * channels + c) * inner;
    for (size_t i = 0; i < inner; ++i) y[base + i] = static_cast<T>((x[base + i] - mean) * invstd * w + b);
  }
}

void batch_norm(KernelContext& ctx, const char* name, const BatchNormArgs& a) {
  const Tensor& in = *a.in;
  KILN_KERNEL_CHECK(ctx, in.dim() >= 2, Error::InvalidArgument, name, "input must be [N, C, ...], got %s",
                    ShapeString(in).c_str());
  KILN_KERNEL_CHECK(ctx, a.training || a.running_mean != nullptr, Error::InvalidArgument, name,
                    "inference batch norm needs running stats");
  if (!check_channel_vector(ctx, name, a.weight, in, "weight") || !check_channel_vector(ctx, name, a.bias, in, "bias") ||
      !check_channel_vector(ctx, name, a.running_mean, in, "running_mean") ||
      !check_channel_vector(ctx, name, a.running_var, in, "running_var") ||
      !check_same_dtype(ctx, name, in, *a.out, "input", "out") ||
      !check_same_dtype(ctx, name, in, *a.save_mean, "input", "save_mean") ||
      !check_same_dtype(ctx, name, in, *a.save_invstd, "input", "save_invstd") ||
      !resize_output_like(ctx, name, *a.out, in)) {
    return;
  }
  const SizesType stats_size = a.training ? in.size(1) : 0;
  if (!resize_output(ctx, name, *a.save_mean, {&stats_size, 1}) ||
      !resize_output(ctx, name, *a.save_invstd, {&stats_size, 1})) {
    return;
  }
  const size_t batch = static_cast<size_t>(in.size(0));
  const size_t channels = static_cast<size_t>(in.size(1));
  const size_t inner = batch * channels == 0 ? 0 : in.numel() / (batch * channels);
  const size_t count = batch * inner;  // elements per channel
  KILN_KERNEL_CHECK(ctx, !a.training || count > 0, Error::InvalidArgument, name,
                    "training batch norm needs elements in every channel, input is %s", ShapeString(in).c_str());
  dispatch_dtype<kFloatTypes>(ctx, name, in.scalar_type(), [&](auto tag) {
    using T = decltype(tag);
    const T* x = in.const_data_ptr<T>();
    for (size_t c = 0; c < channels; ++c) {
      if (!a.training) {
        const double mean = static_cast<double>(a.running_mean->const_data_ptr<T>()[c]);
        const double var = static_cast<double>(a.running_var->const_data_ptr<T>()[c]);
        normalize<T>(a, c, mean, 1.0 / std::sqrt(var + a.eps), batch, channels, inner);
        continue;
      }
      double sum = 0;
      for (size_t n = 0; n < batch; ++n) {
        for (size_t i = 0; i < inner; ++i) sum += static_cast<double>(x[(n * channels + c) * inner + i]);
      }
      const double mean = sum / static_cast<double>(count);
      double squares = 0;  // two passes: no cancellation for inputs far from 0
      for (size_t n = 0; n < batch; ++n) {
        for (size_t i = 0; i < inner; ++i) {
          const double d = static_cast<double>(x[(n * channels + c) * inner + i]) - mean;
          squares += d * d;
        }
      }
      const double var = squares / static_cast<double>(count);
      const double invstd = 1.0 / std::sqrt(var + a.eps);
      normalize<T>(a, c, mean, invstd, batch, channels, inner);
      a.save_mean->mutable_data_ptr<T>()[c] = static_cast<T>(mean);
      a.save_invstd->mutable_data_ptr<T>()[c] = static_cast<T>(invstd);
      if (a.running_mean != nullptr) {
        T* rm = a.running_mean->mutable_data_ptr<T>();
        T* rv = a.running_var->mutable_data_ptr<T>();
        const double unbiased = count > 1 ? squares / static_cast<double>(count - 1) : var;
        rm[c] = static_cast<T>((1 - a.momentum) * rm[c] + a.momentum * mean);
        rv[c] = static_cast<T>((1 - a.momentum) * rv[c] + a.momentum * unbiased);
      }
    }
  });
}

}  // namespace

void native_batch_norm_legit_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "aten::_native_batch_norm_legit.out";
  ArgReader r(ctx, kName, args, 12);
  BatchNormArgs a{r.tensor(0), r.optional_tensor(1), r.optional_tensor(2), r.tensor(3), r.tensor(4), r.bool_value(5),
                  r.double_value(6), r.double_value(7), r.tensor(8), r.tensor(9), r.tensor(10)};
  if (!r.ok()) return;
  batch_norm(ctx, kName, a);
}

void native_batch_norm_legit_no_stats_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "aten::_native_batch_norm_legit.no_stats_out";
  ArgReader r(ctx, kName, args, 10);
  BatchNormArgs a{r.tensor(0), r.optional_tensor(1), r.optional_tensor(2), nullptr, nullptr, r.bool_value(3),
                  r.double_value(4), r.double_value(5), r.tensor(6), r.tensor(7), r.tensor(8)};
  if (!r.ok()) return;
  batch_norm(ctx, kName, a);
}

}  // namespace portable
}  // namespace kiln
