// Kernels on bool tensors whose bytes are neither 0 nor 1, which a hostile program can
// give them (a bool tensor placed over memory another tensor wrote; found by fuzzing the
// program loader + execute path). Loading such a byte as a C++ bool is undefined, so the
// kernels read bool elements as bytes: any non-zero byte is true. Under the host-debug
// preset (UBSan) a kernel that loads one as bool fails these tests.
#include <gtest/gtest.h>

#include <cstdint>
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

class BoolBytes : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const Error error = kiln::register_portable_kernels();
    ASSERT_TRUE(error == Error::Ok || error == Error::RegistrationAlreadyRegistered);
  }
};

/// A 1-D tensor of `type` over raw bytes (one byte per element: bool, uint8, int8).
struct Bytes1d {
  Bytes1d(std::vector<uint8_t> values, ScalarType type)
      : data(std::move(values)), size(static_cast<int32_t>(data.size())),
        tensor(type, 1, &size, &order, &stride, data.data()) {}
  std::vector<uint8_t> data;
  int32_t size;
  uint8_t order = 0;
  int32_t stride = 1;
  Tensor tensor;
};

/// A 0-dim tensor over `data`.
template <typename T>
struct Scalar0d {
  explicit Scalar0d(ScalarType type) : tensor(type, 0, nullptr, nullptr, nullptr, &data) {}
  T data{};
  Tensor tensor;
};

/// Calls operator `name`.`overload` with `args` (the out tensor last, as programs pass it
/// twice: as out and as the result); returns the kernel's error.
Error call(const char* name, const char* overload, std::vector<EValue> args) {
  std::vector<EValue*> pointers;
  for (EValue& arg : args) pointers.push_back(&arg);
  pointers.push_back(pointers.back());
  const kiln::OpFunction kernel = kiln::get_op_function(name, overload);
  EXPECT_NE(kernel, nullptr) << name << "." << overload;
  if (kernel == nullptr) return Error::OperatorMissing;
  kiln::KernelContext context(nullptr);
  kernel(context, {pointers.data(), pointers.size()});
  return context.failure_state();
}

// 0, 1 and bytes a bool never holds.
const std::vector<uint8_t> kOddBools = {0, 1, 4, 255, 0, 2};
const std::vector<uint8_t> kTruth = {0, 1, 1, 1, 0, 1};

std::vector<uint8_t> flipped(const std::vector<uint8_t>& truth) {
  std::vector<uint8_t> result;
  for (uint8_t t : truth) result.push_back(t == 0 ? 1 : 0);
  return result;
}

TEST_F(BoolBytes, UnaryPredicatesAndLogicalNot) {
  Bytes1d in(kOddBools, ScalarType::Bool);
  Bytes1d out(std::vector<uint8_t>(6, 7), ScalarType::Bool);
  ASSERT_EQ(call("aten::logical_not", "out", {EValue(&in.tensor), EValue(&out.tensor)}), Error::Ok);
  EXPECT_EQ(out.data, flipped(kTruth));
  ASSERT_EQ(call("aten::isnan", "out", {EValue(&in.tensor), EValue(&out.tensor)}), Error::Ok);
  EXPECT_EQ(out.data, std::vector<uint8_t>(6, 0));
}

TEST_F(BoolBytes, LogicalAndComparisonOfBoolTensors) {
  Bytes1d a(kOddBools, ScalarType::Bool);
  Bytes1d b({1, 1, 1, 0, 0, 2}, ScalarType::Bool);
  Bytes1d out(std::vector<uint8_t>(6, 7), ScalarType::Bool);
  ASSERT_EQ(call("aten::logical_and", "out", {EValue(&a.tensor), EValue(&b.tensor), EValue(&out.tensor)}),
            Error::Ok);
  EXPECT_EQ(out.data, (std::vector<uint8_t>{0, 1, 1, 0, 0, 1}));
  ASSERT_EQ(call("aten::eq", "Tensor_out", {EValue(&a.tensor), EValue(&b.tensor), EValue(&out.tensor)}), Error::Ok);
  EXPECT_EQ(out.data, (std::vector<uint8_t>{0, 1, 1, 0, 1, 1}));  // 4 == 1: both true
}

TEST_F(BoolBytes, BitwiseNotAndSignKeepBoolsBoolean) {
  Bytes1d in(kOddBools, ScalarType::Bool);
  Bytes1d out(std::vector<uint8_t>(6, 7), ScalarType::Bool);
  ASSERT_EQ(call("aten::bitwise_not", "out", {EValue(&in.tensor), EValue(&out.tensor)}), Error::Ok);
  EXPECT_EQ(out.data, flipped(kTruth));
  ASSERT_EQ(call("aten::sign", "out", {EValue(&in.tensor), EValue(&out.tensor)}), Error::Ok);
  EXPECT_EQ(out.data, kTruth);
}

TEST_F(BoolBytes, ConversionsReadNonZeroAsTrue) {
  // pow(2, bool) computes in int64 from converted bools: 2^1 for every true element.
  Bytes1d in(kOddBools, ScalarType::Bool);
  std::vector<int64_t> result(6, -1);
  int32_t size = 6;
  uint8_t order = 0;
  int32_t stride = 1;
  Tensor out(ScalarType::Long, 1, &size, &order, &stride, result.data());
  ASSERT_EQ(call("aten::pow", "Scalar_out", {EValue(int64_t{2}), EValue(&in.tensor), EValue(&out)}), Error::Ok);
  EXPECT_EQ(result, (std::vector<int64_t>{1, 2, 2, 2, 1, 2}));
  Bytes1d as_uint8(std::vector<uint8_t>(6, 7), ScalarType::Byte);
  ASSERT_EQ(call("aten::_to_copy", "out", {EValue(&in.tensor), EValue(false), EValue(), EValue(&as_uint8.tensor)}),
            Error::Ok);
  EXPECT_EQ(as_uint8.data, kTruth);
}

TEST_F(BoolBytes, ReductionsAndSelection) {
  Bytes1d in({0, 0, 4, 0}, ScalarType::Bool);
  Scalar0d<uint8_t> any(ScalarType::Bool);
  ASSERT_EQ(call("aten::any", "all_out", {EValue(&in.tensor), EValue(&any.tensor)}), Error::Ok);
  EXPECT_EQ(any.data, 1);
  Scalar0d<uint8_t> max(ScalarType::Bool);
  ASSERT_EQ(call("aten::max", "unary_out", {EValue(&in.tensor), EValue(&max.tensor)}), Error::Ok);
  EXPECT_EQ(max.data, 1);
  Bytes1d cond({1, 0, 1, 0}, ScalarType::Bool);
  Bytes1d other({255, 9, 0, 3}, ScalarType::Bool);
  Bytes1d out(std::vector<uint8_t>(4, 7), ScalarType::Bool);
  ASSERT_EQ(call("aten::where", "self_out",
                 {EValue(&cond.tensor), EValue(&in.tensor), EValue(&other.tensor), EValue(&out.tensor)}),
            Error::Ok);
  EXPECT_EQ(out.data, (std::vector<uint8_t>{0, 1, 1, 1}));
  ASSERT_EQ(call("aten::masked_fill", "Scalar_out",
                 {EValue(&other.tensor), EValue(&cond.tensor), EValue(false), EValue(&out.tensor)}),
            Error::Ok);
  EXPECT_EQ(out.data, (std::vector<uint8_t>{0, 1, 0, 1}));
}

}  // namespace
