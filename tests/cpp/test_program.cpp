// Program::load: header, identifier, flatbuffer and segment checks.
#include "runtime/executor/program.h"

#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <string>

#include "program_builder.h"
#include "runtime/executor/buffer_data_loader.h"
#include "runtime/platform/log.h"
#include "test_support.h"

namespace {

using kiln::BufferDataLoader;
using kiln::Error;
using kiln::Program;
using kiln_test::add_program_spec;
using kiln_test::build_program;

Error load_error(const std::vector<uint8_t>& bytes,
                 Program::Verification v = Program::Verification::Full) {
  BufferDataLoader loader(bytes.data(), bytes.size());
  return Program::load(&loader, v).error();
}

TEST(Program, LoadsAValidProgram) {
  const std::vector<uint8_t> bytes = build_program(add_program_spec());
  BufferDataLoader loader(bytes.data(), bytes.size());
  auto program = Program::load(&loader);
  ASSERT_TRUE(program.ok()) << kiln::error_name(program.error());
  EXPECT_EQ(program->num_methods(), 1u);
  ASSERT_TRUE(program->get_method_name(0).ok());
  EXPECT_STREQ(*program->get_method_name(0), "forward");
  EXPECT_EQ(program->get_method_name(1).error(), Error::InvalidArgument);
  EXPECT_EQ(program->file_size(), bytes.size());
  EXPECT_LT(program->program_data_size(), bytes.size());
  EXPECT_TRUE(program->method_meta("forward").ok());
  EXPECT_EQ(program->method_meta("backward").error(), Error::NotFound);
}

TEST(Program, EveryTruncatedPrefixIsRejected) {
  const std::vector<uint8_t> bytes = build_program(add_program_spec());
  for (size_t length = 0; length < bytes.size(); ++length) {
    const std::vector<uint8_t> prefix(bytes.begin(), bytes.begin() + length);
    EXPECT_EQ(load_error(prefix), Error::ProgramTruncated) << "prefix of " << length << " bytes";
  }
}

TEST(Program, EveryTruncatedPrefixWithoutHeaderIsRejected) {
  kiln_test::ProgramSpec spec = add_program_spec();
  spec.extended_header = false;
  spec.segments.clear();
  spec.has_constant_segment = false;
  spec.constant_buffers = {{}, kiln_test::float_bytes(kiln_test::add_program_constant())};
  const std::vector<uint8_t> bytes = build_program(spec);
  ASSERT_EQ(load_error(bytes), Error::Ok);
  for (size_t length = 0; length < bytes.size(); ++length) {
    const std::vector<uint8_t> prefix(bytes.begin(), bytes.begin() + length);
    const Error error = load_error(prefix);
    EXPECT_TRUE(error == Error::ProgramTruncated || error == Error::InvalidProgram)
        << "prefix of " << length << " bytes: " << kiln::error_name(error);
  }
}

TEST(Program, RejectsAWrongIdentifier) {
  std::vector<uint8_t> bytes = build_program(add_program_spec());
  std::memcpy(bytes.data() + 4, "ET11", 4);
  EXPECT_EQ(load_error(bytes), Error::ProgramBadIdentifier);
}

TEST(Program, RejectsAHeaderShorterThanItsFields) {
  std::vector<uint8_t> bytes = build_program(add_program_spec());
  kiln_test::write_u32(bytes, kiln_test::kHeaderLengthOffset, 16);
  EXPECT_EQ(load_error(bytes), Error::ProgramBadHeader);
}

TEST(Program, RejectsAProgramSizeBeyondTheFile) {
  std::vector<uint8_t> bytes = build_program(add_program_spec());
  kiln_test::write_u64(bytes, kiln_test::kProgramSizeOffset, bytes.size() + 1);
  EXPECT_EQ(load_error(bytes), Error::ProgramTruncated);
  kiln_test::write_u64(bytes, kiln_test::kProgramSizeOffset, std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(load_error(bytes), Error::ProgramTruncated);
}

TEST(Program, RejectsAProgramSizeThatCannotHoldTheHeader) {
  std::vector<uint8_t> bytes = build_program(add_program_spec());
  kiln_test::write_u64(bytes, kiln_test::kProgramSizeOffset, 16);
  EXPECT_EQ(load_error(bytes), Error::ProgramBadHeader);
}

TEST(Program, RejectsSegmentsThatStartInsideTheFlatbuffer) {
  std::vector<uint8_t> bytes = build_program(add_program_spec());
  kiln_test::write_u64(bytes, kiln_test::kSegmentBaseOffset, 64);
  EXPECT_EQ(load_error(bytes), Error::ProgramBadHeader);
}

TEST(Program, RejectsSegmentDataPastTheEnd) {
  std::vector<uint8_t> bytes = build_program(add_program_spec());
  kiln_test::write_u64(bytes, kiln_test::kSegmentDataSizeOffset, std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(load_error(bytes), Error::ProgramTruncated);
}

TEST(Program, RejectsACorruptFlatbuffer) {
  std::vector<uint8_t> bytes = build_program(add_program_spec());
  kiln_test::write_u32(bytes, 0, 0x7ffffff0u);  // root offset far outside the buffer
  EXPECT_EQ(load_error(bytes), Error::InvalidProgram);
}

TEST(Program, RejectsASegmentPastTheEndOfTheFile) {
  kiln_test::ProgramSpec spec = add_program_spec();
  kiln_test::SegmentSpec extra;
  extra.data = {1, 2, 3, 4};
  extra.size_override = 1 << 20;
  spec.segments.push_back(extra);
  const std::vector<uint8_t> bytes = build_program(spec);
  EXPECT_EQ(load_error(bytes), Error::ProgramSegmentOutOfBounds);
  // Minimal verification skips the segment table; the unused segment is never read.
  EXPECT_EQ(load_error(bytes, Program::Verification::Minimal), Error::Ok);
}

TEST(Program, RejectsASegmentWhoseEndOverflows) {
  kiln_test::ProgramSpec spec = add_program_spec();
  spec.segments[0].offset_override = static_cast<int64_t>(std::numeric_limits<int64_t>::max());
  spec.segments[0].size_override = static_cast<int64_t>(std::numeric_limits<int64_t>::max());
  EXPECT_EQ(load_error(build_program(spec)), Error::ProgramSegmentOutOfBounds);
  EXPECT_EQ(load_error(build_program(spec), Program::Verification::Minimal),
            Error::ProgramSegmentOutOfBounds);
}

TEST(Program, RejectsAConstantSegmentIndexOutOfRange) {
  kiln_test::ProgramSpec spec = add_program_spec();
  spec.constant_segment_index = 3;
  EXPECT_EQ(load_error(build_program(spec)), Error::ProgramSegmentOutOfBounds);
}

TEST(Program, RejectsAConstantOffsetPastItsSegment) {
  kiln_test::ProgramSpec spec = add_program_spec();
  spec.constant_offsets = {0, 4096};
  EXPECT_EQ(load_error(build_program(spec)), Error::ProgramSegmentOutOfBounds);
}

TEST(Program, RejectsAMutableDataSegmentIndexOrOffsetOutOfRange) {
  kiln_test::ProgramSpec spec = kiln_test::state_program_spec();
  ASSERT_EQ(load_error(build_program(spec)), Error::Ok);
  spec.mutable_segment_index = 2;
  EXPECT_EQ(load_error(build_program(spec)), Error::ProgramIndexOutOfRange);
  spec = kiln_test::state_program_spec();
  spec.mutable_offsets = {0, 25};  // the segment holds 24 bytes
  EXPECT_EQ(load_error(build_program(spec)), Error::ProgramSegmentOutOfBounds);
  EXPECT_EQ(load_error(build_program(spec), Program::Verification::Minimal), Error::Ok);
}

TEST(Program, NamesItsMethodsWhenOneIsNotFound) {
  kiln_test::ProgramSpec spec = add_program_spec();
  spec.plans.push_back(spec.plans[0]);
  spec.plans[1].name = "reset";
  const std::vector<uint8_t> bytes = build_program(spec);
  BufferDataLoader loader(bytes.data(), bytes.size());
  auto program = Program::load(&loader);
  ASSERT_TRUE(program.ok());
  std::string log;
  kiln::set_log_sink([](kiln::LogLevel, const char* m, size_t n, void* user) {
    static_cast<std::string*>(user)->append(m, n);
  }, &log);
  EXPECT_EQ(program->method_meta("step").error(), Error::NotFound);
  kiln::set_log_sink(nullptr, nullptr);
  EXPECT_NE(log.find("no method named 'step'; its methods: 'forward', 'reset'"), std::string::npos) << log;
}

TEST(Program, RejectsSegmentsWithoutAHeader) {
  kiln_test::ProgramSpec spec = add_program_spec();
  spec.extended_header = false;
  EXPECT_EQ(load_error(build_program(spec)), Error::ProgramBadHeader);
}

TEST(Program, AcceptsAnEmptySegmentWithoutAHeader) {
  // ExecuTorch writes programs without constants this way: one empty segment, no header.
  kiln_test::ProgramSpec spec;
  spec.plans.push_back(kiln_test::add_program_spec().plans[0]);
  spec.segments.push_back(kiln_test::SegmentSpec{});
  spec.extended_header = false;
  EXPECT_EQ(load_error(build_program(spec)), Error::Ok);
}

TEST(Program, RejectsMisalignedDataAndNoLoader) {
  const std::vector<uint8_t> bytes = build_program(add_program_spec());
  std::vector<uint8_t> shifted(bytes.size() + 1);
  std::memcpy(shifted.data() + 1, bytes.data(), bytes.size());
  BufferDataLoader loader(shifted.data() + 1, bytes.size());
  EXPECT_EQ(Program::load(&loader).error(), Error::InvalidArgument);
  EXPECT_EQ(Program::load(nullptr).error(), Error::InvalidArgument);
}

TEST(Program, ChecksConstantTensorBoundsAtMethodLoad) {
  kiln_test::register_test_kernels();
  kiln_test::ProgramSpec spec = add_program_spec();
  spec.constant_offsets = {0, 8};  // 24-byte tensor from byte 8 of a 24-byte segment
  kiln_test::Harness harness(build_program(spec));
  ASSERT_EQ(harness.load_program(), Error::Ok);
  EXPECT_EQ(harness.load_method(), Error::ProgramSegmentOutOfBounds);
}

TEST(Program, ReadsConstantsAtTheirOffsetsAndRejectsMisalignedOnes) {
  kiln_test::register_test_kernels();
  kiln_test::ProgramSpec spec = add_program_spec();
  std::vector<uint8_t> data(8, 0xee);  // 8 bytes of something else first
  const std::vector<uint8_t> constant = kiln_test::float_bytes(kiln_test::add_program_constant());
  data.insert(data.end(), constant.begin(), constant.end());
  spec.segments[0].data = data;
  spec.constant_offsets = {0, 8};
  {
    kiln_test::Harness harness(build_program(spec));
    ASSERT_EQ(harness.load_program(), Error::Ok);
    ASSERT_EQ(harness.load_method(), Error::Ok);
    kiln_test::FloatTensor x({2, 3}, std::vector<float>(6, 0.f));
    ASSERT_EQ(harness.method().set_input(kiln::EValue(&x.tensor), 0), Error::Ok);
    ASSERT_EQ(harness.method().execute(), Error::Ok);
    EXPECT_FLOAT_EQ(harness.method().get_output(0).to_tensor().const_data_ptr<float>()[1],
                    kiln_test::add_program_constant()[1]);
  }
  spec.constant_offsets = {0, 2};  // inside the segment, but floats need 4-byte alignment
  kiln_test::Harness harness(build_program(spec));
  ASSERT_EQ(harness.load_program(), Error::Ok);
  EXPECT_EQ(harness.load_method(), Error::InvalidProgram);
}

TEST(Program, RejectsAConstantIndexOutOfRange) {
  kiln_test::register_test_kernels();
  kiln_test::ProgramSpec spec = add_program_spec();
  spec.plans[0].values[1].tensor.data_buffer_idx = 7;
  kiln_test::Harness harness(build_program(spec));
  ASSERT_EQ(harness.load_program(), Error::Ok);
  EXPECT_EQ(harness.load_method(), Error::ProgramIndexOutOfRange);
}

TEST(Program, RunsLegacyInlineConstants) {
  kiln_test::register_test_kernels();
  kiln_test::ProgramSpec spec = add_program_spec();
  spec.segments.clear();
  spec.has_constant_segment = false;
  spec.constant_buffers = {{}, kiln_test::float_bytes(kiln_test::add_program_constant())};
  spec.extended_header = false;
  kiln_test::Harness harness(build_program(spec));
  ASSERT_EQ(harness.load_program(), Error::Ok);
  ASSERT_EQ(harness.load_method(), Error::Ok);
  kiln_test::FloatTensor x({2, 3}, {1, 2, 3, 4, 5, 6});
  ASSERT_EQ(harness.method().set_input(kiln::EValue(&x.tensor), 0), Error::Ok);
  ASSERT_EQ(harness.method().execute(), Error::Ok);
  const std::vector<float> c = kiln_test::add_program_constant();
  const float* out = harness.method().get_output(0).to_tensor().const_data_ptr<float>();
  for (size_t i = 0; i < c.size(); ++i) EXPECT_FLOAT_EQ(out[i], x.data[i] + c[i]);
}

TEST(Program, RejectsAnInlineConstantTooSmallForItsTensor) {
  kiln_test::register_test_kernels();
  kiln_test::ProgramSpec spec = add_program_spec();
  spec.segments.clear();
  spec.has_constant_segment = false;
  spec.constant_buffers = {{}, {1, 2, 3, 4}};
  spec.extended_header = false;
  kiln_test::Harness harness(build_program(spec));
  ASSERT_EQ(harness.load_program(), Error::Ok);
  EXPECT_EQ(harness.load_method(), Error::ProgramSegmentOutOfBounds);
}

TEST(Program, IsMovable) {
  const std::vector<uint8_t> bytes = build_program(add_program_spec());
  BufferDataLoader loader(bytes.data(), bytes.size());
  auto loaded = Program::load(&loader);
  ASSERT_TRUE(loaded.ok());
  Program moved(std::move(*loaded));
  EXPECT_EQ(moved.num_methods(), 1u);
}

}  // namespace
