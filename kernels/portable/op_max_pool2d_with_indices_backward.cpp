// aten::max_pool2d_with_indices_backward.grad_input(Tensor grad_output, Tensor self,
//     int[2] kernel_size, int[2] stride, int[2] padding, int[2] dilation, bool ceil_mode,
//     Tensor indices, *, Tensor(a!) grad_input)
//
// The gradient of max_pool2d_with_indices: grad_input (self's shape) is zero except at
// each window's maximum, which collects the window's grad_output. indices (Long, from
// the forward pass) give each maximum's position h * W + w within its plane.
#include "kernels/portable/util/dtype_dispatch.h"
#include "kernels/portable/util/pool2d.h"

namespace kiln {
namespace portable {

void max_pool2d_with_indices_backward_grad_input(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "aten::max_pool2d_with_indices_backward.grad_input";
  ArgReader r(ctx, kName, args, 10);
  Tensor* grad_out = r.tensor(0);
  Tensor* in = r.tensor(1);
  const Span<const int64_t> kernel = r.int_list(2);
  const Span<const int64_t> stride = r.int_list(3);
  const Span<const int64_t> padding = r.int_list(4);
  const Span<const int64_t> dilation = r.int_list(5);
  const bool ceil_mode = r.bool_value(6);
  Tensor* indices = r.tensor(7);
  Tensor* grad_in = r.tensor(8);
  if (!r.ok()) return;
  KILN_KERNEL_CHECK(ctx, in->dim() == 3 || in->dim() == 4, Error::InvalidArgument, kName,
                    "self must be 3-D or 4-D, got %s", ShapeString(*in).c_str());
  Pool2dShape s{};
  if (!read_pool2d_window(ctx, kName, kernel, stride, padding, dilation, &s) ||
      !check_same_dtype(ctx, kName, *in, *grad_out, "self", "grad_output") ||
      !check_same_dtype(ctx, kName, *in, *grad_in, "self", "grad_input") ||
      !check_dtype(ctx, kName, *indices, ScalarType::Long, "indices")) {
    return;
  }
  s.in_h = in->size(-2);
  s.in_w = in->size(-1);
  s.out_h = pool_detail::output_size(s.in_h, s.kernel_h, s.pad_h, s.stride_h, s.dilation_h, ceil_mode);
  s.out_w = pool_detail::output_size(s.in_w, s.kernel_w, s.pad_w, s.stride_w, s.dilation_w, ceil_mode);
  bool match = grad_out->dim() == in->dim() && same_shape(*grad_out, *indices);
  for (int32_t d = 0; match && d < in->dim(); ++d) {
    const int64_t want = d == in->dim() - 2 ? s.out_h : (d == in->dim() - 1 ? s.out_w : in->size(d));
    match = grad_out->size(d) == want;
  }
  KILN_KERNEL_CHECK(ctx, match, Error::InvalidArgument, kName,
                    "grad_output %s and indices %s must have the pooled shape of self %s",
                    ShapeString(*grad_out).c_str(), ShapeString(*indices).c_str(), ShapeString(*in).c_str());
  if (!resize_output_like(ctx, kName, *grad_in, *in)) return;
  const size_t plane_in = static_cast<size_t>(s.in_h * s.in_w);
  const size_t plane_out = static_cast<size_t>(s.out_h * s.out_w);
  const size_t planes = plane_in > 0 ? in->numel() / plane_in : 0;
  const int64_t* idx = indices->const_data_ptr<int64_t>();
  dispatch_dtype<kFloatTypes>(ctx, kName, in->scalar_type(), [&](auto tag) {
    using T = decltype(tag);
    const T* g = grad_out->const_data_ptr<T>();
    T* gi = grad_in->mutable_data_ptr<T>();
    for (size_t i = 0; i < grad_in->numel(); ++i) gi[i] = 0;
    for (size_t p = 0; p < planes; ++p) {
      for (size_t o = 0; o < plane_out; ++o) {
        const int64_t at = idx[p * plane_out + o];
        KILN_KERNEL_CHECK(ctx, at >= 0 && static_cast<size_t>(at) < plane_in, Error::InvalidArgument, kName,
                          "index %lld is outside the %zu-element plane", static_cast<long long>(at), plane_in);
        gi[p * plane_in + static_cast<size_t>(at)] += g[p * plane_out + o];
      }
    }
  });
}

}  // namespace portable
}  // namespace kiln
