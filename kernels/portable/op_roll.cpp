// aten::roll.out(Tensor self, SymInt[1] shifts, int[1] dims=[], *, Tensor(a!) out)
//
// Element i of each rolled dimension moves to (i + shift) mod size. Without dims, self
// is rolled as one flat sequence by shifts[0]. A rolled dimension splits into two
// blocks that trade places, so the result is 2^k block copies for k rolled dims.
#include "kernels/portable/util/copy.h"
#include "kernels/portable/util/kernel_args.h"

namespace kiln {
namespace portable {

namespace {

/// Floor modulo: the shift in [0, size).
int64_t wrap_shift(int64_t shift, int64_t size) {
  const int64_t m = shift % size;
  return m < 0 ? m + size : m;
}

}  // namespace

void roll_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "aten::roll.out";
  ArgReader r(ctx, kName, args, 5);
  Tensor* in = r.tensor(0);
  const Span<const int64_t> shifts = r.int_list(1);
  const Span<const int64_t> dims = r.int_list(2);
  Tensor* out = r.tensor(3);
  if (!r.ok()) return;
  if (!check_same_dtype(ctx, kName, *in, *out, "self", "out") || !resize_output_like(ctx, kName, *out, *in)) return;
  if (in->numel() == 0) return;
  KILN_KERNEL_CHECK(ctx, !memory_overlaps(*in, *out), Error::InvalidArgument, kName,
                    "out must not share memory with self");
  const size_t esize = in->element_size();
  const uint8_t* src = in->const_data_ptr<uint8_t>();
  uint8_t* dst = out->mutable_data_ptr<uint8_t>();
  if (dims.empty()) {
    KILN_KERNEL_CHECK(ctx, shifts.size() == 1, Error::InvalidArgument, kName,
                      "without dims, shifts must have one entry, got %zu", shifts.size());
    const size_t n = in->numel();
    const size_t s = static_cast<size_t>(wrap_shift(shifts[0], static_cast<int64_t>(n)));
    std::memcpy(dst + s * esize, src, (n - s) * esize);
    std::memcpy(dst, src + (n - s) * esize, s * esize);
    return;
  }
  KILN_KERNEL_CHECK(ctx, shifts.size() == dims.size(), Error::InvalidArgument, kName,
                    "%zu shifts for %zu dims", shifts.size(), dims.size());
  const int32_t rank = in->dim();
  int64_t shift[kTensorMaxDim] = {};
  for (size_t i = 0; i < dims.size(); ++i) {
    int32_t dim = 0;
    if (!normalize_dim(ctx, kName, dims[i], rank, &dim)) return;
    if (rank > 0) shift[dim] = wrap_shift(shift[dim] + wrap_shift(shifts[i], in->size(dim)), in->size(dim));
  }
  int64_t strides[kTensorMaxDim];
  int32_t rolled[kTensorMaxDim];
  int32_t count = 0;
  for (int32_t d = 0; d < rank; ++d) {
    strides[d] = in->strides()[d];
    if (shift[d] != 0) rolled[count++] = d;
  }
  // Block `mask`: in rolled dim rolled[j], bit j picks the tail of self ([n - s, n) to
  // [0, s)) or the head ([0, n - s) to [s, n)).
  for (uint32_t mask = 0; mask < (1u << count); ++mask) {
    int64_t sizes[kTensorMaxDim];
    int64_t src_offset = 0;
    int64_t dst_offset = 0;
    for (int32_t d = 0; d < rank; ++d) sizes[d] = in->size(d);
    for (int32_t j = 0; j < count; ++j) {
      const int32_t d = rolled[j];
      const int64_t n = in->size(d);
      const bool tail = (mask >> j) & 1u;
      sizes[d] = tail ? shift[d] : n - shift[d];
      src_offset += (tail ? n - shift[d] : 0) * strides[d];
      dst_offset += (tail ? 0 : shift[d]) * strides[d];
    }
    strided_copy(src + src_offset * esize, strides, dst + dst_offset * esize, strides, sizes, rank, esize);
  }
}

}  // namespace portable
}  // namespace kiln
