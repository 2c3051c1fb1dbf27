// Result<T>: a value or an Error, without exceptions.
#pragma once

#include <new>
#include <utility>

#include "runtime/core/error.h"

namespace kiln {
namespace internal {

/// Logs "value of a failed Result (<error>)" at Fatal level and aborts: reading the value
/// of a Result that holds an error is a bug in the caller, caught in debug builds.
[[noreturn]] void result_value_of_error(Error error);

}  // namespace internal

template <typename T>
class Result final {
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

  /// The value. Only valid when ok(): debug builds (no NDEBUG) abort with a Fatal log
  /// line naming the error otherwise; release builds do not check.
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
#ifndef NDEBUG
    if (!has_value_) internal::result_value_of_error(error_);
#endif
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
