#include "kernels/portable/util/copy.h"

#include "kernels/portable/util/dtype_dispatch.h"

namespace kiln {
namespace portable {

namespace {

template <typename E>
void copy_elements(const uint8_t* src, const int64_t* src_strides, uint8_t* dst,
                   const int64_t* dst_strides, const int64_t* sizes, int32_t rank) {
  const E* s = reinterpret_cast<const E*>(src);
  E* d = reinterpret_cast<E*>(dst);
  if (rank == 0) {
    d[0] = s[0];
    return;
  }
  const int64_t inner = sizes[rank - 1];
  const int64_t ss = src_strides[rank - 1];
  const int64_t ds = dst_strides[rank - 1];
  if (inner == 0) return;
  if (ss == 1 && ds == 1) {
    // Dense rows: one memcpy per row.
    walk2(sizes, src_strides, dst_strides, rank - 1, [&](int64_t so, int64_t dof) {
      std::memcpy(d + dof, s + so, static_cast<size_t>(inner) * sizeof(E));
    });
    return;
  }
  if (rank == 1) {
    for (int64_t i = 0; i < inner; ++i) d[i * ds] = s[i * ss];
    return;
  }
  // Strided rows (transposes): copy the last two dimensions in square tiles so that
  // both the reads and the writes stay within a few cache lines.
  constexpr int64_t kTile = 32;
  const int64_t rows = sizes[rank - 2];
  const int64_t rs = src_strides[rank - 2];
  const int64_t rd = dst_strides[rank - 2];
  walk2(sizes, src_strides, dst_strides, rank - 2, [&](int64_t so, int64_t dof) {
    for (int64_t i0 = 0; i0 < rows; i0 += kTile) {
      const int64_t i1 = i0 + kTile < rows ? i0 + kTile : rows;
      for (int64_t j0 = 0; j0 < inner; j0 += kTile) {
        const int64_t j1 = j0 + kTile < inner ? j0 + kTile : inner;
        for (int64_t i = i0; i < i1; ++i) {
          const E* sp = s + so + i * rs;
          E* dp = d + dof + i * rd;
          for (int64_t j = j0; j < j1; ++j) dp[j * ds] = sp[j * ss];
        }
      }
    }
  });
}

}  // namespace

void strided_copy(const void* src, const int64_t* src_strides, void* dst, const int64_t* dst_strides,
                  const int64_t* sizes, int32_t rank, size_t element_size) {
  const uint8_t* s = static_cast<const uint8_t*>(src);
  uint8_t* d = static_cast<uint8_t*>(dst);
  switch (element_size) {
    case 1: copy_elements<uint8_t>(s, src_strides, d, dst_strides, sizes, rank); break;
    case 2: copy_elements<uint16_t>(s, src_strides, d, dst_strides, sizes, rank); break;
    case 4: copy_elements<uint32_t>(s, src_strides, d, dst_strides, sizes, rank); break;
    case 8: copy_elements<uint64_t>(s, src_strides, d, dst_strides, sizes, rank); break;
    default: break;
  }
}

bool strided_cast_copy(const void* src, ScalarType src_type, const int64_t* src_strides, void* dst,
                       ScalarType dst_type, const int64_t* dst_strides, const int64_t* sizes,
                       int32_t rank) {
  if (!visit_dtype<kAllTypes>(src_type, [](auto) {})) return false;
  return visit_dtype<kAllTypes>(dst_type, [&](auto dst_tag) {
    using D = decltype(dst_tag);
    D* d = static_cast<D*>(dst);
    visit_dtype<kAllTypes>(src_type, [&](auto src_tag) {
      using S = decltype(src_tag);
      const Elements<S> s(src);
      walk2(sizes, src_strides, dst_strides, rank, [&](int64_t so, int64_t dof) {
        d[dof] = static_cast<D>(s[so]);
      });
    });
  });
}

bool convert_copy(const Tensor& in, Tensor& out) {
  const int32_t rank = in.dim();
  if (in.scalar_type() == out.scalar_type()) {
    bool same_order = true;
    for (int32_t d = 0; d < rank; ++d) same_order = same_order && in.dim_order()[d] == out.dim_order()[d];
    if (same_order) {
      copy_all(in, out);
      return true;
    }
  }
  // Walk out's memory in order: dimension i of the walk is out's i-th dim in its dim order.
  int64_t sizes[kTensorMaxDim];
  int64_t src_strides[kTensorMaxDim];
  int64_t dst_strides[kTensorMaxDim];
  for (int32_t i = 0; i < rank; ++i) {
    const int32_t d = out.dim_order()[i];
    sizes[i] = in.size(d);
    src_strides[i] = in.strides()[d];
    dst_strides[i] = out.strides()[d];
  }
  if (in.scalar_type() == out.scalar_type()) {
    strided_copy(in.const_data_ptr(), src_strides, out.mutable_data_ptr(), dst_strides, sizes, rank,
                 in.element_size());
    return true;
  }
  return strided_cast_copy(in.const_data_ptr(), in.scalar_type(), src_strides, out.mutable_data_ptr(),
                           out.scalar_type(), dst_strides, sizes, rank);
}

void contiguous_strides(const int64_t* sizes, int32_t rank, int64_t* strides) {
  int64_t running = 1;
  for (int32_t d = rank - 1; d >= 0; --d) {
    strides[d] = running;
    running *= sizes[d];
  }
}

void copy_all(const Tensor& in, Tensor& out) {
  if (in.const_data_ptr() == out.const_data_ptr() || in.nbytes() == 0) return;
  std::memmove(out.mutable_data_ptr(), in.const_data_ptr(), in.nbytes());
}

}  // namespace portable
}  // namespace kiln
