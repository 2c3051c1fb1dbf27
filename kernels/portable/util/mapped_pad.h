// Reflection and replication padding of the last 1, 2 or 3 dims (the kernel body of
// reflection_pad{1,2,3}d and replication_pad{1,2,3}d).
//
// padding = [last_before, last_after, second_last_before, ...], as in F.pad. Each out
// position o of a padded dim of size n reads self at i = o - before, mapped into
// [0, n): mirrored at the edges without repeating them (reflect: -1 -> 1, n -> n - 2)
// or clamped (replicate). Negative padding crops. self is [..., *spatial] with one or
// two leading dims (unbatched or batched).
#pragma once

#include <cstdint>
#include <cstring>

#include "kernels/portable/util/copy.h"
#include "kernels/portable/util/kernel_args.h"

namespace kiln {
namespace portable {

enum class PadMode { kReflect, kReplicate };

namespace pad_detail {

inline int64_t source_index(int64_t o, int64_t before, int64_t n, PadMode mode) {
  int64_t i = o - before;
  if (mode == PadMode::kReplicate) return i < 0 ? 0 : (i >= n ? n - 1 : i);
  if (i < 0) i = -i;
  if (i >= n) i = 2 * (n - 1) - i;
  return i;
}

template <typename E>
void pad_rows(const E* src, E* dst, int64_t planes, int32_t k, const int64_t* in_sizes, const int64_t* out_sizes,
              const int64_t* before, PadMode mode) {
  int64_t in_plane = 1, out_plane = 1;
  for (int32_t d = 0; d < k; ++d) {
    in_plane *= in_sizes[d];
    out_plane *= out_sizes[d];
  }
  const int64_t w_in = in_sizes[k - 1], w_out = out_sizes[k - 1];
  const int64_t rows = out_plane / w_out;
  for (int64_t p = 0; p < planes; ++p) {
    for (int64_t row = 0; row < rows; ++row) {
      // The source row: map each outer padded coordinate of this out row.
      int64_t rest = row, src_row = 0, scale = 1;
      for (int32_t d = k - 2; d >= 0; --d) {
        const int64_t o = rest % out_sizes[d];
        rest /= out_sizes[d];
        src_row += source_index(o, before[d], in_sizes[d], mode) * scale;
        scale *= in_sizes[d];
      }
      const E* s = src + p * in_plane + src_row * w_in;
      E* t = dst + p * out_plane + row * w_out;
      for (int64_t o = 0; o < w_out; ++o) t[o] = s[source_index(o, before[k - 1], w_in, mode)];
    }
  }
}

}  // namespace pad_detail

/// The kernel: (Tensor self, SymInt[2k] padding, *, Tensor(a!) out) for k spatial dims.
inline void mapped_pad_kernel(KernelContext& ctx, const char* name, Span<EValue*> args, int32_t k, PadMode mode) {
  ArgReader r(ctx, name, args, 4);
  Tensor* in = r.tensor(0);
  const Span<const int64_t> padding = r.int_list(1);
  Tensor* out = r.tensor(2);
  if (!r.ok()) return;
  KILN_KERNEL_CHECK(ctx, in->dim() == k + 1 || in->dim() == k + 2, Error::InvalidArgument, name,
                    "self %s must have %d or %d dims", ShapeString(*in).c_str(), static_cast<int>(k + 1),
                    static_cast<int>(k + 2));
  KILN_KERNEL_CHECK(ctx, padding.size() == static_cast<size_t>(2 * k), Error::InvalidArgument, name,
                    "padding has %zu entries, expected %d", padding.size(), static_cast<int>(2 * k));
  for (const int64_t p : padding) {
    KILN_KERNEL_CHECK(ctx, p >= -INT32_MAX && p <= INT32_MAX, Error::InvalidArgument, name, "padding %lld is out of range",
                      static_cast<long long>(p));
  }
  if (!check_same_dtype(ctx, name, *in, *out, "self", "out")) return;
  const int32_t lead = in->dim() - k;
  int64_t in_sizes[3], out_sizes[3], before[3];
  SizesType sizes[kTensorMaxDim];
  int64_t planes = 1;
  for (int32_t d = 0; d < lead; ++d) {
    sizes[d] = in->size(d);
    planes *= in->size(d);
  }
  for (int32_t d = 0; d < k; ++d) {
    const int64_t n = in->size(lead + d);
    before[d] = padding[static_cast<size_t>(2 * (k - 1 - d))];
    const int64_t after = padding[static_cast<size_t>(2 * (k - 1 - d) + 1)];
    const bool fits = mode == PadMode::kReplicate ? n > 0 : (before[d] < n && after < n && -before[d] < n && -after < n);
    KILN_KERNEL_CHECK(ctx, fits && n + before[d] + after >= 1 && n + before[d] + after <= INT32_MAX,
                      Error::InvalidArgument, name, "padding (%lld, %lld) does not fit dim %d of self %s",
                      static_cast<long long>(before[d]), static_cast<long long>(after), static_cast<int>(lead + d),
                      ShapeString(*in).c_str());
    in_sizes[d] = n;
    out_sizes[d] = n + before[d] + after;
    sizes[lead + d] = static_cast<SizesType>(out_sizes[d]);
  }
  if (!resize_output(ctx, name, *out, {sizes, static_cast<size_t>(in->dim())}) || out->numel() == 0) return;
  KILN_KERNEL_CHECK(ctx, !memory_overlaps(*in, *out), Error::InvalidArgument, name, "out must not share memory with self");
  using pad_detail::pad_rows;
  switch (in->element_size()) {
    case 1: pad_rows(in->const_data_ptr<uint8_t>(), out->mutable_data_ptr<uint8_t>(), planes, k, in_sizes, out_sizes, before, mode); break;
    case 2: pad_rows(in->const_data_ptr<uint16_t>(), out->mutable_data_ptr<uint16_t>(), planes, k, in_sizes, out_sizes, before, mode); break;
    case 4: pad_rows(in->const_data_ptr<uint32_t>(), out->mutable_data_ptr<uint32_t>(), planes, k, in_sizes, out_sizes, before, mode); break;
    case 8: pad_rows(in->const_data_ptr<uint64_t>(), out->mutable_data_ptr<uint64_t>(), planes, k, in_sizes, out_sizes, before, mode); break;
    default:
      KILN_KERNEL_FAIL(ctx, Error::InvalidType, name, "dtype %s is not supported", scalar_type_name(in->scalar_type()));
  }
}

}  // namespace portable
}  // namespace kiln
