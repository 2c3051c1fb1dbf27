// aten::topk.values(Tensor self, SymInt k, int dim=-1, bool largest=True, bool sorted=True,
//     *, Tensor(a!) values, Tensor(b!) indices)
//
// The k largest (or smallest) elements of each slice along dim, best first, with their
// positions (Long). NaN ranks above every number, as in PyTorch; equal values keep
// their order. Results are always sorted (sorted=false allows any order). Needs temp
// memory for one slice's positions (4 bytes per element).
#include <algorithm>
#include <type_traits>

#include "kernels/portable/util/copy.h"
#include "kernels/portable/util/dtype_dispatch.h"

namespace kiln {
namespace portable {

namespace {

template <typename T>
bool is_nan(T v) {
  if constexpr (std::is_floating_point_v<T>) {
    return v != v;
  } else {
    return false;
  }
}

}  // namespace

void topk_values(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "aten::topk.values";
  ArgReader r(ctx, kName, args, 8);
  Tensor* in = r.tensor(0);
  const int64_t k = r.int_value(1);
  const int64_t dim_arg = r.int_value(2);
  const bool largest = r.bool_value(3);
  Tensor* values = r.tensor(5);
  Tensor* indices = r.tensor(6);
  if (!r.ok()) return;
  int32_t dim = 0;
  if (!normalize_dim(ctx, kName, dim_arg, in->dim(), &dim) ||
      !check_same_dtype(ctx, kName, *in, *values, "self", "values") ||
      !check_dtype(ctx, kName, *indices, ScalarType::Long, "indices")) {
    return;
  }
  const int64_t n = in->dim() > 0 ? in->size(dim) : 1;
  KILN_KERNEL_CHECK(ctx, k >= 0 && k <= n, Error::InvalidArgument, kName, "k %lld is not in [0, %lld]",
                    static_cast<long long>(k), static_cast<long long>(n));
  SizesType sizes[kTensorMaxDim];
  size_t outer = 1, inner = 1;
  for (int32_t d = 0; d < in->dim(); ++d) {
    sizes[d] = d == dim ? static_cast<SizesType>(k) : in->size(d);
    if (d < dim) outer *= static_cast<size_t>(in->size(d));
    if (d > dim) inner *= static_cast<size_t>(in->size(d));
  }
  const Span<const SizesType> shape{sizes, static_cast<size_t>(in->dim())};
  if (!resize_output(ctx, kName, *values, shape) || !resize_output(ctx, kName, *indices, shape)) return;
  if (values->numel() == 0) return;
  KILN_KERNEL_CHECK(ctx, !memory_overlaps(*in, *values) && !memory_overlaps(*in, *indices), Error::InvalidArgument,
                    kName, "the outputs must not share memory with self");
  int32_t* order = static_cast<int32_t*>(ctx.allocate_temp(static_cast<size_t>(n) * sizeof(int32_t)));
  KILN_KERNEL_CHECK(ctx, order != nullptr, Error::MemoryAllocationFailed, kName,
                    "no temp memory for %lld positions", static_cast<long long>(n));
  dispatch_dtype<kRealTypes>(ctx, kName, in->scalar_type(), [&](auto tag) {
    using T = decltype(tag);
    for (size_t o = 0; o < outer; ++o) {
      for (size_t i = 0; i < inner; ++i) {
        const T* x = in->const_data_ptr<T>() + o * static_cast<size_t>(n) * inner + i;
        auto at = [&](int32_t p) { return x[static_cast<size_t>(p) * inner]; };
        auto before = [&](int32_t a, int32_t b) {
          const T va = at(a), vb = at(b);
          const bool na = is_nan(va), nb = is_nan(vb);
          if (na || nb) return largest ? (na && !nb) || (na && nb && a < b) : (nb && !na) || (na && nb && a < b);
          if (va != vb) return largest ? va > vb : va < vb;
          return a < b;
        };
        for (int32_t p = 0; p < static_cast<int32_t>(n); ++p) order[p] = p;
        std::partial_sort(order, order + k, order + n, before);
        for (int64_t j = 0; j < k; ++j) {
          const size_t dst = (o * static_cast<size_t>(k) + static_cast<size_t>(j)) * inner + i;
          values->mutable_data_ptr<T>()[dst] = at(order[j]);
          indices->mutable_data_ptr<int64_t>()[dst] = order[j];
        }
      }
    }
  });
}

}  // namespace portable
}  // namespace kiln
