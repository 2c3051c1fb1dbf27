// aten::bitwise_xor.Tensor_out(Tensor self, Tensor other, *, Tensor(a!) out)
// aten::bitwise_xor.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out)
#include "kernels/portable/util/bitwise.h"

namespace kiln {
namespace portable {

namespace {
struct BitwiseXor {
  template <typename T>
  T operator()(T a, T b) const {
    return static_cast<T>(a ^ b);
  }
};
}  // namespace

void bitwise_xor_tensor_out(KernelContext& ctx, Span<EValue*> args) {
  bitwise_tensor_kernel<kIntTypes | kBoolType>(ctx, "aten::bitwise_xor.Tensor_out", args, BitwiseXor{});
}

void bitwise_xor_scalar_out(KernelContext& ctx, Span<EValue*> args) {
  bitwise_scalar_kernel<kIntTypes | kBoolType>(ctx, "aten::bitwise_xor.Scalar_out", args, BitwiseXor{});
}

}  // namespace portable
}  // namespace kiln
