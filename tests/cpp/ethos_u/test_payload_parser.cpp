#include "backends/arm/runtime/payload_parser.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "runtime/platform/log.h"
#include "tests/cpp/ethos_u/payload_builder.h"

namespace {

using kiln::Error;
using kiln::ethos_u::parse_payload;
using kiln::ethos_u::Payload;
using kiln_test::BlockSpec;
using kiln_test::IoSpec;

/// Payload bytes at a 16-byte aligned address (vector storage is only guaranteed 8 or 16).
class AlignedBytes {
 public:
  explicit AlignedBytes(const std::vector<uint8_t>& bytes, size_t misalign = 0)
      : storage_(bytes.size() + 32 + misalign), size_(bytes.size()) {
    uintptr_t base = reinterpret_cast<uintptr_t>(storage_.data());
    offset_ = (16 - base % 16) % 16 + misalign;
    if (!bytes.empty()) std::memcpy(storage_.data() + offset_, bytes.data(), bytes.size());
  }
  kiln::Span<const uint8_t> span(size_t size) const { return {storage_.data() + offset_, size}; }
  kiln::Span<const uint8_t> span() const { return span(size_); }

 private:
  std::vector<uint8_t> storage_;
  size_t size_;
  size_t offset_;
};

std::vector<BlockSpec> valid_blocks() {
  IoSpec in;
  in.shape = {1, 1, 1, 3, 4, 5};
  in.element_size = 1;
  in.offset = 0;
  IoSpec out;
  out.shape = {1, 1, 1, 1, 2, 10};
  out.element_size = 2;
  out.offset = 64;
  return kiln_test::payload_blocks(kiln_test::dma_copy_stream(0, 64, 60), {1, 2, 3, 4, 5}, 128,
                                   {in}, {out});
}

Error parse(const std::vector<uint8_t>& bytes) {
  AlignedBytes aligned(bytes);
  return parse_payload(aligned.span()).error();
}

Error parse_blocks(const std::vector<BlockSpec>& blocks) {
  return parse(kiln_test::pack_blocks(blocks));
}

size_t block_index(const std::vector<BlockSpec>& blocks, const char* name) {
  for (size_t i = 0; i < blocks.size(); ++i) {
    if (blocks[i].name == name) return i;
  }
  ADD_FAILURE() << "no block " << name;
  return 0;
}

TEST(PayloadParser, ReadsEveryBlock) {
  const std::vector<uint8_t> bytes = kiln_test::pack_blocks(valid_blocks());
  AlignedBytes aligned(bytes);
  kiln::Result<Payload> payload = parse_payload(aligned.span());
  ASSERT_TRUE(payload.ok()) << kiln::error_name(payload.error());
  EXPECT_EQ(payload->command_data.size(), kiln_test::dma_copy_stream(0, 64, 60).size() * 4);
  // cmd_data is the second block: header (32) + empty header block (32).
  EXPECT_EQ(payload->command_data.data(), aligned.span().data() + 64);
  ASSERT_EQ(payload->weight_data.size(), 5u);
  EXPECT_EQ(payload->weight_data[4], 5);
  EXPECT_EQ(payload->scratch_size, 128u);
  ASSERT_EQ(payload->num_inputs, 1u);
  ASSERT_EQ(payload->num_outputs, 1u);
  const kiln::ethos_u::PayloadIo in = payload->input(0);
  EXPECT_EQ(in.shape[3], 3);
  EXPECT_EQ(in.shape[5], 5);
  EXPECT_EQ(in.numel(), 60u);
  EXPECT_EQ(in.region, 1);
  const kiln::ethos_u::PayloadIo out = payload->output(0);
  EXPECT_EQ(out.element_size, 2);
  EXPECT_EQ(out.offset, 64);
  EXPECT_EQ(out.nbytes(), 40u);
}

TEST(PayloadParser, AcceptsBlocksInAnyOrderBetweenHeaderAndFooter) {
  std::vector<BlockSpec> blocks = valid_blocks();
  std::swap(blocks[1], blocks[5]);  // outputs before cmd_data
  EXPECT_EQ(parse_blocks(blocks), Error::Ok);
}

TEST(PayloadParser, EveryTruncationIsNamed) {
  const std::vector<uint8_t> bytes = kiln_test::pack_blocks(valid_blocks());
  AlignedBytes aligned(bytes);
  for (size_t size = 0; size < bytes.size(); ++size) {
    EXPECT_EQ(parse_payload(aligned.span(size)).error(), Error::DelegatePayloadTruncated)
        << "payload cut to " << size << " of " << bytes.size() << " bytes";
  }
  EXPECT_EQ(parse_payload(aligned.span()).error(), Error::Ok);
}

TEST(PayloadParser, RejectsBadBlockNames) {
  {
    std::vector<BlockSpec> blocks = valid_blocks();
    blocks[0].name = "vela_bin_strean";  // the header must come first
    EXPECT_EQ(parse_blocks(blocks), Error::DelegatePayloadBadBlock);
  }
  {
    std::vector<BlockSpec> blocks = valid_blocks();
    blocks[2].name = "weights";
    EXPECT_EQ(parse_blocks(blocks), Error::DelegatePayloadBadBlock);
  }
  {
    std::vector<BlockSpec> blocks = valid_blocks();
    blocks.insert(blocks.begin() + 2, blocks[1]);  // cmd_data twice
    EXPECT_EQ(parse_blocks(blocks), Error::DelegatePayloadBadBlock);
  }
  {
    std::vector<BlockSpec> blocks = valid_blocks();
    blocks.insert(blocks.begin() + 2, blocks[0]);  // a second header inside
    EXPECT_EQ(parse_blocks(blocks), Error::DelegatePayloadBadBlock);
  }
  {
    std::vector<uint8_t> bytes = kiln_test::pack_blocks(valid_blocks());
    std::memset(bytes.data() + 32, 'x', 16);  // cmd_data's name without a NUL
    EXPECT_EQ(parse(bytes), Error::DelegatePayloadBadBlock);
  }
  {
    std::vector<BlockSpec> blocks = valid_blocks();
    blocks[3].external_flag = 2;
    EXPECT_EQ(parse_blocks(blocks), Error::DelegatePayloadBadBlock);
  }
}

TEST(PayloadParser, ExternalBlocksAreNamed) {
  std::vector<BlockSpec> blocks = valid_blocks();
  blocks[2].external_flag = 1;
  blocks[2].data = std::vector<uint8_t>(64, 'a');  // ExecuTorch stores a sha256 hex key
  EXPECT_EQ(parse_blocks(blocks), Error::DelegatePayloadExternalBlock);
}

TEST(PayloadParser, MissingBlocksAreNamed) {
  for (const char* name : {"cmd_data", "weight_data", "scratch_size", "inputs", "outputs"}) {
    std::vector<BlockSpec> blocks = valid_blocks();
    blocks.erase(blocks.begin() + static_cast<long>(block_index(blocks, name)));
    EXPECT_EQ(parse_blocks(blocks), Error::DelegatePayloadMissingBlock) << name;
  }
  std::vector<BlockSpec> blocks = valid_blocks();
  blocks.pop_back();  // no footer: the payload just ends
  EXPECT_EQ(parse_blocks(blocks), Error::DelegatePayloadTruncated);
}

TEST(PayloadParser, SizesThatDisagreeWithContents) {
  {
    std::vector<BlockSpec> blocks = valid_blocks();
    blocks[block_index(blocks, "scratch_size")].data = {1, 2, 3};
    EXPECT_EQ(parse_blocks(blocks), Error::DelegatePayloadBadSize);
  }
  {
    std::vector<BlockSpec> blocks = valid_blocks();
    blocks[block_index(blocks, "cmd_data")].data.push_back(0);  // not whole words
    EXPECT_EQ(parse_blocks(blocks), Error::DelegatePayloadBadSize);
  }
  {
    std::vector<BlockSpec> blocks = valid_blocks();
    blocks[block_index(blocks, "cmd_data")].data.clear();
    EXPECT_EQ(parse_blocks(blocks), Error::DelegatePayloadBadSize);
  }
  for (int32_t count : {0, 2, -1, INT32_MAX}) {
    std::vector<BlockSpec> blocks = valid_blocks();
    auto& data = blocks[block_index(blocks, "inputs")].data;
    std::memcpy(data.data(), &count, 4);  // count disagrees with the block's length
    EXPECT_EQ(parse_blocks(blocks), Error::DelegatePayloadBadSize) << count;
  }
  {
    std::vector<BlockSpec> blocks = valid_blocks();
    blocks[block_index(blocks, "outputs")].data = {1, 0};  // shorter than its count
    EXPECT_EQ(parse_blocks(blocks), Error::DelegatePayloadBadSize);
  }
  for (int64_t length : {int64_t{0xffffffff}, int64_t{0xfffffff1}, int64_t{1} << 20}) {
    // Lengths far past the end (and ones whose padding would wrap a 32-bit size).
    std::vector<BlockSpec> blocks = valid_blocks();
    blocks[block_index(blocks, "weight_data")].length_override = length;
    EXPECT_EQ(parse_blocks(blocks), Error::DelegatePayloadTruncated) << length;
  }
}

TEST(PayloadParser, BadIoDescriptions) {
  auto with_input = [](IoSpec io) {
    std::vector<BlockSpec> blocks = valid_blocks();
    blocks[block_index(blocks, "inputs")].data = kiln_test::io_block({io});
    return parse_blocks(blocks);
  };
  IoSpec io;
  io.shape = {1, 1, 1, -3, 4, 5};
  EXPECT_EQ(with_input(io), Error::DelegatePayloadBadIo);
  io.shape = {65536, 65536, 65536, 1, 1, 1};  // element count overflows
  EXPECT_EQ(with_input(io), Error::DelegatePayloadBadIo);
  io.shape = {1, 1, 1, 1, 1, 4};
  for (int32_t size : {0, 3, 8, -1}) {
    io.element_size = size;
    EXPECT_EQ(with_input(io), Error::DelegatePayloadBadIo) << size;
  }
  io.element_size = 1;
  io.offset = -16;
  EXPECT_EQ(with_input(io), Error::DelegatePayloadBadIo);
  io.offset = 0;
  io.region = -1;
  EXPECT_EQ(with_input(io), Error::DelegatePayloadBadIo);
  io.region = 1;
  EXPECT_EQ(with_input(io), Error::Ok);
}

TEST(PayloadParser, MisalignedPayloadIsNamed) {
  const std::vector<uint8_t> bytes = kiln_test::pack_blocks(valid_blocks());
  for (size_t misalign : {1u, 2u, 3u}) {
    AlignedBytes aligned(bytes, misalign);
    EXPECT_EQ(parse_payload(aligned.span()).error(), Error::DelegatePayloadMisaligned) << misalign;
  }
  AlignedBytes four(bytes, 4);  // words are enough for the parser; drivers ask for more
  EXPECT_EQ(parse_payload(four.span()).error(), Error::Ok);
}

TEST(PayloadParser, EmptyAndNullPayloads) {
  EXPECT_EQ(parse_payload({}).error(), Error::DelegatePayloadTruncated);
  EXPECT_EQ(parse_payload({nullptr, 16}).error(), Error::InvalidArgument);
}

// Random byte flips: every result is Ok or a named error, and (under ASan in the
// host-debug preset) no read leaves the payload.
TEST(PayloadParser, SurvivesRandomByteFlips) {
  const std::vector<uint8_t> valid = kiln_test::pack_blocks(valid_blocks());
  // Every rejection logs; count the lines instead of printing thousands of them.
  size_t log_lines = 0;
  kiln::set_log_sink([](kiln::LogLevel, const char*, size_t, void* user) {
    ++*static_cast<size_t*>(user);
  }, &log_lines);
  std::mt19937 rng(1234);
  size_t rejected = 0;
  constexpr int kRounds = 20000;
  for (int round = 0; round < kRounds; ++round) {
    std::vector<uint8_t> bytes = valid;
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int f = 0; f < flips; ++f) bytes[rng() % bytes.size()] ^= static_cast<uint8_t>(1 + rng() % 255);
    const size_t size = (round % 5 == 0) ? rng() % bytes.size() : bytes.size();
    // An exact-size heap copy, so that ASan sees a read past the end.
    std::vector<uint8_t> exact(bytes.begin(), bytes.begin() + static_cast<long>(size));
    const Error error = parse_payload({exact.data(), exact.size()}).error();
    if (error != Error::Ok) ++rejected;
    const uint32_t code = static_cast<uint32_t>(error);
    EXPECT_TRUE(error == Error::Ok || (code >= 0x70 && code <= 0x77)) << kiln::error_name(error);
  }
  kiln::set_log_sink(nullptr, nullptr);
  // Most flips hit names, lengths or io fields; some hit data and still parse.
  EXPECT_GT(rejected, static_cast<size_t>(kRounds / 4));
  EXPECT_GE(log_lines, rejected);  // every rejection said why
}

}  // namespace
