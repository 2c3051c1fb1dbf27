// executorch_prim::{add,sub,mul,floordiv}.Scalar(Scalar a, Scalar b) -> Scalar
//
// Arithmetic on symbolic sizes, arguments [a, b, out]: out is overwritten with an Int
// when both operands are Int, else with a Double (Python semantics, floordiv rounds
// toward negative infinity).
#include <cmath>

#include "kernels/portable/util/kernel_args.h"

namespace kiln {
namespace portable {

namespace {

enum class PrimOp { Add, Sub, Mul, FloorDiv };

void prim_scalar(KernelContext& ctx, const char* name, Span<EValue*> args, PrimOp op) {
  ArgReader r(ctx, name, args, 3);
  if (!r.ok()) return;
  const EValue* a = args[0];
  const EValue* b = args[1];
  KILN_KERNEL_CHECK(ctx, a != nullptr && b != nullptr && args[2] != nullptr && a->is_scalar() && b->is_scalar(),
                    Error::InvalidType, name, "operands must be Int, Double or Bool");
  if (!a->is_double() && !b->is_double()) {
    const int64_t x = a->scalar_to_int();
    const int64_t y = b->scalar_to_int();
    int64_t v = 0;
    switch (op) {
      case PrimOp::Add: v = static_cast<int64_t>(static_cast<uint64_t>(x) + static_cast<uint64_t>(y)); break;
      case PrimOp::Sub: v = static_cast<int64_t>(static_cast<uint64_t>(x) - static_cast<uint64_t>(y)); break;
      case PrimOp::Mul: v = static_cast<int64_t>(static_cast<uint64_t>(x) * static_cast<uint64_t>(y)); break;
      case PrimOp::FloorDiv:
        KILN_KERNEL_CHECK(ctx, y != 0, Error::InvalidArgument, name, "integer division by zero");
        KILN_KERNEL_CHECK(ctx, !(x == INT64_MIN && y == -1), Error::InvalidArgument, name,
                          "integer division overflows");
        v = x / y;
        if ((x % y != 0) && ((x < 0) != (y < 0))) --v;  // round toward -inf like Python
        break;
    }
    *args[2] = EValue(v);
    return;
  }
  const double x = a->scalar_to_double();
  const double y = b->scalar_to_double();
  double v = 0;
  switch (op) {
    case PrimOp::Add: v = x + y; break;
    case PrimOp::Sub: v = x - y; break;
    case PrimOp::Mul: v = x * y; break;
    case PrimOp::FloorDiv: v = std::floor(x / y); break;
  }
  *args[2] = EValue(v);
}

}  // namespace

void prim_add_scalar(KernelContext& ctx, Span<EValue*> args) {
  prim_scalar(ctx, "executorch_prim::add.Scalar", args, PrimOp::Add);
}
void prim_sub_scalar(KernelContext& ctx, Span<EValue*> args) {
  prim_scalar(ctx, "executorch_prim::sub.Scalar", args, PrimOp::Sub);
}
void prim_mul_scalar(KernelContext& ctx, Span<EValue*> args) {
  prim_scalar(ctx, "executorch_prim::mul.Scalar", args, PrimOp::Mul);
}
void prim_floordiv_scalar(KernelContext& ctx, Span<EValue*> args) {
  prim_scalar(ctx, "executorch_prim::floordiv.Scalar", args, PrimOp::FloorDiv);
}

}  // namespace portable
}  // namespace kiln
