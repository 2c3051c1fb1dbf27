// aten::scatter.src_out(Tensor self, int dim, Tensor index, Tensor src, *, Tensor(a!) out)
// aten::scatter.value_out(Tensor self, int dim, Tensor index, Scalar value, *, Tensor(a!) out)
// aten::scatter_add.out(Tensor self, int dim, Tensor index, Tensor src, *, Tensor(a!) out)
//
// out = self, then for every position p of index (Long): out[p with p[dim] = index[p]]
// = src[p] (or value), or += src[p] for scatter_add. index has self's rank, fits inside
// src, and inside self in every dim but `dim`; values lie in [0, self.size(dim)).
// Positions are visited in order, so the last of repeated indices wins.
#include "kernels/portable/util/copy.h"
#include "kernels/portable/util/index_args.h"
#include "kernels/portable/util/scalar_fill.h"
#include "kernels/portable/util/wrapping.h"

namespace kiln {
namespace portable {

namespace {

/// Checks the arguments, copies self into out and calls f(out_offset, src_offset) per
/// index position (src offsets follow `src`'s strides, or 0 without src).
template <typename F>
void scatter(KernelContext& ctx, const char* name, const Tensor& in, int64_t dim_arg, const Tensor& index,
             const Tensor* src, Tensor& out, F&& f) {
  int32_t dim = 0;
  if (!normalize_dim(ctx, name, dim_arg, in.dim(), &dim) || !check_index_dtype(ctx, name, index, false) ||
      !check_same_dtype(ctx, name, in, out, "self", "out") ||
      (src != nullptr && !check_same_dtype(ctx, name, in, *src, "self", "src"))) {
    return;
  }
  const int32_t rank = in.dim() > 0 ? in.dim() : 1;  // 0-dim tensors act as [1]
  auto size_of = [](const Tensor& t, int32_t d) -> int64_t { return t.dim() > 0 ? t.size(d) : 1; };
  KILN_KERNEL_CHECK(ctx, (index.dim() > 0 ? index.dim() : 1) == rank && (src == nullptr || (src->dim() > 0 ? src->dim() : 1) == rank),
                    Error::InvalidArgument, name, "index %s and src must have self %s's rank",
                    ShapeString(index).c_str(), ShapeString(in).c_str());
  // Resized first: the strides below must be out's at its final sizes, not at its bound.
  if (!resize_output_like(ctx, name, out, in)) return;
  int64_t sizes[kTensorMaxDim];
  int64_t out_strides[kTensorMaxDim];  // 0 along dim: the index value says where
  int64_t src_strides[kTensorMaxDim];
  for (int32_t d = 0; d < rank; ++d) {
    sizes[d] = size_of(index, d);
    out_strides[d] = d == dim || in.dim() == 0 ? 0 : out.strides()[d];
    src_strides[d] = src == nullptr || src->dim() == 0 ? 0 : src->strides()[d];
    KILN_KERNEL_CHECK(ctx, (d == dim || sizes[d] <= size_of(in, d)) && (src == nullptr || sizes[d] <= size_of(*src, d)),
                      Error::InvalidArgument, name, "index %s does not fit self %s / src in dim %d",
                      ShapeString(index).c_str(), ShapeString(in).c_str(), static_cast<int>(d));
  }
  KILN_KERNEL_CHECK(ctx, !memory_overlaps(index, out) && (src == nullptr || !memory_overlaps(*src, out)),
                    Error::InvalidArgument, name, "out must not share memory with index or src");
  copy_all(in, out);
  const int64_t size = size_of(in, dim);
  const int64_t stride = in.dim() > 0 ? out.strides()[dim] : 1;
  size_t i = 0;  // index is contiguous: its positions come in order
  bool ok = true;
  walk2(sizes, out_strides, src_strides, rank, [&](int64_t o, int64_t s) {
    int64_t at = 0;
    if (ok && (ok = checked_index(ctx, name, index_at(index, i), size, false, &at))) {
      f(static_cast<size_t>(o + at * stride), static_cast<size_t>(s));
    }
    ++i;
  });
}

/// The arguments of the two (self, dim, index, src, *, out) overloads.
struct ScatterArgs {
  Tensor* self = nullptr;
  int64_t dim = 0;
  Tensor* index = nullptr;
  Tensor* src = nullptr;
  Tensor* out = nullptr;
};

bool read_scatter_args(KernelContext& ctx, const char* name, Span<EValue*> args, ScatterArgs* a) {
  ArgReader r(ctx, name, args, 6);
  a->self = r.tensor(0);
  a->dim = r.int_value(1);
  a->index = r.tensor(2);
  a->src = r.tensor(3);
  a->out = r.tensor(4);
  return r.ok();
}

}  // namespace

void scatter_src_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "aten::scatter.src_out";
  ScatterArgs a;
  if (!read_scatter_args(ctx, kName, args, &a)) return;
  const size_t esize = a.self->element_size();
  const uint8_t* s = a.src->const_data_ptr<uint8_t>();
  uint8_t* o = a.out->mutable_data_ptr<uint8_t>();
  scatter(ctx, kName, *a.self, a.dim, *a.index, a.src, *a.out,
          [&](size_t at, size_t from) { std::memcpy(o + at * esize, s + from * esize, esize); });
}

void scatter_value_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "aten::scatter.value_out";
  ArgReader r(ctx, kName, args, 6);
  Tensor* in = r.tensor(0);
  const int64_t dim = r.int_value(1);
  Tensor* index = r.tensor(2);
  const ScalarArg value = r.scalar_arg(3);
  Tensor* out = r.tensor(4);
  if (!r.ok()) return;
  dispatch_dtype<kAllTypes>(ctx, kName, out->scalar_type(), [&](auto tag) {
    using T = decltype(tag);
    const T v = scalar_as<T>(value);
    T* o = out->mutable_data_ptr<T>();
    scatter(ctx, kName, *in, dim, *index, nullptr, *out, [&](size_t at, size_t) { o[at] = v; });
  });
}

void scatter_add_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "aten::scatter_add.out";
  ScatterArgs a;
  if (!read_scatter_args(ctx, kName, args, &a)) return;
  dispatch_dtype<kRealTypes>(ctx, kName, a.out->scalar_type(), [&](auto tag) {
    using T = decltype(tag);
    const T* s = a.src->const_data_ptr<T>();
    T* o = a.out->mutable_data_ptr<T>();
    scatter(ctx, kName, *a.self, a.dim, *a.index, a.src, *a.out,
            [&](size_t at, size_t from) { o[at] = wrap_add(o[at], s[from]); });
  });
}

}  // namespace portable
}  // namespace kiln
