// XnnpackBackend on hand-built payloads: small graphs run with the right numbers
// (computed here from the definition of each operation), and every kind of bad payload
// is a named error at init, never a crash (byte flips included; run under ASan/UBSan in
// the host-debug preset).
#include "backends/xnnpack/runtime/xnnpack_backend.h"

#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <optional>
#include <tuple>
#include <string>
#include <vector>

#include "runtime/core/evalue.h"
#include "runtime/core/memory_allocator.h"
#include "runtime/core/tensor.h"
#include "tests/cpp/xnnpack/xnnpack_payload_builder.h"

namespace {

using kiln::Error;
using kiln::EValue;
using kiln_test::XnnGraphBuilder;
using kiln_xnnpack::NodeUnion;

/// A float tensor that owns its sizes and data.
struct FloatTensor {
  explicit FloatTensor(std::vector<int32_t> shape) : sizes(std::move(shape)) {
    size_t n = 1;
    for (int32_t s : sizes) n *= static_cast<size_t>(s);
    data.assign(n, 0.0f);
    order.resize(sizes.size());
    strides.resize(sizes.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<kiln::DimOrderType>(i);
    tensor.emplace(kiln::ScalarType::Float, static_cast<int32_t>(sizes.size()), sizes.data(), order.data(),
                   strides.data(), data.data());
    value = EValue(&*tensor);
  }
  std::vector<int32_t> sizes;
  std::vector<kiln::DimOrderType> order;
  std::vector<kiln::StridesType> strides;
  std::vector<float> data;
  std::optional<kiln::Tensor> tensor;
  EValue value;
};

class NamedData final : public kiln::NamedDataMap {
 public:
  std::map<std::string, std::vector<uint8_t>> entries;
  kiln::Result<kiln::Span<const uint8_t>> get(const char* key, size_t length) const override {
    auto it = entries.find(std::string(key, length));
    if (it == entries.end()) return Error::NotFound;
    return kiln::Span<const uint8_t>(it->second.data(), it->second.size());
  }
};

class XnnpackBackendTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { ASSERT_EQ(kiln::register_xnnpack_backend(), Error::Ok); }

  kiln::Result<kiln::DelegateHandle*> init(const std::vector<uint8_t>& payload,
                                           const kiln::NamedDataMap* named = nullptr) {
    kiln::BackendInitContext context{&allocator_, named};
    return backend_.init(context, {payload.data(), payload.size()}, {});
  }

  Error run(kiln::DelegateHandle* handle, FloatTensor& in, FloatTensor& out) {
    EValue* args[2] = {&in.value, &out.value};
    kiln::BackendExecuteContext context{&allocator_};
    return backend_.execute(context, handle, {args, 2});
  }

  /// add_constant_payload's graph (input [2,3] + floats 1..6) on inputs 0, 0.5, ..., 2.5.
  void expect_adds_one_to_six(const std::vector<uint8_t>& payload) {
    auto handle = init(payload);
    ASSERT_TRUE(handle.ok()) << kiln::error_name(handle.error());
    FloatTensor in({2, 3});
    FloatTensor out({2, 3});
    for (size_t i = 0; i < 6; ++i) in.data[i] = 0.5f * static_cast<float>(i);
    ASSERT_EQ(run(*handle, in, out), Error::Ok);
    for (size_t i = 0; i < 6; ++i) EXPECT_EQ(out.data[i], 0.5f * static_cast<float>(i) + static_cast<float>(i + 1));
    backend_.destroy(*handle);
  }

