#include "kernels/portable/util/broadcast.h"

namespace kiln {
namespace portable {

bool broadcast_shapes(Span<const SizesType> a, Span<const SizesType> b, SizesType* out,
                      int32_t* out_dim) {
  const size_t rank = a.size() > b.size() ? a.size() : b.size();
  if (rank > static_cast<size_t>(kTensorMaxDim)) return false;
  for (size_t i = 0; i < rank; ++i) {
    // Align from the last dimension; missing leading dimensions count as 1.
    const SizesType sa = i < a.size() ? a[a.size() - 1 - i] : 1;
    const SizesType sb = i < b.size() ? b[b.size() - 1 - i] : 1;
    if (sa != sb && sa != 1 && sb != 1) return false;
    out[rank - 1 - i] = sa == 1 ? sb : sa;
  }
  *out_dim = static_cast<int32_t>(rank);
  return true;
}

bool broadcasts_to(Span<const SizesType> in, Span<const SizesType> out_sizes) {
  if (in.size() > out_sizes.size()) return false;
  for (size_t i = 0; i < in.size(); ++i) {
    const SizesType s = in[in.size() - 1 - i];
    if (s != 1 && s != out_sizes[out_sizes.size() - 1 - i]) return false;
  }
  return true;
}

}  // namespace portable
}  // namespace kiln
