// aten::tril.out(Tensor self, SymInt diagonal=0, *, Tensor(a!) out)
//
// The lower triangle of each matrix (the last two dims): element (i, j) is kept when
// j <= i + diagonal and zeroed otherwise. Zero is all-zero bytes in every dtype.
#include <cstring>

#include "kernels/portable/util/copy.h"
#include "kernels/portable/util/kernel_args.h"

namespace kiln {
namespace portable {

void tril_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "aten::tril.out";
  ArgReader r(ctx, kName, args, 4);
  Tensor* in = r.tensor(0);
  const int64_t diagonal = r.int_value(1);
  Tensor* out = r.tensor(2);
  if (!r.ok()) return;
  KILN_KERNEL_CHECK(ctx, in->dim() >= 2, Error::InvalidArgument, kName, "self %s needs at least 2 dims",
                    ShapeString(*in).c_str());
  if (!check_same_dtype(ctx, kName, *in, *out, "self", "out") || !resize_output_like(ctx, kName, *out, *in)) return;
  if (in->numel() == 0) return;
  const int64_t rows = in->size(-2);
  const int64_t cols = in->size(-1);
  const size_t esize = in->element_size();
  const size_t row_bytes = static_cast<size_t>(cols) * esize;
  const size_t matrices = in->numel() / static_cast<size_t>(rows * cols);
  const uint8_t* src = in->const_data_ptr<uint8_t>();
  uint8_t* dst = out->mutable_data_ptr<uint8_t>();
  for (size_t m = 0; m < matrices; ++m) {
    for (int64_t i = 0; i < rows; ++i) {
      // Columns [0, keep) survive.
      const int64_t last = i + (diagonal < -rows ? -rows : (diagonal > cols ? cols : diagonal));
      const size_t keep = last < 0 ? 0 : (last >= cols ? static_cast<size_t>(cols) : static_cast<size_t>(last + 1));
      const size_t offset = (m * static_cast<size_t>(rows) + static_cast<size_t>(i)) * row_bytes;
      if (dst != src) std::memmove(dst + offset, src + offset, keep * esize);
      std::memset(dst + offset + keep * esize, 0, row_bytes - keep * esize);
    }
  }
}

}  // namespace portable
}  // namespace kiln
