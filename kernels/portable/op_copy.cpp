// aten::copy.out(Tensor self, Tensor src, bool non_blocking=False, *, Tensor(a!) out)
// aten::copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!)
//
// src broadcast to self's shape and converted to self's dtype; copy.out writes it to
// out (self's shape and dtype), copy_ into self (the ExecuTorch programs' buffer
// updates). src may be the destination itself; other overlaps fail the kernel.
#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/copy.h"
#include "kernels/portable/util/dtype_dispatch.h"

namespace kiln {
namespace portable {

namespace {

/// dst (shape and dtype of self) = src broadcast and converted.
void broadcast_copy(KernelContext& ctx, const char* name, const Tensor& src, Tensor& dst) {
  KILN_KERNEL_CHECK(ctx, broadcasts_to(src.sizes(), dst.sizes()), Error::InvalidArgument, name,
                    "src %s does not broadcast to self %s", ShapeString(src).c_str(), ShapeString(dst).c_str());
  if (dst.numel() == 0) return;
  const int32_t rank = dst.dim();
  const int32_t shift = rank - src.dim();
  int64_t sizes[kTensorMaxDim];
  int64_t src_strides[kTensorMaxDim];
  int64_t dst_strides[kTensorMaxDim];
  for (int32_t d = 0; d < rank; ++d) {
    sizes[d] = dst.size(d);
    dst_strides[d] = dst.strides()[d];
    src_strides[d] = d < shift || src.size(d - shift) == 1 ? 0 : src.strides()[d - shift];
  }
  const bool same_memory = src.const_data_ptr() == dst.const_data_ptr() && same_shape(src, dst) &&
                           src.scalar_type() == dst.scalar_type();
  if (same_memory) return;
  KILN_KERNEL_CHECK(ctx, !memory_overlaps(src, dst), Error::InvalidArgument, name,
                    "src overlaps the destination without being it");
  if (src.scalar_type() == dst.scalar_type()) {
    strided_copy(src.const_data_ptr(), src_strides, dst.mutable_data_ptr(), dst_strides, sizes, rank,
                 dst.element_size());
    return;
  }
  KILN_KERNEL_CHECK(ctx,
                    strided_cast_copy(src.const_data_ptr(), src.scalar_type(), src_strides, dst.mutable_data_ptr(),
                                      dst.scalar_type(), dst_strides, sizes, rank),
                    Error::InvalidType, name, "cannot convert %s to %s", scalar_type_name(src.scalar_type()),
                    scalar_type_name(dst.scalar_type()));
}

}  // namespace

void copy_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "aten::copy.out";
  ArgReader r(ctx, kName, args, 5);
  Tensor* self = r.tensor(0);
  Tensor* src = r.tensor(1);
  Tensor* out = r.tensor(3);
  if (!r.ok()) return;
  if (!check_same_dtype(ctx, kName, *self, *out, "self", "out") || !resize_output_like(ctx, kName, *out, *self)) {
    return;
  }
  broadcast_copy(ctx, kName, *src, *out);
}

void copy_inplace(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "aten::copy_";
  ArgReader r(ctx, kName, args, 4);
  Tensor* self = r.tensor(0);
  Tensor* src = r.tensor(1);
  Tensor* ret = r.tensor(3);
  if (!r.ok()) return;
  KILN_KERNEL_CHECK(ctx, ret->const_data_ptr() == self->const_data_ptr() && same_shape(*ret, *self) &&
                        ret->scalar_type() == self->scalar_type(),
                    Error::InvalidArgument, kName, "the returned tensor must be self");
  broadcast_copy(ctx, kName, *src, *self);
}

}  // namespace portable
}  // namespace kiln
