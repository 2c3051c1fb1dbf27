// The cortex_m:: convolutions, fully connected layer and batch matmul on arguments they
// cannot take: each is refused with a named kiln::Error and a log line with the numbers,
// before any data is read (host-debug runs these under AddressSanitizer + UBSan).
#include <gtest/gtest.h>

#include "tests/cpp/kernels/cortex_m/kernel_call.h"

namespace {

using kiln::Error;
using kiln_test::channels_last_int8;
using kiln_test::int32_tensor;
using kiln_test::int8_tensor;
using kiln_test::KernelCall;
using kiln_test::KernelOutcome;
using kiln_test::OwnedTensor;

constexpr const char* kConv = "cortex_m::quantized_conv2d";
constexpr const char* kDepthwise = "cortex_m::quantized_depthwise_conv2d";
constexpr const char* kTransposeConv = "cortex_m::quantized_transpose_conv2d";
constexpr int32_t kMultiplier = 1 << 30;

/// A good 3x3 convolution, 5 -> 7 channels on 6x6 (padding 1), that tests then spoil.
struct Conv {
  OwnedTensor input = channels_last_int8(1, 5, 6, 6);
  OwnedTensor weight = int8_tensor({7, 3, 3, 5});
  OwnedTensor bias = int32_tensor(7, 10);
  OwnedTensor multipliers = int32_tensor(7, kMultiplier);
  OwnedTensor shifts = int32_tensor(7, -3);
  OwnedTensor scratch = int8_tensor({1});
  OwnedTensor out = channels_last_int8(1, 7, 6, 6);
  KernelCall call;
  Conv() {
    call.tensor(input).tensor(weight).tensor(bias).list({1, 1}).list({1, 1}).list({1, 1}).integer(3).integer(-2);
    call.tensor(multipliers).tensor(shifts).integer(-128).integer(127).tensor(scratch).tensor(out);
  }
};

void expect_refused(const KernelOutcome& o, Error error, const char* text) {
  EXPECT_EQ(o.error, error) << o.log;
  EXPECT_NE(o.log.find(text), std::string::npos) << "log should contain \"" << text << "\":\n" << o.log;
}

TEST(CortexMBadInput, ConvTakesTheGoodArguments) {
  Conv c;
  EXPECT_EQ(c.call.run(kConv).error, Error::Ok);
}

TEST(CortexMBadInput, ConvWeightChannelsDisagreeWithTheInput) {
  Conv c;
  OwnedTensor weight = int8_tensor({7, 3, 3, 4});  // 4 does not divide 5 input channels
  c.call.set_tensor(1, weight);
  expect_refused(c.call.run(kConv), Error::InvalidArgument, "does not fit 5 input channels");
}

TEST(CortexMBadInput, ConvMultipliersForFewerChannelsThanTheWeight) {
  Conv c;
  OwnedTensor multipliers = int32_tensor(6, kMultiplier);
  c.call.set_tensor(8, multipliers);
  expect_refused(c.call.run(kConv), Error::InvalidArgument, "7 output channels need as many multipliers and shifts, got 6");
}

TEST(CortexMBadInput, ConvShiftOutOfRange) {
  Conv c;
  c.shifts.data<int32_t>()[4] = 40;
  expect_refused(c.call.run(kConv), Error::InvalidArgument, "shift 40 out of range");
}

TEST(CortexMBadInput, ConvNegativeMultiplier) {
  Conv c;
  c.multipliers.data<int32_t>()[0] = -5;
  expect_refused(c.call.run(kConv), Error::InvalidArgument, "multiplier -5");
}

TEST(CortexMBadInput, ConvScratchTooSmallAndNoTempMemory) {
  Conv c;  // im2col needs at least one window of 45 bytes; the scratch tensor has 1, the allocator 16
  expect_refused(c.call.run(kConv, 16), Error::MemoryAllocationFailed, "needs 45 bytes");
}

TEST(CortexMBadInput, ConvZeroSizedInput) {
  Conv c;
  OwnedTensor input = channels_last_int8(1, 5, 0, 6);
  c.call.set_tensor(0, input);
  expect_refused(c.call.run(kConv), Error::InvalidArgument, "gives no output");
}

TEST(CortexMBadInput, ConvKernelLargerThanThePaddedInput) {
  Conv c;
  c.call.set_list(4, {0, 0});
  OwnedTensor input = channels_last_int8(1, 5, 2, 2);
  c.call.set_tensor(0, input);
  expect_refused(c.call.run(kConv), Error::InvalidArgument, "input 2x2 with kernel 3x3");
}

TEST(CortexMBadInput, ConvZeroStride) {
  Conv c;
  c.call.set_list(3, {0, 1});
  expect_refused(c.call.run(kConv), Error::InvalidArgument, "stride is 0");
}

TEST(CortexMBadInput, ConvActivationRangeOutsideInt8) {
  Conv c;
  c.call.set_integer(10, -200);
  expect_refused(c.call.run(kConv), Error::InvalidArgument, "activation range [-200, 127]");
}

TEST(CortexMBadInput, ConvFloatInput) {
  Conv c;
  OwnedTensor input(kiln::ScalarType::Float, {1, 5, 6, 6}, {0, 2, 3, 1});
  c.call.set_tensor(0, input);
  const KernelOutcome o = c.call.run(kConv);
  EXPECT_NE(o.error, Error::Ok);
  EXPECT_NE(o.log.find("input"), std::string::npos) << o.log;
}

TEST(CortexMBadInput, ConvOutputTooSmallForTheResult) {
  Conv c;
  OwnedTensor out = channels_last_int8(1, 7, 3, 3);  // the result is 6x6
  c.call.set_tensor(13, out);
  EXPECT_NE(c.call.run(kConv).error, Error::Ok);
}

TEST(CortexMBadInput, ConvBiasOfTheWrongLength) {
  Conv c;
  OwnedTensor bias = int32_tensor(3, 0);
  c.call.set_tensor(2, bias);
  expect_refused(c.call.run(kConv), Error::InvalidArgument, "bias has 3 elements, need 7");
}

/// A good depthwise 3x3 on 5 channels (multiplier 1).
struct Depthwise {
  OwnedTensor input = channels_last_int8(1, 5, 6, 6);
  OwnedTensor weight = int8_tensor({1, 3, 3, 5});
  OwnedTensor bias = int32_tensor(5, 0);
  OwnedTensor multipliers = int32_tensor(5, kMultiplier);
  OwnedTensor shifts = int32_tensor(5, -2);
  OwnedTensor scratch = int8_tensor({1});
  OwnedTensor out = channels_last_int8(1, 5, 6, 6);
  KernelCall call;
  Depthwise() {
    call.tensor(input).tensor(weight).tensor(bias).list({1, 1}).list({1, 1}).list({1, 1}).integer(1).integer(0);
    call.integer(0).tensor(multipliers).tensor(shifts).integer(-128).integer(127).tensor(scratch).tensor(out);
  }
};

TEST(CortexMBadInput, DepthwiseTakesTheGoodArguments) {
  Depthwise d;
  EXPECT_EQ(d.call.run(kDepthwise).error, Error::Ok);
}

TEST(CortexMBadInput, DepthwiseWeightChannelsDisagreeWithTheInput) {
  Depthwise d;
  OwnedTensor weight = int8_tensor({1, 3, 3, 7});
  d.call.set_tensor(1, weight);
  const KernelOutcome o = d.call.run(kDepthwise);
  EXPECT_EQ(o.error, Error::InvalidArgument) << o.log;
  EXPECT_NE(o.log.find("7"), std::string::npos) << o.log;
}

TEST(CortexMBadInput, DepthwiseZeroMultiplier) {
  Depthwise d;
  d.call.set_integer(6, 0);
  EXPECT_EQ(d.call.run(kDepthwise).error, Error::InvalidArgument);
}

TEST(CortexMBadInput, DepthwiseShiftOutOfRange) {
  Depthwise d;
  d.shifts.data<int32_t>()[2] = -32;
  expect_refused(d.call.run(kDepthwise), Error::InvalidArgument, "shift -32 out of range");
}

TEST(CortexMBadInput, DepthwiseZeroSizedBatch) {
  Depthwise d;
  OwnedTensor input = channels_last_int8(0, 5, 6, 6);
  OwnedTensor out = channels_last_int8(0, 5, 6, 6);
  d.call.set_tensor(0, input).set_tensor(14, out);
  const KernelOutcome o = d.call.run(kDepthwise);
  // Either refused by name or an empty result; never a read.
  if (o.error != Error::Ok) EXPECT_FALSE(o.log.empty());
}

/// A good transposed 3x3 convolution, stride 2, 4 -> 3 channels on 3x3.
struct TransposeConv {
  OwnedTensor input = channels_last_int8(1, 4, 3, 3);
  OwnedTensor weight = int8_tensor({3, 3, 3, 4});
  OwnedTensor multipliers = int32_tensor(3, kMultiplier);
  OwnedTensor shifts = int32_tensor(3, -2);
  OwnedTensor scratch = int8_tensor({1});
  OwnedTensor out = channels_last_int8(1, 3, 5, 5);
  KernelCall call;
  TransposeConv() {
    call.tensor(input).tensor(weight).none().list({2, 2}).list({1, 1}).list({0, 0}).list({1, 1}).integer(0);
    call.integer(0).tensor(multipliers).tensor(shifts).integer(-128).integer(127).tensor(scratch).tensor(scratch);
    call.tensor(out);
  }
};

TEST(CortexMBadInput, TransposeConvTakesTheGoodArguments) {
  TransposeConv t;
  EXPECT_EQ(t.call.run(kTransposeConv).error, Error::Ok) << t.call.run(kTransposeConv).log;
}

TEST(CortexMBadInput, TransposeConvWeightChannelsDisagreeWithTheInput) {
  TransposeConv t;
  OwnedTensor weight = int8_tensor({3, 3, 3, 6});
  t.call.set_tensor(1, weight);
  EXPECT_EQ(t.call.run(kTransposeConv).error, Error::InvalidArgument);
}

TEST(CortexMBadInput, TransposeConvZeroStride) {
  TransposeConv t;
  t.call.set_list(3, {0, 0});
  expect_refused(t.call.run(kTransposeConv), Error::InvalidArgument, "stride is 0");
}

TEST(CortexMBadInput, TransposeConvScratchTooSmallAndNoTempMemory) {
  TransposeConv t;  // one gathered window takes 3 * 3 * 4 = 36 bytes; the scratch tensor has 1, the allocator 16
  expect_refused(t.call.run(kTransposeConv, 16), Error::MemoryAllocationFailed, "needs 36 bytes");
}

/// A good fully connected layer: [3, 9] x [4, 9]^T.
struct Linear {
  OwnedTensor input = int8_tensor({3, 9});
  OwnedTensor weights = int8_tensor({4, 9});
  OwnedTensor bias = int32_tensor(4, 1);
  OwnedTensor out = int8_tensor({3, 4});
  KernelCall call;
  Linear() {
    call.tensor(input).tensor(weights).tensor(bias).none().integer(3).integer(0).integer(-1);
    call.list({kMultiplier}).list({-4}).integer(127).integer(-128).tensor(out);
  }
};

TEST(CortexMBadInput, LinearTakesTheGoodArguments) {
  Linear l;
  EXPECT_EQ(l.call.run("cortex_m::quantized_linear").error, Error::Ok);
}

TEST(CortexMBadInput, LinearWeightsDisagreeWithTheInput) {
  Linear l;
  OwnedTensor weights = int8_tensor({4, 8});
  l.call.set_tensor(1, weights);
  expect_refused(l.call.run("cortex_m::quantized_linear"), Error::InvalidArgument, "does not fit weights [4, 8]");
}

TEST(CortexMBadInput, LinearWithoutRequantizeParameters) {
  Linear l;
  l.call.set_list(7, {}).set_list(8, {});
  expect_refused(l.call.run("cortex_m::quantized_linear"), Error::InvalidArgument, "needs a requantize multiplier");
}

TEST(CortexMBadInput, LinearShiftOutOfRange) {
  Linear l;
  l.call.set_list(8, {31});
  expect_refused(l.call.run("cortex_m::quantized_linear"), Error::InvalidArgument, "shift 31 out of range");
}

TEST(CortexMBadInput, LinearInputOffsetOutOfRange) {
  Linear l;
  l.call.set_integer(4, 300);
  expect_refused(l.call.run("cortex_m::quantized_linear"), Error::InvalidArgument, "is 300, must lie in [-127, 128]");
}

/// A good batch matmul: [2, 3, 5] x [2, 4, 5]^T.
struct BatchMatmul {
  OwnedTensor lhs = int8_tensor({2, 3, 5});
  OwnedTensor rhs = int8_tensor({2, 4, 5});
  OwnedTensor scratch = int8_tensor({1});
  OwnedTensor out = int8_tensor({2, 3, 4});
  KernelCall call;
  BatchMatmul() {
    call.tensor(lhs).integer(0).tensor(rhs).integer(0).integer(0).integer(kMultiplier).integer(-5).tensor(scratch);
    call.tensor(out);
  }
};

TEST(CortexMBadInput, BatchMatmulTakesTheGoodArguments) {
  BatchMatmul b;
  EXPECT_EQ(b.call.run("cortex_m::quantized_batch_matmul").error, Error::Ok);
}

TEST(CortexMBadInput, BatchMatmulInnerSizesDisagree) {
  BatchMatmul b;
  OwnedTensor rhs = int8_tensor({2, 4, 6});
  b.call.set_tensor(2, rhs);
  EXPECT_EQ(b.call.run("cortex_m::quantized_batch_matmul").error, Error::InvalidArgument);
}

TEST(CortexMBadInput, BatchMatmulBatchesDisagree) {
  BatchMatmul b;
  OwnedTensor rhs = int8_tensor({3, 4, 5});
  b.call.set_tensor(2, rhs);
  EXPECT_EQ(b.call.run("cortex_m::quantized_batch_matmul").error, Error::InvalidArgument);
}

TEST(CortexMBadInput, BatchMatmulShiftOutOfRange) {
  BatchMatmul b;
  b.call.set_integer(6, 99);
  expect_refused(b.call.run("cortex_m::quantized_batch_matmul"), Error::InvalidArgument, "shift 99 out of range");
}

}  // namespace