  kiln::XnnpackBackend backend_;
  std::vector<uint8_t> pool_ = std::vector<uint8_t>(4096);
  kiln::MemoryAllocator allocator_{pool_.data(), pool_.size()};
};

TEST_F(XnnpackBackendTest, AddsAConstantFromThePayloadsConstantData) {
  expect_adds_one_to_six(kiln_test::add_constant_payload());
}

TEST_F(XnnpackBackendTest, ReadsConstantsFromTheProgramsNamedData) {
  XnnGraphBuilder b;
  b.value({0, {2, 3}});
  b.value({1, {2, 3}, 1});
  b.value({2, {2, 3}});
  b.binary(NodeUnion::XNNMultiply, 0, 1, 2);
  b.constant({0, 24, "weights"});
  const std::vector<uint8_t> payload = b.payload({0}, {2}, {});
  NamedData named;
  std::vector<uint8_t>& bytes = named.entries["weights"];
  bytes.resize(24);
  const float w[6] = {2, 2, 2, -1, -1, -1};
  std::memcpy(bytes.data(), w, sizeof(w));
  auto handle = init(payload, &named);
  ASSERT_TRUE(handle.ok()) << kiln::error_name(handle.error());
  FloatTensor in({2, 3});
  FloatTensor out({2, 3});
  for (size_t i = 0; i < 6; ++i) in.data[i] = static_cast<float>(i);
  ASSERT_EQ(run(*handle, in, out), Error::Ok);
  for (size_t i = 0; i < 6; ++i) EXPECT_EQ(out.data[i], static_cast<float>(i) * w[i]);
  backend_.destroy(*handle);
  named.entries.clear();
  EXPECT_EQ(init(payload, &named).error(), Error::NotFound);
  EXPECT_EQ(init(payload, nullptr).error(), Error::NotFound);
}

TEST_F(XnnpackBackendTest, RunsStaticTransposesBetweenXnnpackRuntimes) {
  const std::vector<uint8_t> payload = kiln_test::transpose_add_payload();
  auto handle = init(payload);
  ASSERT_TRUE(handle.ok()) << kiln::error_name(handle.error());
  FloatTensor in({2, 3, 4});
  FloatTensor out({4, 2, 3});
  for (size_t i = 0; i < in.data.size(); ++i) in.data[i] = static_cast<float>(i);
  ASSERT_EQ(run(*handle, in, out), Error::Ok);
  // out[k][i][j] = 2 * in[i][j][k]
  for (size_t k = 0; k < 4; ++k) {
    for (size_t i = 0; i < 2; ++i) {
      for (size_t j = 0; j < 3; ++j) EXPECT_EQ(out.data[(k * 2 + i) * 3 + j], 2 * in.data[(i * 3 + j) * 4 + k]);
    }
  }
  backend_.destroy(*handle);
}

TEST_F(XnnpackBackendTest, RunsAConvolutionAndAPoolingLikeTheirDefinitions) {
  auto handle = init(kiln_test::conv_pool_payload());
  ASSERT_TRUE(handle.ok()) << kiln::error_name(handle.error());
  FloatTensor in({1, 4, 4, 2});
  FloatTensor out({1, 2, 2, 3});
  for (size_t i = 0; i < in.data.size(); ++i) in.data[i] = static_cast<float>((i * 7) % 11) - 5.0f;
  ASSERT_EQ(run(*handle, in, out), Error::Ok);
  const float filter[3][2] = {{1, -1}, {0.5f, 0.5f}, {2, 0}};
  const float bias[3] = {0.25f, 0, -1};
  for (size_t y = 0; y < 2; ++y) {
    for (size_t x = 0; x < 2; ++x) {
      for (size_t c = 0; c < 3; ++c) {
        float best = -1e30f;
        for (size_t dy = 0; dy < 2; ++dy) {
          for (size_t dx = 0; dx < 2; ++dx) {
            const float* px = &in.data[((2 * y + dy) * 4 + (2 * x + dx)) * 2];
            const float v = px[0] * filter[c][0] + px[1] * filter[c][1] + bias[c];
            best = v > best ? v : best;
          }
        }
        EXPECT_FLOAT_EQ(out.data[(y * 2 + x) * 3 + c], best) << y << "," << x << "," << c;
      }
    }
  }
  backend_.destroy(*handle);
}

TEST_F(XnnpackBackendTest, TensorsOfTheWrongSizeAreRefusedAtExecute) {
  auto handle = init(kiln_test::add_constant_payload());
  ASSERT_TRUE(handle.ok());
  FloatTensor in({2, 4});
  FloatTensor out({2, 3});
  EXPECT_EQ(run(*handle, in, out), Error::DelegatePayloadIoMismatch);
  backend_.destroy(*handle);
}

TEST_F(XnnpackBackendTest, ATruncatedHeaderIsNamed) {
  std::vector<uint8_t> payload = kiln_test::add_constant_payload();
  payload.resize(20);
  EXPECT_EQ(init(payload).error(), Error::DelegatePayloadTruncated);
  payload = kiln_test::add_constant_payload();
  payload.resize(payload.size() - 30);  // the constant data (and more) is cut off
  EXPECT_EQ(init(payload).error(), Error::DelegatePayloadTruncated);
}

TEST_F(XnnpackBackendTest, AFlatbufferThatIsNotAnXnnGraphIsNamed) {
  std::vector<uint8_t> payload = kiln_test::add_constant_payload();
  std::memcpy(payload.data() + 32 + 4, "ZZ99", 4);
  EXPECT_EQ(init(payload).error(), Error::DelegatePayloadBadBlock);
}

TEST_F(XnnpackBackendTest, AnUndefinedValueIdIsNamed) {
  XnnGraphBuilder b;
  b.value({0, {2, 3}});
  b.value({1, {2, 3}});
  b.binary(NodeUnion::XNNAdd, 0, 7, 1);
  EXPECT_EQ(init(b.payload({0}, {1}, {})).error(), Error::DelegatePayloadBadIo);
}

TEST_F(XnnpackBackendTest, AConstantOutsideItsDataIsNamed) {
  XnnGraphBuilder b;
  b.value({0, {2, 3}});
  b.value({1, {2, 3}, 1});
  b.value({2, {2, 3}});
  b.binary(NodeUnion::XNNAdd, 0, 1, 2);
  b.constant({16, 24, ""});  // 24 bytes at 16 in 24 bytes of data
  EXPECT_EQ(init(b.payload({0}, {2}, std::vector<uint8_t>(24))).error(), Error::DelegatePayloadBadSize);
  XnnGraphBuilder small;
  small.value({0, {2, 3}});
  small.value({1, {2, 3}, 1});
  small.value({2, {2, 3}});
  small.binary(NodeUnion::XNNAdd, 0, 1, 2);
  small.constant({0, 8, ""});  // inside the data, but smaller than the [2, 3] floats
  EXPECT_EQ(init(small.payload({0}, {2}, std::vector<uint8_t>(24))).error(), Error::DelegatePayloadBadSize);
}

TEST_F(XnnpackBackendTest, ShapesANodeCannotTakeAreNamed) {
  XnnGraphBuilder b;
  b.value({0, {2, 3}});  // a convolution needs NHWC input
  b.value({1, {4, 1, 1, 3}, 1});
  b.value({2, {2, 4}});
  b.conv(0, 1, 0xFFFFFFFFu, 2, 1, 3, 4);
  b.constant({0, 48, ""});
  EXPECT_EQ(init(b.payload({0}, {2}, std::vector<uint8_t>(48))).error(), Error::DelegateInvalidCompatibility);
}

TEST_F(XnnpackBackendTest, ANodeThisXnnpackLacksIsNamed) {
  XnnGraphBuilder b;
  b.value({0, {2, 3}});
  b.value({1, {2, 3}});
  b.value({2, {4, 3}});
  b.concatenate(0, 1, 2);
  EXPECT_EQ(init(b.payload({0, 1}, {2}, {})).error(), Error::NotSupported);
}

TEST_F(XnnpackBackendTest, AFlatbufferAtAnOddOffsetRunsFromAnAlignedCopy) {
  // One byte before the flatbuffer: its offset (header bytes 10-13) and the constant data's
  // (18-21) move by one, so the flatbuffer starts misaligned in an aligned vector.
  std::vector<uint8_t> payload = kiln_test::add_constant_payload();
  const uint32_t fb_offset = payload[10] | payload[11] << 8 | payload[12] << 16 | uint32_t{payload[13]} << 24;
  payload.insert(payload.begin() + fb_offset, uint8_t{0});
  payload[10] = static_cast<uint8_t>(payload[10] + 1);
  payload[18] = static_cast<uint8_t>(payload[18] + 1);
  ASSERT_EQ(fb_offset % 8, 0u);
  expect_adds_one_to_six(payload);
}

TEST_F(XnnpackBackendTest, ValuesOfMoreThanTwoGibibytesAreRefusedAtInit) {
  XnnGraphBuilder b;  // 3 x 1 GiB of floats: XNNPACK's workspace would ask for them at init
  b.value({0, {256, 1024, 1024}});
  b.value({1, {256, 1024, 1024}});
  b.value({2, {256, 1024, 1024}});
  b.binary(NodeUnion::XNNAdd, 0, 1, 2);
  EXPECT_EQ(init(b.payload({0, 1}, {2}, {})).error(), Error::DelegatePayloadBadSize);
}

TEST_F(XnnpackBackendTest, AValueWrittenTwiceOrAnInputWrittenIsNamed) {
  XnnGraphBuilder twice;
  twice.value({0, {2, 3}});
  twice.value({1, {2, 3}});
  twice.value({2, {2, 3}});
  twice.binary(NodeUnion::XNNAdd, 0, 1, 2);
  twice.binary(NodeUnion::XNNMultiply, 0, 1, 2);
  EXPECT_EQ(init(twice.payload({0, 1}, {2}, {})).error(), Error::DelegatePayloadBadIo);
  XnnGraphBuilder input;
  input.value({0, {2, 3}});
  input.value({1, {2, 3}});
  input.binary(NodeUnion::XNNAdd, 0, 1, 1);
  EXPECT_EQ(init(input.payload({0, 1}, {1}, {})).error(), Error::DelegatePayloadBadIo);
}

TEST_F(XnnpackBackendTest, AValueThatNothingWritesIsNamedWhenReadOrOutput) {
  // Value 3 is neither a graph input nor a constant, and no node writes it: XNNPACK would
  // assert when it sets the node up (the fuzzers found this with a leaky ReLU).
  XnnGraphBuilder read;
  read.value({0, {2, 3}});
  read.value({1, {2, 3}});
  read.value({2, {2, 3}});
  read.value({3, {2, 3}});
  read.binary(NodeUnion::XNNAdd, 0, 3, 2);
  EXPECT_EQ(init(read.payload({0, 1}, {2}, {})).error(), Error::DelegatePayloadBadIo);
  // An output that no node writes would come back as whatever its buffer held.
  XnnGraphBuilder output;
  output.value({0, {2, 3}});
  output.value({1, {2, 3}});
  output.value({2, {2, 3}});
  output.value({3, {2, 3}});
  output.binary(NodeUnion::XNNAdd, 0, 1, 2);
  EXPECT_EQ(init(output.payload({0, 1}, {2, 3}, {})).error(), Error::DelegatePayloadBadIo);
}

TEST_F(XnnpackBackendTest, ZeroThreadsAreRefused) {
  EXPECT_EQ(kiln::set_xnnpack_threads(0), Error::InvalidArgument);
  EXPECT_EQ(kiln::xnnpack_threads(), 1u);
}


TEST_F(XnnpackBackendTest, ByteFlipsAreErrorsNotCrashes) {
  for (const auto& [payload, in_shape, out_shape] :
       {std::make_tuple(kiln_test::add_constant_payload(), std::vector<int32_t>{2, 3}, std::vector<int32_t>{2, 3}),
        std::make_tuple(kiln_test::transpose_add_payload(), std::vector<int32_t>{2, 3, 4},
                        std::vector<int32_t>{4, 2, 3}),
        std::make_tuple(kiln_test::conv_pool_payload(), std::vector<int32_t>{1, 4, 4, 2},
                        std::vector<int32_t>{1, 2, 2, 3})}) {
    size_t initialized = 0;
    for (size_t i = 0; i < payload.size(); ++i) {
      for (const uint8_t mask : {uint8_t{0xFF}, uint8_t{0x01}, uint8_t{0x80}}) {
        std::vector<uint8_t> flipped = payload;
        flipped[i] ^= mask;
        auto handle = init(flipped);
        if (!handle.ok()) continue;
        ++initialized;
        FloatTensor in(in_shape);
        FloatTensor out(out_shape);
        // A flipped payload may fail to run; only a crash (or a sanitizer report) fails this test.
        (void)run(*handle, in, out);
        backend_.destroy(*handle);
      }
    }
    EXPECT_GT(initialized, 0u);  // some flips (padding, unused fields) are harmless
  }
}

}  // namespace
