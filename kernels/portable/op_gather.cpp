// aten::gather.out(Tensor self, int dim, Tensor index, *, bool sparse_grad=False,
//     Tensor(a!) out)
//
// out[p] = self[p with p[dim] = index[p]] for every position p of index (Long); out
// has index's shape. index must have self's rank and fit inside self in every dim
// but `dim`; each index value must lie in [0, self.size(dim)).
#include "kernels/portable/util/copy.h"
#include "kernels/portable/util/index_args.h"

namespace kiln {
namespace portable {

void gather_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "aten::gather.out";
  ArgReader r(ctx, kName, args, 6);
  Tensor* in = r.tensor(0);
  const int64_t dim_arg = r.int_value(1);
  Tensor* index = r.tensor(2);
  Tensor* out = r.tensor(4);
  if (!r.ok()) return;
  int32_t dim = 0;
  if (!normalize_dim(ctx, kName, dim_arg, in->dim(), &dim) || !check_index_dtype(ctx, kName, *index, false) ||
      !check_same_dtype(ctx, kName, *in, *out, "self", "out")) {
    return;
  }
  const int32_t rank = in->dim() > 0 ? in->dim() : 1;  // a 0-dim tensor acts as [1]
  KILN_KERNEL_CHECK(ctx, (index->dim() > 0 ? index->dim() : 1) == rank, Error::InvalidArgument, kName,
                    "index %s must have self %s's rank", ShapeString(*index).c_str(), ShapeString(*in).c_str());
  int64_t sizes[kTensorMaxDim];
  int64_t strides[kTensorMaxDim];  // self's strides, 0 along dim (added per element)
  for (int32_t d = 0; d < rank; ++d) {
    const int64_t self_size = in->dim() > 0 ? in->size(d) : 1;
    sizes[d] = index->dim() > 0 ? index->size(d) : 1;
    strides[d] = d == dim || in->dim() == 0 ? 0 : in->strides()[d];
    KILN_KERNEL_CHECK(ctx, d == dim || sizes[d] <= self_size, Error::InvalidArgument, kName,
                      "index %s is larger than self %s in dim %d", ShapeString(*index).c_str(),
                      ShapeString(*in).c_str(), static_cast<int>(d));
  }
  if (!resize_output_like(ctx, kName, *out, *index) || out->numel() == 0) return;
  KILN_KERNEL_CHECK(ctx, !memory_overlaps(*in, *out) && !memory_overlaps(*index, *out), Error::InvalidArgument, kName,
                    "out must not share memory with an input");
  const int64_t size = in->dim() > 0 ? in->size(dim) : 1;
  const int64_t stride = in->dim() > 0 ? in->strides()[dim] : 1;
  const size_t esize = in->element_size();
  const uint8_t* src = in->const_data_ptr<uint8_t>();
  uint8_t* dst = out->mutable_data_ptr<uint8_t>();
  size_t i = 0;  // index and out are contiguous with the walked shape: positions in order
  bool ok = true;
  walk(sizes, strides, rank, [&](size_t base) {
    int64_t at = 0;
    if (ok && (ok = checked_index(ctx, kName, index_at(*index, i), size, false, &at))) {
      std::memcpy(dst + i * esize, src + (base + static_cast<size_t>(at * stride)) * esize, esize);
    }
    ++i;
  });
}

}  // namespace portable
}  // namespace kiln
