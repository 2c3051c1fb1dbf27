// aten::div.out(Tensor self, Tensor other, *, Tensor(a!) out)
// aten::div.Scalar_out(Tensor self, Scalar other, *, Tensor(a!) out)
// aten::div.out_mode(Tensor self, Tensor other, *, str? rounding_mode, Tensor(a!) out)
// aten::div.Scalar_mode_out(Tensor self, Scalar other, *, str? rounding_mode, Tensor(a!) out)
//
// True division (no rounding mode): the out tensor is floating point even for integer
// inputs (PyTorch's rule), and x / 0 follows IEEE (inf or nan), as in PyTorch. With
// rounding_mode "trunc" or "floor" integer inputs keep an integer out; integer division
// by zero fails the kernel (PyTorch raises ZeroDivisionError).
#include <type_traits>

#include "kernels/portable/util/division.h"
#include "kernels/portable/util/elementwise.h"

namespace kiln {
namespace portable {

namespace {

enum class RoundingMode { kNone, kTrunc, kFloor };

bool read_rounding_mode(ArgReader& r, size_t index, RoundingMode* mode) {
  if (r.is_none(index)) {
    *mode = RoundingMode::kNone;
    return r.ok();
  }
  const Span<const char> text = r.string(index);
  if (!r.ok()) return false;
  if (string_equals(text, "trunc")) {
    *mode = RoundingMode::kTrunc;
  } else if (string_equals(text, "floor")) {
    *mode = RoundingMode::kFloor;
  } else {
    KILN_KERNEL_FAIL(r.context(), Error::InvalidArgument, r.op(),
                     "rounding_mode must be None, \"trunc\" or \"floor\", got \"%.*s\"",
                     static_cast<int>(text.size()), text.data());
    return false;
  }
  return true;
}

/// x / y rounded as `mode` asks (kNone: true division, which has a float out).
template <typename T>
T divide(RoundingMode mode, T x, T y, bool& by_zero) {
  if (mode == RoundingMode::kFloor) return divide_floor(x, y, by_zero);
  if constexpr (std::is_floating_point_v<T>) {
    if (mode == RoundingMode::kNone) return x / y;
  }
  return divide_trunc(x, y, by_zero);
}

}  // namespace

void div_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "aten::div.out";
  ArgReader r(ctx, kName, args, 4);
  Tensor* a = r.tensor(0);
  Tensor* b = r.tensor(1);
  Tensor* out = r.tensor(2);
  if (!r.ok()) return;
  binary_op<kFloatTypes>(ctx, kName, *a, *b, *out, [](auto x, auto y) { return x / y; });
}

void div_scalar_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "aten::div.Scalar_out";
  ArgReader r(ctx, kName, args, 4);
  Tensor* a = r.tensor(0);
  const double other = r.scalar(1);
  Tensor* out = r.tensor(2);
  if (!r.ok()) return;
  unary_op<kFloatTypes>(ctx, kName, *a, *out, [other](auto x) {
    using T = decltype(x);
    return x / static_cast<T>(other);
  });
}

void div_out_mode(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "aten::div.out_mode";
  ArgReader r(ctx, kName, args, 5);
  Tensor* a = r.tensor(0);
  Tensor* b = r.tensor(1);
  RoundingMode mode = RoundingMode::kNone;
  const bool mode_ok = read_rounding_mode(r, 2, &mode);
  Tensor* out = r.tensor(3);
  if (!mode_ok || !r.ok()) return;
  bool by_zero = false;
  auto op = [mode, &by_zero](auto x, auto y) { return divide(mode, x, y, by_zero); };
  if (mode == RoundingMode::kNone) {
    binary_op<kFloatTypes>(ctx, kName, *a, *b, *out, op);
  } else {
    binary_op<kRealTypes>(ctx, kName, *a, *b, *out, op);
  }
  check_no_division_by_zero(ctx, kName, by_zero);
}

void div_scalar_mode_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "aten::div.Scalar_mode_out";
  ArgReader r(ctx, kName, args, 5);
  Tensor* a = r.tensor(0);
  const ScalarArg other = r.scalar_arg(1);
  RoundingMode mode = RoundingMode::kNone;
  const bool mode_ok = read_rounding_mode(r, 2, &mode);
  Tensor* out = r.tensor(3);
  if (!mode_ok || !r.ok()) return;
  bool by_zero = false;
  auto op = [mode, other, &by_zero](auto x) {
    using T = decltype(x);
    return divide(mode, x, other.as<T>(), by_zero);
  };
  if (mode == RoundingMode::kNone) {
    unary_op<kFloatTypes>(ctx, kName, *a, *out, op);
  } else {
    unary_op<kRealTypes>(ctx, kName, *a, *out, op);
  }
  check_no_division_by_zero(ctx, kName, by_zero);
}

}  // namespace portable
}  // namespace kiln
