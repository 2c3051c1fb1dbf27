// The cortex_m:: elementwise, table, softmax, layout, pooling and quantize kernels on
// arguments they cannot take: each is refused with a named kiln::Error and a log line,
// never a fault or a read out of bounds (host-debug: AddressSanitizer + UBSan).
#include <gtest/gtest.h>

#include "tests/cpp/kernels/cortex_m/kernel_call.h"

namespace {

using kiln::Error;
using kiln_test::channels_last_int8;
using kiln_test::int8_tensor;
using kiln_test::KernelCall;
using kiln_test::KernelOutcome;
using kiln_test::OwnedTensor;

constexpr int32_t kMultiplier = 1 << 30;

void expect_refused(const KernelOutcome& o, Error error, const char* text) {
  EXPECT_EQ(o.error, error) << o.log;
  EXPECT_NE(o.log.find(text), std::string::npos) << "log should contain \"" << text << "\":\n" << o.log;
}

KernelCall add_call(OwnedTensor& a, OwnedTensor& b, OwnedTensor& out, int64_t shift = -1) {
  KernelCall call;
  call.tensor(a).integer(0).integer(kMultiplier).integer(shift).tensor(b).integer(0).integer(kMultiplier);
  call.integer(shift).integer(0).integer(kMultiplier).integer(-20).integer(-128).integer(127).tensor(out);
  return call;
}

TEST(CortexMBadInput, AddTakesTheGoodArguments) {
  OwnedTensor a = int8_tensor({3, 7}), b = int8_tensor({3, 7}), out = int8_tensor({3, 7});
  EXPECT_EQ(add_call(a, b, out).run("cortex_m::quantized_add").error, Error::Ok);
}

TEST(CortexMBadInput, AddOperandsThatDoNotBroadcast) {
  OwnedTensor a = int8_tensor({3, 7}), b = int8_tensor({5}), out = int8_tensor({3, 7});
  expect_refused(add_call(a, b, out).run("cortex_m::quantized_add"), Error::NotSupported, "operands [3, 7] and [5]");
}

TEST(CortexMBadInput, AddShiftOutOfRange) {
  OwnedTensor a = int8_tensor({3, 7}), b = int8_tensor({3, 7}), out = int8_tensor({3, 7});
  const KernelOutcome o = add_call(a, b, out, 45).run("cortex_m::quantized_add");
  EXPECT_EQ(o.error, Error::InvalidArgument) << o.log;
  EXPECT_NE(o.log.find("45"), std::string::npos) << o.log;
}

TEST(CortexMBadInput, AddInt16Operand) {
  OwnedTensor a = int8_tensor({3, 7}), out = int8_tensor({3, 7});
  OwnedTensor b(kiln::ScalarType::Short, {3, 7});
  EXPECT_NE(add_call(a, b, out).run("cortex_m::quantized_add").error, Error::Ok);
}

TEST(CortexMBadInput, AddTakesANegativeOperandMultiplier) {
  // a - b: ExecuTorch's lowering negates the second operand's multiplier.
  OwnedTensor a = int8_tensor({3, 7}), b = int8_tensor({3, 7}), out = int8_tensor({3, 7});
  EXPECT_EQ(add_call(a, b, out).set_integer(6, -kMultiplier).run("cortex_m::quantized_add").error, Error::Ok);
}

TEST(CortexMBadInput, AddNegativeOutputMultiplier) {
  OwnedTensor a = int8_tensor({3, 7}), b = int8_tensor({3, 7}), out = int8_tensor({3, 7});
  const KernelOutcome o = add_call(a, b, out).set_integer(9, -kMultiplier).run("cortex_m::quantized_add");
  EXPECT_EQ(o.error, Error::InvalidArgument) << o.log;
}

TEST(CortexMBadInput, MulOperandsThatDoNotBroadcast) {
  OwnedTensor a = channels_last_int8(1, 4, 3, 3), b = int8_tensor({1, 5, 1, 1}), out = channels_last_int8(1, 4, 3, 3);
  KernelCall call;
  call.tensor(a).integer(0).tensor(b).integer(0).integer(0).integer(kMultiplier).integer(-8).tensor(out);
  expect_refused(call.run("cortex_m::quantized_mul"), Error::NotSupported, "operands");
}

TEST(CortexMBadInput, DivOperandsOfDifferentSizes) {
  OwnedTensor a = int8_tensor({6}), b = int8_tensor({5}), out = int8_tensor({6});
  KernelCall call;
  call.tensor(a).integer(0).tensor(b).integer(0).integer(0).real(0.5).tensor(out);
  EXPECT_NE(call.run("cortex_m::quantized_div").error, Error::Ok);
}

TEST(CortexMBadInput, ActivationTableOfTheWrongLength) {
  OwnedTensor x = int8_tensor({9}), lut = int8_tensor({255}), out = int8_tensor({9});
  KernelCall call;
  call.tensor(x).tensor(lut).tensor(out);
  const KernelOutcome o = call.run("cortex_m::quantized_activation");
  EXPECT_EQ(o.error, Error::InvalidArgument) << o.log;
  EXPECT_NE(o.log.find("255"), std::string::npos) << o.log;
}

TEST(CortexMBadInput, MaximumOfDifferentDtypes) {
  OwnedTensor a = int8_tensor({4}), out = int8_tensor({4});
  OwnedTensor b(kiln::ScalarType::Int, {4});
  KernelCall call;
  call.tensor(a).tensor(b).tensor(out);
  EXPECT_NE(call.run("cortex_m::maximum").error, Error::Ok);
}

TEST(CortexMBadInput, MinimumOperandsThatDoNotBroadcast) {
  OwnedTensor a = int8_tensor({4, 3}), b = int8_tensor({5}), out = int8_tensor({4, 3});
  KernelCall call;
  call.tensor(a).tensor(b).tensor(out);
  EXPECT_NE(call.run("cortex_m::minimum").error, Error::Ok);
}

TEST(CortexMBadInput, SoftmaxDimOutOfRange) {
  OwnedTensor x = int8_tensor({2, 5}), out = int8_tensor({2, 5});
  KernelCall call;
  call.tensor(x).integer(2).integer(0).integer(-128).integer(kMultiplier).integer(3).integer(-100).tensor(out);
  const KernelOutcome o = call.run("cortex_m::softmax");
  EXPECT_EQ(o.error, Error::InvalidArgument) << o.log;
  EXPECT_FALSE(o.log.empty());
}

TEST(CortexMBadInput, SoftmaxShiftOutOfRange) {
  OwnedTensor x = int8_tensor({2, 5}), out = int8_tensor({2, 5});
  KernelCall call;
  call.tensor(x).integer(-1).integer(0).integer(-128).integer(kMultiplier).integer(64).integer(-100).tensor(out);
  EXPECT_EQ(call.run("cortex_m::softmax").error, Error::InvalidArgument);
}

TEST(CortexMBadInput, TransposeWithARepeatedDim) {
  OwnedTensor x = int8_tensor({2, 3, 4}), out = int8_tensor({3, 3, 2});
  KernelCall call;
  call.tensor(x).list({1, 1, 0}).tensor(out);
  EXPECT_EQ(call.run("cortex_m::transpose").error, Error::InvalidArgument);
}

TEST(CortexMBadInput, TransposePermutationOfTheWrongLength) {
  OwnedTensor x = int8_tensor({2, 3, 4}), out = int8_tensor({3, 2, 4});
  KernelCall call;
  call.tensor(x).list({1, 0}).tensor(out);
  EXPECT_EQ(call.run("cortex_m::transpose").error, Error::InvalidArgument);
}

TEST(CortexMBadInput, PadNegativePadding) {
  OwnedTensor x = int8_tensor({1, 1, 4, 4}), out = int8_tensor({1, 1, 4, 4});
  KernelCall call;
  call.tensor(x).list({0, 0, -1, 0}).list({0, 0, 1, 0}).integer(0).tensor(out);
  EXPECT_EQ(call.run("cortex_m::pad").error, Error::InvalidArgument);
}

TEST(CortexMBadInput, PadValueOutsideInt8) {
  OwnedTensor x = int8_tensor({1, 1, 4, 4}), out = int8_tensor({1, 1, 5, 4});
  KernelCall call;
  call.tensor(x).list({0, 0, 1, 0}).list({0, 0, 0, 0}).integer(300).tensor(out);
  EXPECT_EQ(call.run("cortex_m::pad").error, Error::InvalidArgument);
}

KernelCall avg_pool_call(OwnedTensor& x, OwnedTensor& scratch, OwnedTensor& out, std::vector<int64_t> kernel,
                         std::vector<int64_t> stride) {
  KernelCall call;
  call.tensor(x).list(std::move(kernel)).list(std::move(stride)).list({0, 0}).boolean(false).integer(0);
  call.integer(kMultiplier).integer(0).tensor(scratch).tensor(out);
  return call;
}

TEST(CortexMBadInput, AvgPoolTakesTheGoodArguments) {
  OwnedTensor x = channels_last_int8(1, 3, 4, 4), scratch = int8_tensor({1}), out = channels_last_int8(1, 3, 2, 2);
  EXPECT_EQ(avg_pool_call(x, scratch, out, {2, 2}, {2, 2}).run("cortex_m::quantized_avg_pool2d").error, Error::Ok);
}

TEST(CortexMBadInput, AvgPoolZeroKernel) {
  OwnedTensor x = channels_last_int8(1, 3, 4, 4), scratch = int8_tensor({1}), out = channels_last_int8(1, 3, 2, 2);
  EXPECT_EQ(avg_pool_call(x, scratch, out, {0, 2}, {2, 2}).run("cortex_m::quantized_avg_pool2d").error,
            Error::InvalidArgument);
}

TEST(CortexMBadInput, AvgPoolWindowLargerThanTheInput) {
  OwnedTensor x = channels_last_int8(1, 3, 4, 4), scratch = int8_tensor({1}), out = channels_last_int8(1, 3, 1, 1);
  EXPECT_EQ(avg_pool_call(x, scratch, out, {5, 5}, {1, 1}).run("cortex_m::quantized_avg_pool2d").error,
            Error::InvalidArgument);
}

TEST(CortexMBadInput, MaxPoolZeroStride) {
  OwnedTensor x = channels_last_int8(1, 3, 4, 4), out = channels_last_int8(1, 3, 2, 2);
  KernelCall call;
  call.tensor(x).list({2, 2}).list({0, 0}).list({0, 0}).list({1, 1}).boolean(false).integer(0).integer(0);
  call.integer(-128).integer(127).tensor(out);
  expect_refused(call.run("cortex_m::quantized_max_pool2d"), Error::InvalidArgument, "stride is 0");
}

TEST(CortexMBadInput, MaxPoolInputNot4D) {
  OwnedTensor x = int8_tensor({3, 4, 4}), out = int8_tensor({3, 2, 2});
  KernelCall call;
  call.tensor(x).list({2, 2}).list({2, 2}).list({0, 0}).list({1, 1}).boolean(false).integer(0).integer(0);
  call.integer(-128).integer(127).tensor(out);
  expect_refused(call.run("cortex_m::quantized_max_pool2d"), Error::InvalidArgument, "must be 4-D");
}

TEST(CortexMBadInput, QuantizeToAnUnsupportedDtype) {
  OwnedTensor x(kiln::ScalarType::Float, {5});
  OwnedTensor out = int8_tensor({5});
  KernelCall call;
  call.tensor(x).real(0.1).integer(0).integer(-128).integer(127).integer(6 /* Float */).tensor(out);
  EXPECT_NE(call.run("cortex_m::quantize_per_tensor").error, Error::Ok);
}

TEST(CortexMBadInput, DequantizeAnInt32Input) {
  OwnedTensor x(kiln::ScalarType::Int, {5});
  OwnedTensor out(kiln::ScalarType::Float, {5});
  KernelCall call;
  call.tensor(x).real(0.1).integer(0).integer(-128).integer(127).integer(1).tensor(out);
  EXPECT_NE(call.run("cortex_m::dequantize_per_tensor").error, Error::Ok);
}

/// A good kiln::quantized_layer_norm over rows of 6, with float weight and bias.
struct LayerNorm {
  OwnedTensor x = int8_tensor({2, 6}), out = int8_tensor({2, 6});
  OwnedTensor weight{kiln::ScalarType::Float, {6}}, bias{kiln::ScalarType::Float, {6}};
  KernelCall call;
  LayerNorm() {
    call.tensor(x).integer(3).real(0.05).tensor(weight).tensor(bias).real(1e-5).integer(-2).real(0.02);
    call.integer(-128).integer(127).tensor(out);
  }
};

TEST(CortexMBadInput, LayerNormTakesTheGoodArguments) {
  LayerNorm l;
  EXPECT_EQ(l.call.run("kiln::quantized_layer_norm").error, Error::Ok) << l.call.run("kiln::quantized_layer_norm").log;
}

TEST(CortexMBadInput, LayerNormWeightOfTheWrongLength) {
  LayerNorm l;
  OwnedTensor weight(kiln::ScalarType::Float, {5});
  l.call.set_tensor(3, weight);
  expect_refused(l.call.run("kiln::quantized_layer_norm"), Error::InvalidArgument, "weight has 5 elements");
}

TEST(CortexMBadInput, LayerNormInt8Bias) {
  LayerNorm l;
  OwnedTensor bias = int8_tensor({6});
  l.call.set_tensor(4, bias);
  EXPECT_NE(l.call.run("kiln::quantized_layer_norm").error, Error::Ok);
}

TEST(CortexMBadInput, LayerNormZeroScale) {
  LayerNorm l;
  KernelCall call;
  call.tensor(l.x).integer(3).real(0.0).none().none().real(1e-5).integer(-2).real(0.02);
  call.integer(-128).integer(127).tensor(l.out);
  expect_refused(call.run("kiln::quantized_layer_norm"), Error::InvalidArgument, "positive finite scales");
}

}  // namespace
