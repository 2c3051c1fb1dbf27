// aten::split_copy.Tensor_out(Tensor self, SymInt split_size, int dim=0, *, Tensor(a!)[] out) -> ()
// aten::split_with_sizes_copy.out(Tensor self, SymInt[] split_sizes, int dim=0, *,
//     Tensor(a!)[] out) -> ()
// aten::unbind_copy.int_out(Tensor self, int dim=0, *, Tensor(a!)[] out) -> ()
//
// Consecutive pieces of self along `dim`, one per out tensor: of split_size elements
// (the last may be shorter), of the given sizes, or of one element with `dim` removed
// (unbind). GRU, LSTM and tensor.chunk() export to split_with_sizes.
#include "kernels/portable/util/copy.h"
#include "kernels/portable/util/kernel_args.h"

namespace kiln {
namespace portable {

namespace {

/// Copies piece k ([start, start + length) along dim) of self into outs[k]; with
/// `drop_dim` (length 1) the dimension is removed from out's shape.
bool copy_piece(KernelContext& ctx, const char* name, const Tensor& in, int32_t dim, int64_t start,
                int64_t length, bool drop_dim, Tensor& out) {
  if (!check_same_dtype(ctx, name, in, out, "self", "out")) return false;
  SizesType out_sizes[kTensorMaxDim];
  int64_t sizes[kTensorMaxDim];
  int32_t out_rank = 0;
  for (int32_t d = 0; d < in.dim(); ++d) {
    sizes[d] = d == dim ? length : in.size(d);
    if (d != dim || !drop_dim) out_sizes[out_rank++] = static_cast<SizesType>(sizes[d]);
  }
  if (!resize_output(ctx, name, out, {out_sizes, static_cast<size_t>(out_rank)})) return false;
  if (out.numel() == 0) return true;
  int64_t src_strides[kTensorMaxDim];
  int64_t dst_strides[kTensorMaxDim];
  for (int32_t d = 0; d < in.dim(); ++d) src_strides[d] = in.strides()[d];
  contiguous_strides(sizes, in.dim(), dst_strides);
  const size_t esize = in.element_size();
  strided_copy(in.const_data_ptr<uint8_t>() + static_cast<size_t>(start * in.strides()[dim]) * esize, src_strides,
               out.mutable_data_ptr(), dst_strides, sizes, in.dim(), esize);
  return true;
}

/// Normalizes `dim_arg` into *dim (self must have dims).
bool split_dim(KernelContext& ctx, const char* name, const Tensor& in, int64_t dim_arg, int32_t* dim) {
  if (in.dim() == 0) {
    KILN_KERNEL_FAIL(ctx, Error::InvalidArgument, name, "cannot split a 0-dim tensor");
    return false;
  }
  return normalize_dim(ctx, name, dim_arg, in.dim(), dim);
}

/// Fails unless out has one tensor per piece.
bool check_piece_count(KernelContext& ctx, const char* name, const Tensor& in, int32_t dim, int64_t pieces,
                       size_t outs) {
  if (static_cast<size_t>(pieces) != outs) {
    KILN_KERNEL_FAIL(ctx, Error::InvalidArgument, name, "self %s splits into %lld pieces along dim %d, out has %zu",
                     ShapeString(in).c_str(), static_cast<long long>(pieces), static_cast<int>(dim), outs);
    return false;
  }
  return true;
}

}  // namespace

void split_copy_tensor_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "aten::split_copy.Tensor_out";
  ArgReader r(ctx, kName, args, 4);
  Tensor* in = r.tensor(0);
  const int64_t split_size = r.int_value(1);
  const int64_t dim_arg = r.int_value(2);
  const Span<Tensor* const> outs = r.tensor_list(3);
  if (!r.ok()) return;
  int32_t dim = 0;
  if (!split_dim(ctx, kName, *in, dim_arg, &dim)) return;
  const int64_t size = in->size(dim);
  KILN_KERNEL_CHECK(ctx, split_size > 0 || (split_size == 0 && size == 0), Error::InvalidArgument, kName,
                    "split_size %lld is invalid for size %lld", static_cast<long long>(split_size),
                    static_cast<long long>(size));
  // An empty dim still makes one (empty) piece.
  const int64_t pieces = size == 0 ? 1 : (size - 1) / split_size + 1;
  if (!check_piece_count(ctx, kName, *in, dim, pieces, outs.size())) return;
  for (int64_t k = 0; k < pieces; ++k) {
    const int64_t start = k * split_size;
    const int64_t length = size - start < split_size ? size - start : split_size;
    if (!copy_piece(ctx, kName, *in, dim, start, length, false, *outs[k])) return;
  }
}

void split_with_sizes_copy_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "aten::split_with_sizes_copy.out";
  ArgReader r(ctx, kName, args, 4);
  Tensor* in = r.tensor(0);
  const Span<const int64_t> split_sizes = r.int_list(1);
  const int64_t dim_arg = r.int_value(2);
  const Span<Tensor* const> outs = r.tensor_list(3);
  if (!r.ok()) return;
  int32_t dim = 0;
  if (!split_dim(ctx, kName, *in, dim_arg, &dim) ||
      !check_piece_count(ctx, kName, *in, dim, static_cast<int64_t>(split_sizes.size()), outs.size())) {
    return;
  }
  int64_t total = 0;
  for (const int64_t s : split_sizes) {
    KILN_KERNEL_CHECK(ctx, s >= 0 && s <= INT32_MAX, Error::InvalidArgument, kName, "split size %lld is invalid",
                      static_cast<long long>(s));
    total += s;
  }
  KILN_KERNEL_CHECK(ctx, total == in->size(dim), Error::InvalidArgument, kName,
                    "split sizes add up to %lld, dim %d of self has %d", static_cast<long long>(total),
                    static_cast<int>(dim), static_cast<int>(in->size(dim)));
  int64_t start = 0;
  for (size_t k = 0; k < split_sizes.size(); ++k) {
    if (!copy_piece(ctx, kName, *in, dim, start, split_sizes[k], false, *outs[k])) return;
    start += split_sizes[k];
  }
}

void unbind_copy_int_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "aten::unbind_copy.int_out";
  ArgReader r(ctx, kName, args, 3);
  Tensor* in = r.tensor(0);
  const int64_t dim_arg = r.int_value(1);
  const Span<Tensor* const> outs = r.tensor_list(2);
  if (!r.ok()) return;
  int32_t dim = 0;
  if (!split_dim(ctx, kName, *in, dim_arg, &dim) || !check_piece_count(ctx, kName, *in, dim, in->size(dim), outs.size())) {
    return;
  }
  const int64_t pieces = in->size(dim);
  for (int64_t k = 0; k < pieces; ++k) {
    if (!copy_piece(ctx, kName, *in, dim, k, 1, true, *outs[k])) return;
  }
}

}  // namespace portable
}  // namespace kiln
