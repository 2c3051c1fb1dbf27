// aten::bitwise_or.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out)
// aten::bitwise_or.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out)
#include "kernels/portable/util/bitwise.h"

namespace kiln {
namespace portable {

namespace {
struct BitwiseOr {
  template <typename T>
  T operator()(T a, T b) const {
    return static_cast<T>(a | b);
  }
};
}  // namespace

void bitwise_or_tensor_out(KernelContext& ctx, Span<EValue*> args) {
  bitwise_tensor_kernel<kIntTypes | kBoolType>(ctx, "aten::bitwise_or.Tensor_out", args, BitwiseOr{});
}

void bitwise_or_scalar_out(KernelContext& ctx, Span<EValue*> args) {
  bitwise_scalar_kernel<kIntTypes | kBoolType>(ctx, "aten::bitwise_or.Scalar_out", args, BitwiseOr{});
}

}  // namespace portable
}  // namespace kiln
