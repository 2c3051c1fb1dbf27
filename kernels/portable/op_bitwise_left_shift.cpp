// aten::bitwise_left_shift.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out)
// aten::bitwise_left_shift.Tensor_Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out)
//
// Integer dtypes. Bits shifted out are lost (the shift is done unsigned, so it never
// overflows); a negative shift or one of the dtype's width or more gives 0, as in PyTorch.
#include <type_traits>

#include "kernels/portable/util/bitwise.h"
#include "kernels/portable/util/wrapping.h"

namespace kiln {
namespace portable {

namespace {
struct ShiftLeft {
  template <typename T>
  T operator()(T a, T b) const {
    constexpr int kBits = static_cast<int>(sizeof(T) * 8);
    if (static_cast<std::make_signed_t<T>>(b) < 0 || b >= static_cast<T>(kBits)) return 0;
    return static_cast<T>(static_cast<WrapType<T>>(static_cast<std::make_unsigned_t<T>>(a)) << b);
  }
};
}  // namespace

void bitwise_left_shift_tensor_out(KernelContext& ctx, Span<EValue*> args) {
  bitwise_tensor_kernel<kIntTypes>(ctx, "aten::bitwise_left_shift.Tensor_out", args, ShiftLeft{});
}

void bitwise_left_shift_tensor_scalar_out(KernelContext& ctx, Span<EValue*> args) {
  bitwise_scalar_kernel<kIntTypes>(ctx, "aten::bitwise_left_shift.Tensor_Scalar_out", args, ShiftLeft{});
}

}  // namespace portable
}  // namespace kiln
