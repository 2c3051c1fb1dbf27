// The quantize kernels on inputs a hostile program can give: NaN and infinite inputs,
// and scales whose reciprocal overflows float32 (found by coverage-guided fuzzing of the
// program loader + execute path). Expected values follow the documented behaviour
// (kernels/portable/util/quantize.h), not PyTorch, which leaves NaN to an undefined
// float-to-int conversion.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
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

class QuantizeKernels : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const Error error = kiln::register_portable_kernels();
    ASSERT_TRUE(error == Error::Ok || error == Error::RegistrationAlreadyRegistered);
  }
};

/// A 1-D tensor over `data` (sizes/strides stored alongside).
template <typename T>
struct Vector1d {
  explicit Vector1d(std::vector<T> values, ScalarType type)
      : data(std::move(values)),
        size(static_cast<int32_t>(data.size())),
        tensor(type, 1, &size, &order, &stride, data.data()) {}
  std::vector<T> data;
  int32_t size;
  uint8_t order = 0;
  int32_t stride = 1;
  Tensor tensor;
};

/// quantize_per_tensor(x, scale, zero_point, -128, 127, int8); the kernel's error.
Error quantize_per_tensor(const std::vector<float>& x, double scale, int64_t zero_point,
                          std::vector<int8_t>* q) {
  Vector1d<float> in(x, ScalarType::Float);
  Vector1d<int8_t> out(std::vector<int8_t>(x.size(), 99), ScalarType::Char);
  EValue args[] = {EValue(&in.tensor), EValue(scale), EValue(zero_point), EValue(int64_t{-128}),
                   EValue(int64_t{127}), EValue(static_cast<int64_t>(ScalarType::Char)),
                   EValue(&out.tensor), EValue(&out.tensor)};
  EValue* pointers[8];
  for (size_t i = 0; i < 8; ++i) pointers[i] = &args[i];
  const kiln::OpFunction kernel =
      kiln::get_op_function("quantized_decomposed::quantize_per_tensor", "out");
  EXPECT_NE(kernel, nullptr);
  kiln::KernelContext context(nullptr);
  kernel(context, {pointers, 8});
  *q = out.data;
  return context.failure_state();
}

TEST_F(QuantizeKernels, NanQuantizesToTheZeroPoint) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<int8_t> q;
  ASSERT_EQ(quantize_per_tensor({nan, 1.0f, -inf, inf, -nan}, 0.5, 3, &q), Error::Ok);
  EXPECT_EQ(q, (std::vector<int8_t>{3, 5, -128, 127, 3}));
}

TEST_F(QuantizeKernels, NanWithAZeroPointOutsideTheRangeIsClamped) {
  // The zero point is an argument like any other: a program may put it outside [qmin, qmax].
  std::vector<int8_t> q;
  ASSERT_EQ(quantize_per_tensor({std::nanf("")}, 1.0, 500, &q), Error::Ok);
  EXPECT_EQ(q, std::vector<int8_t>{127});
}

TEST_F(QuantizeKernels, ScaleWhoseReciprocalOverflowsFloat32IsRefused) {
  std::vector<int8_t> q;
  // Positive and finite as a double, but 1 / scale is above FLT_MAX: the loop would
  // compute 0 * inf = NaN for every zero input.
  EXPECT_EQ(quantize_per_tensor({0.0f, 1.0f}, 1e-39, 0, &q), Error::InvalidArgument);
  EXPECT_EQ(quantize_per_tensor({0.0f}, 0.0, 0, &q), Error::InvalidArgument);
  EXPECT_EQ(quantize_per_tensor({0.0f}, std::nan(""), 0, &q), Error::InvalidArgument);
  // The smallest scale with a finite float32 reciprocal still works.
  ASSERT_EQ(quantize_per_tensor({0.0f}, 1.0 / 3.0e38, 7, &q), Error::Ok);
  EXPECT_EQ(q, std::vector<int8_t>{7});
}

TEST_F(QuantizeKernels, PerChannelScaleWhoseReciprocalOverflowsIsRefused) {
  Vector1d<float> in({1.0f, 2.0f}, ScalarType::Float);
  Vector1d<float> scales({0.5f, 1e-39f}, ScalarType::Float);
  Vector1d<int64_t> zero_points({0, 0}, ScalarType::Long);
  Vector1d<int8_t> out({0, 0}, ScalarType::Char);
  EValue args[] = {EValue(&in.tensor), EValue(&scales.tensor), EValue(&zero_points.tensor),
                   EValue(int64_t{0}), EValue(int64_t{-128}), EValue(int64_t{127}),
                   EValue(static_cast<int64_t>(ScalarType::Char)), EValue(&out.tensor),
                   EValue(&out.tensor)};
  EValue* pointers[9];
  for (size_t i = 0; i < 9; ++i) pointers[i] = &args[i];
  const kiln::OpFunction kernel =
      kiln::get_op_function("quantized_decomposed::quantize_per_channel", "out");
  ASSERT_NE(kernel, nullptr);
  kiln::KernelContext context(nullptr);
  kernel(context, {pointers, 9});
  EXPECT_EQ(context.failure_state(), Error::InvalidArgument);
}

}  // namespace
