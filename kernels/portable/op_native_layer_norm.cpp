// aten::native_layer_norm.out(Tensor input, SymInt[] normalized_shape, Tensor? weight,
//     Tensor? bias, float eps, *, Tensor(a!) out0, Tensor(b!) out1, Tensor(c!) out2)
//
// Normalises over the trailing `normalized_shape` dims: out0 = (x - mean) * rstd * w + b,
// with the biased variance. out1 / out2 receive mean and rstd (shape: the leading dims
// followed by ones) unless they are empty.
#include <cmath>
#include <initializer_list>

#include "kernels/portable/util/kernel_args.h"

namespace kiln {
namespace portable {

namespace {

constexpr const char* kName = "aten::native_layer_norm.out";

template <typename T>
void layer_norm(const T* x, const T* w, const T* b, double eps, size_t rows, size_t n, T* y,
                T* mean_out, T* rstd_out) {
  for (size_t i = 0; i < rows; ++i) {
    const T* xr = x + i * n;
    T* yr = y + i * n;
    double sum = 0;
    for (size_t j = 0; j < n; ++j) sum += static_cast<double>(xr[j]);
    const double mean = n > 0 ? sum / static_cast<double>(n) : 0.0;
    double sq = 0;
    for (size_t j = 0; j < n; ++j) {
      const double d = static_cast<double>(xr[j]) - mean;
      sq += d * d;
    }
    const double rstd = 1.0 / std::sqrt((n > 0 ? sq / static_cast<double>(n) : 0.0) + eps);
    const T tm = static_cast<T>(mean);
    const T tr = static_cast<T>(rstd);
    for (size_t j = 0; j < n; ++j) {
      T v = (xr[j] - tm) * tr;
      if (w != nullptr) v *= w[j];
      if (b != nullptr) v += b[j];
      yr[j] = v;
    }
    if (mean_out != nullptr) mean_out[i] = tm;
    if (rstd_out != nullptr) rstd_out[i] = tr;
  }
}

/// Resizes a statistics output to [leading dims, 1...]; nullptr (skip) when it is empty.
template <typename T>
T* stats_output(KernelContext& ctx, Tensor& t, const Tensor& in, int32_t axis, bool* ok) {
  if (t.numel() == 0) return nullptr;
  SizesType sizes[kTensorMaxDim];
  for (int32_t d = 0; d < in.dim(); ++d) sizes[d] = d < axis ? in.size(d) : 1;
  *ok = *ok && check_dtype(ctx, kName, t, in.scalar_type(), "mean/rstd output") &&
        resize_output(ctx, kName, t, {sizes, static_cast<size_t>(in.dim())});
  return t.mutable_data_ptr<T>();
}

}  // namespace

void native_layer_norm_out(KernelContext& ctx, Span<EValue*> args) {
  ArgReader r(ctx, kName, args, 9);
  Tensor* in = r.tensor(0);
  const Span<const int64_t> shape = r.int_list(1);
  Tensor* weight = r.optional_tensor(2);
  Tensor* bias = r.optional_tensor(3);
  const double eps = r.double_value(4);
  Tensor* out = r.tensor(5);
  Tensor* mean = r.tensor(6);
  Tensor* rstd = r.tensor(7);
  if (!r.ok()) return;
  const int32_t norm_dims = static_cast<int32_t>(shape.size());
  KILN_KERNEL_CHECK(ctx, norm_dims >= 1 && norm_dims <= in->dim(), Error::InvalidArgument, kName,
                    "normalized_shape has %d dims for input %s", static_cast<int>(norm_dims),
                    ShapeString(*in).c_str());
  const int32_t axis = in->dim() - norm_dims;
  size_t n = 1;
  for (int32_t i = 0; i < norm_dims; ++i) {
    KILN_KERNEL_CHECK(ctx, shape[i] == in->size(axis + i), Error::InvalidArgument, kName,
                      "normalized_shape does not match the trailing dims of %s", ShapeString(*in).c_str());
    n *= static_cast<size_t>(shape[i]);
  }
  for (const Tensor* t : {weight, bias}) {
    KILN_KERNEL_CHECK(ctx, t == nullptr || (t->numel() == n && t->scalar_type() == in->scalar_type()),
                      Error::InvalidArgument, kName, "weight/bias %s must have %zu elements of dtype %s",
                      ShapeString(*t).c_str(), n, scalar_type_name(in->scalar_type()));
  }
  if (!check_same_dtype(ctx, kName, *in, *out, "input", "out0") ||
      !resize_output_like(ctx, kName, *out, *in)) {
    return;
  }
  const size_t rows = n == 0 ? 0 : in->numel() / n;
  bool ok = true;
  if (in->scalar_type() == ScalarType::Float) {
    float* m = stats_output<float>(ctx, *mean, *in, axis, &ok);
    float* s = stats_output<float>(ctx, *rstd, *in, axis, &ok);
    if (!ok) return;
    layer_norm<float>(in->const_data_ptr<float>(), weight ? weight->const_data_ptr<float>() : nullptr,
                      bias ? bias->const_data_ptr<float>() : nullptr, eps, rows, n,
                      out->mutable_data_ptr<float>(), m, s);
  } else if (in->scalar_type() == ScalarType::Double) {
    double* m = stats_output<double>(ctx, *mean, *in, axis, &ok);
    double* s = stats_output<double>(ctx, *rstd, *in, axis, &ok);
    if (!ok) return;
    layer_norm<double>(in->const_data_ptr<double>(), weight ? weight->const_data_ptr<double>() : nullptr,
                       bias ? bias->const_data_ptr<double>() : nullptr, eps, rows, n,
                       out->mutable_data_ptr<double>(), m, s);
  } else {
    KILN_KERNEL_FAIL(ctx, Error::InvalidType, kName, "dtype %s is not supported (Float, Double)",
                     scalar_type_name(in->scalar_type()));
  }
}

}  // namespace portable
}  // namespace kiln
