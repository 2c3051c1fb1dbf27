// aten::slice_scatter.out(Tensor self, Tensor src, int dim=0, SymInt? start=None,
//     SymInt? end=None, SymInt step=1, *, Tensor(a!) out)
// aten::select_scatter.out(Tensor self, Tensor src, int dim, SymInt index, *, Tensor(a!) out)
//
// out = self with one slice replaced by src: self[start:end:step] along dim (Python
// slicing: negative start/end count from the end and are clamped) or self.select(dim,
// index) (src then lacks dim). src must have the slice's shape and self's dtype.
#include "kernels/portable/util/copy.h"
#include "kernels/portable/util/shape_args.h"

namespace kiln {
namespace portable {

namespace {

/// out = self, then out[dim: start, start + step, ... (count)] = src (`drop_dim`: src has no dim).
void write_slice(KernelContext& ctx, const char* name, const Tensor& in, const Tensor& src, int32_t dim, int64_t start,
                 int64_t count, int64_t step, bool drop_dim, Tensor& out) {
  if (!check_same_dtype(ctx, name, in, out, "self", "out") || !check_same_dtype(ctx, name, in, src, "self", "src") ||
      !resize_output_like(ctx, name, out, in)) {
    return;
  }
  int64_t sizes[kTensorMaxDim];
  int64_t dst_strides[kTensorMaxDim];
  int64_t src_strides[kTensorMaxDim];
  bool match = src.dim() == in.dim() - (drop_dim ? 1 : 0);
  for (int32_t d = 0, k = 0; match && d < in.dim(); ++d) {
    sizes[d] = d == dim ? count : in.size(d);
    dst_strides[d] = out.strides()[d] * (d == dim ? step : 1);
    if (d == dim && drop_dim) {
      src_strides[d] = 0;
      continue;
    }
    match = src.size(k) == sizes[d];
    src_strides[d] = src.strides()[k++];
  }
  KILN_KERNEL_CHECK(ctx, match, Error::InvalidArgument, name, "src %s does not have the slice's shape of self %s",
                    ShapeString(src).c_str(), ShapeString(in).c_str());
  KILN_KERNEL_CHECK(ctx, !memory_overlaps(src, out), Error::InvalidArgument, name, "out must not share memory with src");
  copy_all(in, out);
  if (count == 0 || src.numel() == 0) return;
  const size_t esize = in.element_size();
  strided_copy(src.const_data_ptr(), src_strides, out.mutable_data_ptr<uint8_t>() + start * out.strides()[dim] * esize,
               dst_strides, sizes, in.dim(), esize);
}

}  // namespace

void slice_scatter_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "aten::slice_scatter.out";
  ArgReader r(ctx, kName, args, 8);
  Tensor* in = r.tensor(0);
  Tensor* src = r.tensor(1);
  const int64_t dim_arg = r.int_value(2);
  int64_t start = r.optional_int(3, 0);
  bool has_end = false;
  const int64_t end = r.optional_int(4, 0, &has_end);
  const int64_t step = r.int_value(5);
  Tensor* out = r.tensor(6);
  if (!r.ok()) return;
  int32_t dim = 0;
  if (!check_slice(ctx, kName, *in, dim_arg, step, &dim)) return;
  int64_t count = 0;
  python_slice(in->size(dim), start, has_end, end, step, &start, &count);
  write_slice(ctx, kName, *in, *src, dim, start, count, count > 1 ? step : 1, false, *out);
}

void select_scatter_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "aten::select_scatter.out";
  ArgReader r(ctx, kName, args, 6);
  Tensor* in = r.tensor(0);
  Tensor* src = r.tensor(1);
  const int64_t dim_arg = r.int_value(2);
  int64_t index = r.int_value(3);
  Tensor* out = r.tensor(4);
  if (!r.ok()) return;
  KILN_KERNEL_CHECK(ctx, in->dim() > 0, Error::InvalidArgument, kName, "cannot select from a 0-dim tensor");
  int32_t dim = 0;
  if (!normalize_dim(ctx, kName, dim_arg, in->dim(), &dim)) return;
  const int64_t size = in->size(dim);
  KILN_KERNEL_CHECK(ctx, index >= -size && index < size, Error::InvalidArgument, kName,
                    "index %lld is out of range for size %lld", static_cast<long long>(index), static_cast<long long>(size));
  if (index < 0) index += size;
  write_slice(ctx, kName, *in, *src, dim, index, 1, 1, true, *out);
}

}  // namespace portable
}  // namespace kiln
