// BundledProgram: a bundle of the add program (built with FlatBuffers' generated builder)
// whose test case passes and whose wrong expected output fails, and named errors for
// truncated, foreign, corrupt and misaligned files.
#include "runtime/bundled_program/bundled_program.h"

#include <gtest/gtest.h>

#include <cstring>
#include <optional>
#include <vector>

#include "kiln_schema/bundled_program_generated.h"
#include "program_builder.h"
#include "test_support.h"

namespace {

using kiln::BundledOutputCheck;
using kiln::BundledProgram;
using kiln::Error;

const std::vector<float> kInput = {1.5f, -2.f, 0.f, 7.f, 8.25f, -100.f};

flatbuffers::Offset<kiln_bundled::Value> float_value(flatbuffers::FlatBufferBuilder& builder,
                                                     const std::vector<float>& values) {
  const std::vector<int32_t> sizes = {2, 3};
  const std::vector<uint8_t> dim_order = {0, 1};
  builder.ForceVectorAlignment(values.size() * sizeof(float), 1, 16);
  const auto data = builder.CreateVector(reinterpret_cast<const uint8_t*>(values.data()), values.size() * sizeof(float));
  const auto tensor = kiln_bundled::CreateTensor(builder, kiln_pte::ScalarType::FLOAT, builder.CreateVector(sizes),
                                                 data, builder.CreateVector(dim_order));
  return kiln_bundled::CreateValue(builder, kiln_bundled::ValueUnion::Tensor, tensor.Union());
}

/// The add program bundled with one test case: kInput and `expected`.
std::vector<uint8_t> bundle_add_program(const std::vector<float>& expected) {
  const std::vector<uint8_t> program = kiln_test::build_program(kiln_test::add_program_spec());
  flatbuffers::FlatBufferBuilder builder;
  const auto inputs = builder.CreateVector(std::vector{float_value(builder, kInput)});
  const auto outputs = builder.CreateVector(std::vector{float_value(builder, expected)});
  const auto test_case = kiln_bundled::CreateBundledMethodTestCase(builder, inputs, outputs);
  const auto suite = kiln_bundled::CreateBundledMethodTestSuite(builder, builder.CreateString("forward"),
                                                                builder.CreateVector(std::vector{test_case}));
  builder.ForceVectorAlignment(program.size(), 1, 32);
  const auto program_bytes = builder.CreateVector(program);
  const auto root = kiln_bundled::CreateBundledProgram(builder, 0, builder.CreateVector(std::vector{suite}),
                                                       program_bytes);
  kiln_bundled::FinishBundledProgramBuffer(builder, root);
  return {builder.GetBufferPointer(), builder.GetBufferPointer() + builder.GetSize()};
}

std::vector<float> add_program_output() {
  const std::vector<float> c = kiln_test::add_program_constant();
  std::vector<float> out(kInput.size());
  for (size_t i = 0; i < out.size(); ++i) out[i] = kInput[i] + c[i];
  return out;
}

/// `bytes` copied to 32-byte aligned memory (what load() asks for), plus `shift` bytes.
class AlignedCopy {
 public:
  explicit AlignedCopy(const std::vector<uint8_t>& bytes, size_t shift = 0) : storage_(bytes.size() + 64 + shift) {
    const uintptr_t base = reinterpret_cast<uintptr_t>(storage_.data());
    data_ = storage_.data() + ((32 - base % 32) % 32) + shift;
    std::memcpy(data_, bytes.data(), bytes.size());
    size_ = bytes.size();
  }
  kiln::Span<const uint8_t> span() const { return {data_, size_}; }

 private:
  std::vector<uint8_t> storage_;
  uint8_t* data_;
  size_t size_;
};

class BundledProgramTest : public ::testing::Test {
 protected:
  void SetUp() override { kiln_test::register_test_kernels(); }

  /// Loads the bundle's program, runs test case 0 and verifies it.
  Error run_case(const std::vector<uint8_t>& bytes, BundledOutputCheck* check) {
    const AlignedCopy copy(bytes);
    kiln::Result<BundledProgram> bundle = BundledProgram::load(copy.span());
    if (!bundle.ok()) return bundle.error();
    EXPECT_EQ(bundle->num_test_cases("forward"), 1u);
    const kiln::Span<const uint8_t> program = bundle->program();
    harness_.emplace(std::vector<uint8_t>(program.data(), program.data() + program.size()));
    KILN_TRY(harness_->load_program());
    KILN_TRY(harness_->load_method("forward"));
    KILN_TRY(bundle->set_inputs(harness_->method(), "forward", 0, inputs_));
    KILN_TRY(harness_->method().execute());
    return bundle->verify_outputs(harness_->method(), "forward", 0, 1e-5, 1e-8, {check, 1});
  }

  std::optional<kiln_test::Harness> harness_;
  kiln::BundledInputs inputs_;
};

TEST_F(BundledProgramTest, TheRightExpectedOutputPasses) {
  BundledOutputCheck check;
  EXPECT_EQ(run_case(bundle_add_program(add_program_output()), &check), Error::Ok);
  EXPECT_TRUE(check.passed);
  EXPECT_EQ(check.numel, 6u);
  EXPECT_EQ(check.mismatches, 0u);
}

TEST_F(BundledProgramTest, AWrongExpectedOutputFails) {
  std::vector<float> expected = add_program_output();
  expected[4] += 0.5f;
  BundledOutputCheck check;
  EXPECT_EQ(run_case(bundle_add_program(expected), &check), Error::BundledProgramOutputMismatch);
  EXPECT_FALSE(check.passed);
  EXPECT_EQ(check.mismatches, 1u);
  EXPECT_NEAR(check.max_abs_error, 0.5, 1e-6);
}

TEST_F(BundledProgramTest, BadFilesGetNamedErrors) {
  const std::vector<uint8_t> good = bundle_add_program(add_program_output());
  const std::vector<uint8_t> cut(good.begin(), good.begin() + 6);
  EXPECT_EQ(BundledProgram::load(AlignedCopy(cut).span()).error(), Error::BundledProgramTruncated);
  const std::vector<uint8_t> pte = kiln_test::build_program(kiln_test::add_program_spec());
  EXPECT_EQ(BundledProgram::load(AlignedCopy(pte).span()).error(), Error::BundledProgramBadIdentifier);
  const std::vector<uint8_t> half(good.begin(), good.begin() + good.size() / 2);
  EXPECT_EQ(BundledProgram::load(AlignedCopy(half).span()).error(), Error::BundledProgramInvalid);
  std::vector<uint8_t> corrupt = good;
  corrupt[0] = 0xff;  // the root offset points past the end
  corrupt[1] = 0xff;
  EXPECT_EQ(BundledProgram::load(AlignedCopy(corrupt).span()).error(), Error::BundledProgramTruncated);
  EXPECT_EQ(BundledProgram::load(AlignedCopy(good, 4).span()).error(), Error::InvalidArgument);
}

}  // namespace
