#include "runtime/executor/method_meta.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "program_builder.h"
#include "test_support.h"

namespace {

using kiln::Error;
using kiln::Tag;

class MethodMetaTest : public ::testing::Test {
 protected:
  void load(const kiln_test::ProgramSpec& spec) {
    harness_.emplace(kiln_test::build_program(spec));
    ASSERT_EQ(harness_->load_program(), Error::Ok);
  }
  kiln::MethodMeta meta() { return *harness_->program().method_meta("forward"); }
  std::optional<kiln_test::Harness> harness_;
};

TEST_F(MethodMetaTest, DescribesInputsOutputsAndMemory) {
  load(kiln_test::add_program_spec());
  const kiln::MethodMeta m = meta();
  EXPECT_STREQ(m.name(), "forward");
  ASSERT_EQ(m.num_inputs(), 1u);
  EXPECT_EQ(*m.input_tag(0), Tag::Tensor);
  auto input = m.input_tensor_meta(0);
  ASSERT_TRUE(input.ok());
  EXPECT_EQ(input->scalar_type, kiln::ScalarType::Float);
  ASSERT_EQ(input->sizes.size(), 2u);
  EXPECT_EQ(input->sizes[0], 2);
  EXPECT_EQ(input->sizes[1], 3);
  EXPECT_EQ(input->dim_order[1], 1);
  EXPECT_EQ(input->nbytes, 24u);
  EXPECT_TRUE(input->is_memory_planned);
  ASSERT_EQ(m.num_outputs(), 1u);
  EXPECT_EQ(*m.output_tag(0), Tag::Tensor);
  EXPECT_EQ(m.output_tensor_meta(0)->nbytes, 24u);
  EXPECT_EQ(m.input_tag(1).error(), Error::InvalidArgument);
  EXPECT_EQ(m.output_tensor_meta(1).error(), Error::InvalidArgument);
  ASSERT_EQ(m.num_memory_planned_buffers(), 1u);
  EXPECT_EQ(*m.memory_planned_buffer_size(0), 64);
  EXPECT_EQ(m.memory_planned_buffer_size(1).error(), Error::InvalidArgument);
  EXPECT_EQ(m.num_instructions(), 1u);
  EXPECT_EQ(m.num_backends(), 0u);
  ASSERT_TRUE(m.method_allocator_size().ok());
  EXPECT_GT(*m.method_allocator_size(), 0u);
}

TEST_F(MethodMetaTest, NamesOperators) {
  kiln_test::ProgramSpec spec = kiln_test::add_program_spec();
  spec.plans[0].operators.push_back({"kiln::plain", ""});
  load(spec);
  const kiln::MethodMeta m = meta();
  ASSERT_EQ(m.num_operators(), 2u);
  char buf[32];
  EXPECT_STREQ(*m.operator_name(0, buf, sizeof(buf)), "test::add.out");
  EXPECT_STREQ(*m.operator_name(1, buf, sizeof(buf)), "kiln::plain");
  char small[13];  // "test::add.out" needs 14 with its NUL
  EXPECT_EQ(m.operator_name(0, small, sizeof(small)).error(), Error::InvalidArgument);
  EXPECT_EQ(m.operator_name(2, buf, sizeof(buf)).error(), Error::InvalidArgument);
}

TEST_F(MethodMetaTest, ReportsNonTensorInputsAndBadDescriptions) {
  kiln_test::ProgramSpec spec = kiln_test::add_program_spec();
  spec.plans[0].inputs = {0, 2, 9};
  spec.plans[0].outputs = {3};
  spec.plans[0].values[3].tensor.sizes = {2, -1};
  load(spec);
  const kiln::MethodMeta m = meta();
  EXPECT_EQ(*m.input_tag(1), Tag::Int);
  EXPECT_EQ(m.input_tensor_meta(1).error(), Error::InvalidType);
  EXPECT_EQ(m.input_tag(2).error(), Error::ProgramIndexOutOfRange);
  EXPECT_EQ(m.output_tensor_meta(0).error(), Error::InvalidProgram);
}

TEST_F(MethodMetaTest, ListsStateWithAndWithoutAnInitialValue) {
  load(kiln_test::add_program_spec());
  EXPECT_EQ(meta().num_states(), 0u);
  EXPECT_EQ(meta().state_meta(0).error(), Error::InvalidArgument);

  load(kiln_test::state_program_spec());  // initial value in the mutable data segment
  ASSERT_EQ(meta().num_states(), 1u);
  EXPECT_EQ(meta().state_meta(0)->value_index, 1u);
  EXPECT_TRUE(meta().state_meta(0)->has_initial_value);

  load(kiln_test::state_without_initial_value_spec());
  ASSERT_EQ(meta().num_states(), 1u);
  const kiln::StateInfo state = *meta().state_meta(0);
  EXPECT_EQ(state.value_index, 0u);
  EXPECT_FALSE(state.has_initial_value);
  EXPECT_EQ(state.tensor.nbytes, 24u);
  EXPECT_TRUE(state.tensor.is_memory_planned);
  EXPECT_EQ(meta().state_meta(1).error(), Error::InvalidArgument);
}

TEST_F(MethodMetaTest, CountsAStateWrittenBackTwiceOnce) {
  kiln_test::ProgramSpec spec = kiln_test::state_without_initial_value_spec();
  spec.plans[0].instructions.push_back(kiln_test::kernel_call(1, {0, 3, 4, 0}));
  load(spec);
  EXPECT_EQ(meta().num_states(), 1u);
}

TEST_F(MethodMetaTest, ACopyThatIsNoWriteBackIsNoState) {
  auto states_with_copy = [&](std::vector<int32_t> args, std::vector<int32_t> inputs = {1},
                              std::string overload = "") {
    kiln_test::ProgramSpec spec = kiln_test::state_without_initial_value_spec();
    spec.plans[0].instructions[1].args = std::move(args);
    spec.plans[0].inputs = std::move(inputs);
    spec.plans[0].operators[1].second = std::move(overload);
    load(spec);
    return meta().num_states();
  };
  EXPECT_EQ(states_with_copy({0, 3, 4, 0}, {1}, "default"), 1u);
  EXPECT_EQ(states_with_copy({0, 3, 4, 3}), 0u);       // out is not self: not in place
  EXPECT_EQ(states_with_copy({0, 3, 4, 0}, {1, 0}), 0u);  // a method input belongs to the caller
  EXPECT_EQ(states_with_copy({2, 3, 4, 2}), 0u);       // an Int, not a tensor
  EXPECT_EQ(states_with_copy({99, 3, 4, 99}), 0u);     // out of range: no state, no crash
  EXPECT_EQ(states_with_copy({0}), 0u);
  EXPECT_EQ(states_with_copy({0, 3, 4, 0}, {1}, "out"), 0u);  // another kernel
}

TEST_F(MethodMetaTest, ReportsNegativeBufferSizes) {
  kiln_test::ProgramSpec spec = kiln_test::add_program_spec();
  spec.plans[0].buffer_sizes = {0, -5};
  load(spec);
  EXPECT_EQ(meta().memory_planned_buffer_size(0).error(), Error::InvalidProgram);
}

}  // namespace
