// aten::native_group_norm.out(Tensor input, Tensor? weight, Tensor? bias, SymInt N,
//     SymInt C, SymInt HxW, int group, float eps, *, Tensor(a!) out0, Tensor(b!) out1,
//     Tensor(c!) out2)
//
// Group norm of an [N, C, *] input (N * C * HxW elements): the C channels form `group`
// groups, each normalised with its own mean and biased variance over its channels and
// positions, then scaled per channel by weight and shifted by bias. out1 / out2 are
// the [N, group] means and reciprocal standard deviations.
#include <cmath>

#include "kernels/portable/util/dtype_dispatch.h"

namespace kiln {
namespace portable {

namespace {

constexpr const char* kName = "aten::native_group_norm.out";

bool check_per_channel(KernelContext& ctx, const Tensor* t, int64_t channels, const Tensor& in, const char* what) {
  if (t == nullptr) return true;
  if (t->dim() != 1 || t->size(0) != channels) {
    KILN_KERNEL_FAIL(ctx, Error::InvalidArgument, kName, "%s has shape %s, expected [%lld]", what,
                     ShapeString(*t).c_str(), static_cast<long long>(channels));
    return false;
  }
  return check_same_dtype(ctx, kName, in, *t, "input", what);
}

}  // namespace

void native_group_norm_out(KernelContext& ctx, Span<EValue*> args) {
  ArgReader r(ctx, kName, args, 12);
  Tensor* in = r.tensor(0);
  Tensor* weight = r.optional_tensor(1);
  Tensor* bias = r.optional_tensor(2);
  const int64_t batch = r.int_value(3);
  const int64_t channels = r.int_value(4);
  const int64_t hxw = r.int_value(5);
  const int64_t groups = r.int_value(6);
  const double eps = r.double_value(7);
  Tensor* out = r.tensor(8);
  Tensor* mean_out = r.tensor(9);
  Tensor* rstd_out = r.tensor(10);
  if (!r.ok()) return;
  const uint64_t planes = in->dim() >= 2 ? static_cast<uint64_t>(in->size(0)) * static_cast<uint64_t>(in->size(1)) : 0;
  const bool shape_ok = in->dim() >= 2 && in->size(0) == batch && in->size(1) == channels && hxw >= 0 &&
                        (planes == 0 ? in->numel() == 0 : in->numel() == planes * static_cast<uint64_t>(hxw) &&
                                                              in->numel() / planes == static_cast<uint64_t>(hxw));
  KILN_KERNEL_CHECK(ctx, shape_ok, Error::InvalidArgument, kName, "input %s does not match N %lld, C %lld, HxW %lld",
                    ShapeString(*in).c_str(), static_cast<long long>(batch), static_cast<long long>(channels),
                    static_cast<long long>(hxw));
  KILN_KERNEL_CHECK(ctx, groups > 0 && channels % groups == 0, Error::InvalidArgument, kName,
                    "group %lld must divide C %lld", static_cast<long long>(groups), static_cast<long long>(channels));
  if (!check_per_channel(ctx, weight, channels, *in, "weight") || !check_per_channel(ctx, bias, channels, *in, "bias") ||
      !check_same_dtype(ctx, kName, *in, *out, "input", "out0") ||
      !check_same_dtype(ctx, kName, *in, *mean_out, "input", "out1") ||
      !check_same_dtype(ctx, kName, *in, *rstd_out, "input", "out2") || !resize_output_like(ctx, kName, *out, *in)) {
    return;
  }
  const SizesType stats[2] = {static_cast<SizesType>(batch), static_cast<SizesType>(groups)};
  if (!resize_output(ctx, kName, *mean_out, {stats, 2}) || !resize_output(ctx, kName, *rstd_out, {stats, 2})) return;
  const size_t per_group = static_cast<size_t>(channels / groups);
  const size_t count = per_group * static_cast<size_t>(hxw);  // elements per group
  dispatch_dtype<kFloatTypes>(ctx, kName, in->scalar_type(), [&](auto tag) {
    using T = decltype(tag);
    for (size_t ng = 0; ng < static_cast<size_t>(batch * groups); ++ng) {
      const T* x = in->const_data_ptr<T>() + ng * count;
      T* y = out->mutable_data_ptr<T>() + ng * count;
      double sum = 0;
      for (size_t i = 0; i < count; ++i) sum += static_cast<double>(x[i]);
      const double mean = count > 0 ? sum / static_cast<double>(count) : 0.0;
      double squares = 0;
      for (size_t i = 0; i < count; ++i) squares += (static_cast<double>(x[i]) - mean) * (static_cast<double>(x[i]) - mean);
      const double rstd = 1.0 / std::sqrt((count > 0 ? squares / static_cast<double>(count) : 0.0) + eps);
      mean_out->mutable_data_ptr<T>()[ng] = static_cast<T>(mean);
      rstd_out->mutable_data_ptr<T>()[ng] = static_cast<T>(rstd);
      for (size_t k = 0; k < per_group; ++k) {
        const size_t c = (ng % static_cast<size_t>(groups)) * per_group + k;
        const double w = weight != nullptr ? static_cast<double>(weight->const_data_ptr<T>()[c]) : 1.0;
        const double b = bias != nullptr ? static_cast<double>(bias->const_data_ptr<T>()[c]) : 0.0;
        for (size_t i = k * static_cast<size_t>(hxw); i < (k + 1) * static_cast<size_t>(hxw); ++i) {
          y[i] = static_cast<T>((static_cast<double>(x[i]) - mean) * rstd * w + b);
        }
      }
    }
  });
}

}  // namespace portable
}  // namespace kiln
