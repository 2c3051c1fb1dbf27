// aten::_cdist_forward.out(Tensor x1, Tensor x2, float p, int? compute_mode, *,
//     Tensor(a!) out)
//
// The p-norm distance between every row of x1 [..., P, M] and every row of x2
// [..., R, M]: out is [..., P, R], the leading (batch) dims broadcast. compute_mode
// only picks PyTorch's algorithm; every mode computes the distances directly here.
#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/dtype_dispatch.h"
#include "kernels/portable/util/p_norm_distance.h"
#include "kernels/portable/util/walk.h"

namespace kiln {
namespace portable {

void cdist_forward_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "aten::_cdist_forward.out";
  ArgReader r(ctx, kName, args, 6);
  Tensor* x1 = r.tensor(0);
  Tensor* x2 = r.tensor(1);
  const double p = r.double_value(2);
  Tensor* out = r.tensor(4);
  if (!r.ok()) return;
  KILN_KERNEL_CHECK(ctx, x1->dim() >= 2 && x2->dim() >= 2 && x1->size(-1) == x2->size(-1), Error::InvalidArgument,
                    kName, "x1 %s and x2 %s must be [..., rows, M] with the same M", ShapeString(*x1).c_str(),
                    ShapeString(*x2).c_str());
  KILN_KERNEL_CHECK(ctx, p >= 0, Error::InvalidArgument, kName, "p %g must be >= 0", p);
  if (!check_same_dtype(ctx, kName, *x1, *x2, "x1", "x2") || !check_same_dtype(ctx, kName, *x1, *out, "x1", "out")) {
    return;
  }
  SizesType sizes[kTensorMaxDim];
  int32_t batch_rank = 0;
  KILN_KERNEL_CHECK(ctx,
                    broadcast_shapes({x1->sizes().data(), static_cast<size_t>(x1->dim() - 2)},
                                     {x2->sizes().data(), static_cast<size_t>(x2->dim() - 2)}, sizes, &batch_rank),
                    Error::InvalidArgument, kName, "the batch dims of x1 %s and x2 %s do not broadcast",
                    ShapeString(*x1).c_str(), ShapeString(*x2).c_str());
  const int64_t rows1 = x1->size(-2), rows2 = x2->size(-2);
  const size_t m = static_cast<size_t>(x1->size(-1));
  sizes[batch_rank] = static_cast<SizesType>(rows1);
  sizes[batch_rank + 1] = static_cast<SizesType>(rows2);
  if (!resize_output(ctx, kName, *out, {sizes, static_cast<size_t>(batch_rank + 2)}) || out->numel() == 0) return;
  // Per batch dim, the stride (in elements) of each input, 0 where it is broadcast.
  int64_t batch[kTensorMaxDim], strides1[kTensorMaxDim], strides2[kTensorMaxDim];
  for (int32_t d = 0; d < batch_rank; ++d) {
    batch[d] = sizes[d];
    const int32_t d1 = d - (batch_rank - (x1->dim() - 2)), d2 = d - (batch_rank - (x2->dim() - 2));
    strides1[d] = d1 >= 0 && x1->size(d1) != 1 ? x1->strides()[d1] : 0;
    strides2[d] = d2 >= 0 && x2->size(d2) != 1 ? x2->strides()[d2] : 0;
  }
  dispatch_dtype<kFloatTypes>(ctx, kName, x1->scalar_type(), [&](auto tag) {
    using T = decltype(tag);
    T* o = out->mutable_data_ptr<T>();
    auto distances = [&](int64_t a, int64_t b) {
      const T* a_rows = x1->const_data_ptr<T>() + a;
      const T* b_rows = x2->const_data_ptr<T>() + b;
      for (int64_t i = 0; i < rows1; ++i) {
        for (int64_t j = 0; j < rows2; ++j) *o++ = p_norm_distance(a_rows + i * m, b_rows + j * m, m, p);
      }
    };
    walk2(batch, strides1, strides2, batch_rank, distances);  // rank 0: one call
  });
}

}  // namespace portable
}  // namespace kiln
