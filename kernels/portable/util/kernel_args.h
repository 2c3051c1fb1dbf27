// Argument access and checking for portable kernels.
//
// A kernel receives its arguments as EValues straight from the program, so every tag,
// dtype and shape is checked before use: a malformed program fails the kernel through
// the context with InvalidArgument / InvalidType and a log line naming the op and the
// problem; it never crashes or reads out of bounds.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <type_traits>

#include "runtime/core/error.h"
#include "runtime/core/evalue.h"
#include "runtime/core/tensor.h"
#include "runtime/kernel/kernel_context.h"
#include "runtime/platform/log.h"

/// Logs "<op>: <message>" and marks the kernel as failed with `error`.
#define KILN_KERNEL_FAIL(ctx, error, op, fmt, ...)                 \
  do {                                                             \
    KILN_LOG(Error, "%s: " fmt, (op), ##__VA_ARGS__);              \
    (ctx).fail(error);                                             \
  } while (0)

/// Unless `cond` holds: fails the kernel (see KILN_KERNEL_FAIL) and returns.
#define KILN_KERNEL_CHECK(ctx, cond, error, op, fmt, ...)          \
  do {                                                             \
    if (!(cond)) {                                                 \
      KILN_KERNEL_FAIL(ctx, error, op, fmt, ##__VA_ARGS__);        \
      return;                                                      \
    }                                                              \
  } while (0)

namespace kiln {
namespace portable {

/// `value` converted to T. For an integer T this truncates toward zero like a C++ cast
/// but is defined everywhere: NaN gives 0 and out-of-range values saturate (a float
/// meets an integer dtype only where PyTorch truncates in range or refuses the value).
template <typename T>
T convert_real(double value) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    if (value != value) return 0;
    if (value <= static_cast<double>(std::numeric_limits<T>::lowest())) return std::numeric_limits<T>::lowest();
    if (value >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
  }
  return static_cast<T>(value);
}

/// A Scalar argument as the program gave it. Integral values (Int, Bool) keep all 64
/// bits, so that an int64 tensor meets the exact value; float values stay doubles.
struct ScalarArg {
  double real = 0.0;
  int64_t integer = 0;
  bool integral = false;

  /// The value in T, converted the way PyTorch converts a Scalar to a tensor's dtype:
  /// integers wrap into narrower integer types, every value is rounded once.
  template <typename T>
  T as() const {
    if (integral) {
      if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
        return static_cast<T>(static_cast<std::make_unsigned_t<T>>(integer));
      } else {
        return static_cast<T>(integer);
      }
    }
    return convert_real<T>(real);
  }
};

/// A shape formatted for log messages, e.g. "[1, 3, 224, 224]".
struct ShapeString {
  char text[128];
  explicit ShapeString(Span<const SizesType> sizes);
  explicit ShapeString(const Tensor& t) : ShapeString(t.sizes()) {}
  const char* c_str() const { return text; }
};

/// True when a string argument equals `literal`.
inline bool string_equals(Span<const char> s, const char* literal) {
  return s.size() == std::strlen(literal) && (s.size() == 0 || std::memcmp(s.data(), literal, s.size()) == 0);
}

/// Reads a kernel's arguments by index, checking each one. After the first failure
/// every accessor returns a harmless default and ok() is false: a kernel reads all
/// its arguments, then returns if !ok().
class ArgReader {
 public:
  /// Checks that there are exactly `expected_count` arguments.
  ArgReader(KernelContext& ctx, const char* op, Span<EValue*> args, size_t expected_count);

  bool ok() const { return ok_; }
  const char* op() const { return op_; }
  KernelContext& context() const { return ctx_; }

  /// A tensor with default (contiguous) dim order and data when it has elements.
  Tensor* tensor(size_t i);
  /// Like tensor(), but nullptr for None.
  Tensor* optional_tensor(size_t i);
  /// A tensor in any dim order (for the layout-converting copies).
  Tensor* tensor_any_layout(size_t i);
  int64_t int_value(size_t i);
  /// Like int_value(), but `fallback` for None.
  int64_t optional_int(size_t i, int64_t fallback, bool* present = nullptr);
  bool bool_value(size_t i);
  double double_value(size_t i);
  /// A Scalar argument (Int, Double or Bool) as a double.
  double scalar(size_t i);
  /// Like scalar(), but `fallback` for None.
  double optional_scalar(size_t i, double fallback, bool* present = nullptr);
  /// A Scalar argument with its integer value kept exact (see ScalarArg).
  ScalarArg scalar_arg(size_t i);
  /// True when argument i exists and is None.
  bool is_none(size_t i) const;
  Span<const int64_t> int_list(size_t i);
  /// Like int_list(), but an empty list for None (`present` says which).
  Span<const int64_t> optional_int_list(size_t i, bool* present = nullptr);
  Span<const double> optional_double_list(size_t i, bool* present = nullptr);
  Span<Tensor* const> tensor_list(size_t i);
  /// A Tensor?[] argument: like tensor_list(), but None items are nullptr.
  Span<Tensor* const> optional_tensor_list(size_t i);
  Span<const char> string(size_t i);

  /// Marks the kernel failed (the caller has logged the reason).
  void fail(Error error);

 private:
  EValue* get(size_t i, Tag tag);
  bool check_tensor(size_t i, Tensor* t, bool need_default_layout);

  KernelContext& ctx_;
  const char* op_;
  Span<EValue*> args_;
  bool ok_;
};

/// Resizes `out` to `sizes` (a static tensor must already have them). Logs the op name
/// and both shapes and fails the kernel on mismatch.
bool resize_output(KernelContext& ctx, const char* op, Tensor& out, Span<const SizesType> sizes);
bool resize_output_like(KernelContext& ctx, const char* op, Tensor& out, const Tensor& like);

/// Fails unless `t` has dtype `type`; `what` names the argument in the log line.
bool check_dtype(KernelContext& ctx, const char* op, const Tensor& t, ScalarType type,
                 const char* what);
/// Fails unless both tensors have the same dtype.
bool check_same_dtype(KernelContext& ctx, const char* op, const Tensor& a, const Tensor& b,
                      const char* what_a, const char* what_b);

/// Wraps a possibly negative dimension index into [0, rank); rank 0 accepts 0 and -1
/// (as PyTorch does). Fails the kernel and returns false when out of range.
bool normalize_dim(KernelContext& ctx, const char* op, int64_t dim, int32_t rank, int32_t* out);

}  // namespace portable
}  // namespace kiln
