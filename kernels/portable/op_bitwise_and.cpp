// aten::bitwise_and.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out)
// aten::bitwise_and.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out)
#include "kernels/portable/util/bitwise.h"

namespace kiln {
namespace portable {

namespace {
struct BitwiseAnd {
  template <typename T>
  T operator()(T a, T b) const {
    return static_cast<T>(a & b);
  }
};
}  // namespace

void bitwise_and_tensor_out(KernelContext& ctx, Span<EValue*> args) {
  bitwise_tensor_kernel<kIntTypes | kBoolType>(ctx, "aten::bitwise_and.Tensor_out", args, BitwiseAnd{});
}

void bitwise_and_scalar_out(KernelContext& ctx, Span<EValue*> args) {
  bitwise_scalar_kernel<kIntTypes | kBoolType>(ctx, "aten::bitwise_and.Scalar_out", args, BitwiseAnd{});
}

}  // namespace portable
}  // namespace kiln
