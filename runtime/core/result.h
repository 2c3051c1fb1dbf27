// Result<T>: a value or an Error, without exceptions.
#pragma once

#include <new>
#include <utility>

#include "runtime/core/error.h"

namespace kiln {
namespace internal {

/// Logs "Result::get() on a failed Result (<error>)" at Fatal level and calls the PAL's
/// abort: reading the value of a Result that holds an error is a bug in the caller, caught
/// in every build type (as ExecuTorch does), since the value's memory holds nothing.
[[noreturn]] void result_value_of_error(Error error);

}  // namespace internal

/// [[nodiscard]]: like Error, a Result must be looked at (ok(), error(), or its value).
template <typename T>
class [[nodiscard]] Result final {
 public:
  /// A successful result holding `value`.
  Result(T value) : has_value_(true) { new (&value_) T(std::move(value)); }  // NOLINT(implicit)
  /// A failed result. `error` must not be Error::Ok.
  Result(Error error) : error_(error == Error::Ok ? Error::Internal : error), has_value_(false) {}  // NOLINT

  Result(Result&& other) noexcept : error_(other.error_), has_value_(other.has_value_) {
    if (has_value_) new (&value_) T(std::move(other.value_));
  }
  Result(const Result&) = delete;
  Result& operator=(const Result&) = delete;
  Result& operator=(Result&&) = delete;
  ~Result() {
    if (has_value_) value_.~T();
  }

  bool ok() const { return has_value_; }
  /// Error::Ok when a value is present.
  Error error() const { return has_value_ ? Error::Ok : error_; }

  /// The value. Only valid when ok(): otherwise every build (release included) logs a
  /// Fatal line naming the error and aborts through the PAL (kiln_pal_abort).
  T& get() {
    check_has_value();
    return value_;
  }
  const T& get() const {
    check_has_value();
    return value_;
  }
  T& operator*() { return get(); }
  const T& operator*() const { return get(); }
  T* operator->() { return &get(); }
  const T* operator->() const { return &get(); }

 private:
  void check_has_value() const {
    if (__builtin_expect(!has_value_, 0)) internal::result_value_of_error(error_);
  }

  union {
    T value_;
  };
  Error error_ = Error::Ok;
  bool has_value_;
};

}  // namespace kiln

/// Evaluates `expr` (an Error); returns it from the enclosing function unless it is Ok.
#define KILN_TRY(expr)                               \
  do {                                               \
    const ::kiln::Error kiln_try_error_ = (expr);    \
    if (kiln_try_error_ != ::kiln::Error::Ok) {      \
      return kiln_try_error_;                        \
    }                                                \
  } while (0)

#define KILN_CONCAT_INNER(a, b) a##b
#define KILN_CONCAT(a, b) KILN_CONCAT_INNER(a, b)

/// `KILN_TRY_ASSIGN(auto x, f());` declares x from a Result or returns its error.
#define KILN_TRY_ASSIGN(lhs, expr) KILN_TRY_ASSIGN_IMPL(KILN_CONCAT(kiln_result_, __LINE__), lhs, expr)
#define KILN_TRY_ASSIGN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                         \
  if (!tmp.ok()) {                           \
    return tmp.error();                      \
  }                                          \
  lhs = std::move(tmp.get())
