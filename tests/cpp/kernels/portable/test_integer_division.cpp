// Integer division kernels where PyTorch has no defined result: MIN / -1 overflows (eager
// PyTorch traps on int32/int64, so the Python tests cannot compare it) and division by
// zero (PyTorch raises). The kernels wrap MIN / -1 to MIN with remainder 0, and fail a
// division by zero with InvalidArgument; under host-debug (UBSan) neither may compute an
// undefined quotient.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "kernels/portable/register_portable_kernels.h"
#include "runtime/core/evalue.h"
#include "runtime/core/tensor.h"
#include "runtime/kernel/kernel_context.h"
#include "runtime/kernel/operator_registry.h"

namespace {

using kiln::Error;
using kiln::EValue;
using kiln::ScalarType;
using kiln::Tensor;

class IntegerDivision : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const Error error = kiln::register_portable_kernels();
    ASSERT_TRUE(error == Error::Ok || error == Error::RegistrationAlreadyRegistered);
  }
};

template <typename T>
struct Vector1d {
  explicit Vector1d(std::vector<T> values)
      : data(std::move(values)), size(static_cast<int32_t>(data.size())),
        tensor(kiln::CppTypeToScalarType<T>::value, 1, &size, &order, &stride, data.data()) {}
  std::vector<T> data;
  int32_t size;
  uint8_t order = 0;
  int32_t stride = 1;
  Tensor tensor;
};

/// op(a, b) through a Tensor overload ("aten::div" "out_mode" takes a rounding mode).
template <typename T>
Error divide(const char* name, const char* overload, const char* mode, const std::vector<T>& a,
             const std::vector<T>& b, std::vector<T>* result) {
  Vector1d<T> x(a);
  Vector1d<T> y(b);
  Vector1d<T> out(std::vector<T>(a.size(), 7));
  std::vector<EValue> args = {EValue(&x.tensor), EValue(&y.tensor)};
  if (mode != nullptr) args.push_back(EValue::string(mode, std::char_traits<char>::length(mode)));
  args.push_back(EValue(&out.tensor));
  args.push_back(EValue(&out.tensor));
  std::vector<EValue*> pointers;
  for (EValue& arg : args) pointers.push_back(&arg);
  const kiln::OpFunction kernel = kiln::get_op_function(name, overload);
  EXPECT_NE(kernel, nullptr) << name << "." << overload;
  if (kernel == nullptr) return Error::OperatorMissing;
  kiln::KernelContext context(nullptr);
  kernel(context, {pointers.data(), pointers.size()});
  *result = out.data;
  return context.failure_state();
}

template <typename T>
void expect_min_by_minus_one_wraps() {
  const T min = std::numeric_limits<T>::min();
  const std::vector<T> a = {min, min, 7};
  const std::vector<T> b = {-1, 1, -1};
  std::vector<T> q;
  ASSERT_EQ(divide<T>("aten::div", "out_mode", "floor", a, b, &q), Error::Ok);
  EXPECT_EQ(q, (std::vector<T>{min, min, -7}));
  ASSERT_EQ(divide<T>("aten::div", "out_mode", "trunc", a, b, &q), Error::Ok);
  EXPECT_EQ(q, (std::vector<T>{min, min, -7}));
  ASSERT_EQ(divide<T>("aten::floor_divide", "out", nullptr, a, b, &q), Error::Ok);
  EXPECT_EQ(q, (std::vector<T>{min, min, -7}));
  ASSERT_EQ(divide<T>("aten::fmod", "Tensor_out", nullptr, a, b, &q), Error::Ok);
  EXPECT_EQ(q, (std::vector<T>{0, 0, 0}));
  ASSERT_EQ(divide<T>("aten::remainder", "Tensor_out", nullptr, a, b, &q), Error::Ok);
  EXPECT_EQ(q, (std::vector<T>{0, 0, 0}));
}

TEST_F(IntegerDivision, MinByMinusOneWrapsInt32) { expect_min_by_minus_one_wraps<int32_t>(); }
TEST_F(IntegerDivision, MinByMinusOneWrapsInt64) { expect_min_by_minus_one_wraps<int64_t>(); }

TEST_F(IntegerDivision, DivisionByZeroFailsByName) {
  std::vector<int64_t> q;
  for (const char* mode : {"floor", "trunc"}) {
    EXPECT_EQ(divide<int64_t>("aten::div", "out_mode", mode, {1, 2}, {1, 0}, &q), Error::InvalidArgument);
  }
  EXPECT_EQ(divide<int64_t>("aten::floor_divide", "out", nullptr, {1}, {0}, &q), Error::InvalidArgument);
  EXPECT_EQ(divide<int64_t>("aten::fmod", "Tensor_out", nullptr, {1}, {0}, &q), Error::InvalidArgument);
  EXPECT_EQ(divide<int64_t>("aten::remainder", "Tensor_out", nullptr, {1}, {0}, &q), Error::InvalidArgument);
}

TEST_F(IntegerDivision, UnknownRoundingModeFailsByName) {
  std::vector<int32_t> q;
  EXPECT_EQ(divide<int32_t>("aten::div", "out_mode", "round", {1}, {1}, &q), Error::InvalidArgument);
}

}  // namespace
