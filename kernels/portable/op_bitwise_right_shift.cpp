// aten::bitwise_right_shift.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out)
// aten::bitwise_right_shift.Tensor_Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out)
//
// Integer dtypes; signed values shift arithmetically (the sign fills in). A negative
// shift, or one that shifts every value bit out, gives -1 for negative signed values and
// 0 otherwise, as in PyTorch.
#include <type_traits>

#include "kernels/portable/util/bitwise.h"

namespace kiln {
namespace portable {

namespace {
struct ShiftRight {
  template <typename T>
  T operator()(T a, T b) const {
    constexpr int kValueBits = static_cast<int>(sizeof(T) * 8) - (std::is_signed_v<T> ? 1 : 0);
    if (static_cast<std::make_signed_t<T>>(b) < 0 || b >= static_cast<T>(kValueBits)) {
      if constexpr (std::is_signed_v<T>) {
        return static_cast<T>(a < 0 ? -1 : 0);
      } else {
        return 0;
      }
    }
    return static_cast<T>(a >> b);
  }
};
}  // namespace

void bitwise_right_shift_tensor_out(KernelContext& ctx, Span<EValue*> args) {
  bitwise_tensor_kernel<kIntTypes>(ctx, "aten::bitwise_right_shift.Tensor_out", args, ShiftRight{});
}

void bitwise_right_shift_tensor_scalar_out(KernelContext& ctx, Span<EValue*> args) {
  bitwise_scalar_kernel<kIntTypes>(ctx, "aten::bitwise_right_shift.Tensor_Scalar_out", args, ShiftRight{});
}

}  // namespace portable
}  // namespace kiln
