// Method init (every index checked, operators and backends resolved) and execute.
#include "runtime/executor/method.h"

#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "program_builder.h"
#include "runtime/backend/backend_interface.h"
#include "runtime/platform/log.h"
#include "test_support.h"

namespace {

using kiln::EValue;
using kiln::Error;
using kiln_test::add_program_spec;
using kiln_test::build_program;
using kiln_test::FloatTensor;
using kiln_test::Harness;
using kiln_test::InstructionSpec;
using kiln_test::ProgramSpec;
using kiln_test::TensorSpec;

/// Collects log lines while alive.
class LogCapture {
 public:
  LogCapture() { kiln::set_log_sink(&LogCapture::sink, this); }
  ~LogCapture() { kiln::set_log_sink(nullptr, nullptr); }
  bool contains(const std::string& text) const { return all_.find(text) != std::string::npos; }
  const std::string& text() const { return all_; }

 private:
  static void sink(kiln::LogLevel, const char* message, size_t length, void* user) {
    static_cast<LogCapture*>(user)->all_.append(message, length).append("\n");
  }
  std::string all_;
};

class MethodTest : public ::testing::Test {
 protected:
  void SetUp() override { kiln_test::register_test_kernels(); }

  /// Loads `spec` and inits "forward"; returns the init error.
  Error init(const ProgramSpec& spec, size_t planned_shrink = 0, size_t extra_method_bytes = 0) {
    harness_.emplace(build_program(spec));
    harness_->extra_method_bytes = extra_method_bytes;
    const Error error = harness_->load_program();
    if (error != Error::Ok) return error;
    return harness_->load_method("forward", SIZE_MAX, planned_shrink);
  }
  kiln::Method& method() { return harness_->method(); }

  std::optional<Harness> harness_;
};

TEST_F(MethodTest, ExecutesTheAddProgram) {
  ASSERT_EQ(init(add_program_spec()), Error::Ok);
  EXPECT_EQ(method().inputs_size(), 1u);
  EXPECT_EQ(method().outputs_size(), 1u);
  EXPECT_EQ(method().values_size(), 4u);
  FloatTensor x({2, 3}, {1.5f, -2.f, 0.f, 7.f, 8.25f, -100.f});
  ASSERT_EQ(method().set_input(EValue(&x.tensor), 0), Error::Ok);
  ASSERT_EQ(method().execute(), Error::Ok);
  const std::vector<float> c = kiln_test::add_program_constant();
  const kiln::Tensor& out = method().get_output(0).to_tensor();
  ASSERT_EQ(out.numel(), 6u);
  for (size_t i = 0; i < c.size(); ++i) EXPECT_FLOAT_EQ(out.const_data_ptr<float>()[i], x.data[i] + c[i]);
  // A second run with new data gives new results (inputs are copied, not aliased).
  x.data = {0, 0, 0, 0, 0, 1};
  ASSERT_EQ(method().set_input(EValue(&x.tensor), 0), Error::Ok);
  ASSERT_EQ(method().execute(), Error::Ok);
  EXPECT_FLOAT_EQ(out.const_data_ptr<float>()[5], 1.f + c[5]);
}

TEST_F(MethodTest, MethodAllocatorSizeIsExactAndSufficient) {
  const std::vector<uint8_t> bytes = build_program(add_program_spec());
  Harness harness(bytes);
  ASSERT_EQ(harness.load_program(), Error::Ok);
  auto meta = harness.program().method_meta("forward");
  ASSERT_TRUE(meta.ok());
  auto size = meta->method_allocator_size();
  ASSERT_TRUE(size.ok());
  ASSERT_EQ(harness.load_method("forward", *size), Error::Ok);
  const size_t used = harness.method_allocator().used();
  EXPECT_LE(used, *size);
  // The bound only adds alignment slack for other base addresses.
  EXPECT_LT(*size - used, 64u);
  EXPECT_EQ(harness.load_method("forward", used - 1), Error::MemoryAllocationFailed);
  EXPECT_EQ(harness.load_method("forward", *size / 2), Error::MemoryAllocationFailed);
  for (size_t pool = 0; pool < used; ++pool) {
    EXPECT_EQ(harness.load_method("forward", pool), Error::MemoryAllocationFailed) << pool;
  }
}

TEST_F(MethodTest, RejectsAPlannedBufferSmallerThanNeeded) {
  LogCapture log;
  EXPECT_EQ(init(add_program_spec(), 1), Error::MemoryAllocationFailed);
  EXPECT_TRUE(log.contains("planned buffer 0: program needs 64 bytes, 63 provided")) << log.text();
}

TEST_F(MethodTest, RejectsMissingPlannedBuffers) {
  const std::vector<uint8_t> bytes = build_program(add_program_spec());
  Harness harness(bytes);
  ASSERT_EQ(harness.load_program(), Error::Ok);
  std::vector<uint8_t> pool(4096);
  kiln::MemoryAllocator allocator(pool.data(), pool.size());
  kiln::HierarchicalAllocator no_buffers({});
  kiln::MemoryManager memory{&allocator, &no_buffers, nullptr};
  EXPECT_EQ(harness.program().load_method("forward", &memory).error(), Error::MemoryAllocationFailed);
  kiln::MemoryManager no_planned{&allocator, nullptr, nullptr};
  EXPECT_EQ(harness.program().load_method("forward", &no_planned).error(),
            Error::MemoryAllocationFailed);
  EXPECT_EQ(harness.program().load_method("forward", nullptr).error(), Error::InvalidArgument);
  EXPECT_EQ(harness.program().load_method("nope", &memory).error(), Error::NotFound);
}

TEST_F(MethodTest, ListsEveryMissingOperator) {
  ProgramSpec spec = add_program_spec();
  auto& plan = spec.plans[0];
  plan.operators = {{"aten::nope", "out"}, {"test::add", "out"}, {"aten::nada", "Tensor_out"}};
  plan.instructions = {kiln_test::kernel_call(0, {0, 1, 2, 3, 3}),
                       kiln_test::kernel_call(1, {0, 1, 2, 3, 3}),
                       kiln_test::kernel_call(2, {0, 1, 2, 3, 3}),
                       kiln_test::kernel_call(0, {0, 1, 2, 3, 3})};
  LogCapture log;
  EXPECT_EQ(init(spec), Error::OperatorMissing);
  EXPECT_TRUE(log.contains("operator aten::nope.out is not registered (program needs it for instruction 0)"))
      << log.text();
  EXPECT_TRUE(log.contains("operator aten::nada.Tensor_out is not registered (program needs it for instruction 2)"))
      << log.text();
  EXPECT_TRUE(log.contains("2 operators are not registered")) << log.text();
}

TEST_F(MethodTest, RejectsOutOfRangeIndices) {
  {
    ProgramSpec spec = add_program_spec();
    spec.plans[0].instructions[0].a = 1;  // operator 1 of 1
    EXPECT_EQ(init(spec), Error::ProgramIndexOutOfRange);
  }
  {
    ProgramSpec spec = add_program_spec();
    spec.plans[0].instructions[0].args[4] = 4;  // value 4 of 4
    EXPECT_EQ(init(spec), Error::ProgramIndexOutOfRange);
  }
  {
    ProgramSpec spec = add_program_spec();
    spec.plans[0].instructions[0].args[0] = -1;
    EXPECT_EQ(init(spec), Error::ProgramIndexOutOfRange);
  }
  {
    ProgramSpec spec = add_program_spec();
    spec.plans[0].inputs = {42};
    EXPECT_EQ(init(spec), Error::ProgramIndexOutOfRange);
  }
  {
    ProgramSpec spec = add_program_spec();
    spec.plans[0].outputs = {-3};
    EXPECT_EQ(init(spec), Error::ProgramIndexOutOfRange);
  }
  {
    ProgramSpec spec = add_program_spec();
    spec.plans[0].values[0].tensor.memory_id = 2;  // only buffer id 1 exists
    EXPECT_EQ(init(spec), Error::ProgramIndexOutOfRange);
  }
  {
    ProgramSpec spec = add_program_spec();
    spec.plans[0].values[0].tensor.memory_id = 0;
    EXPECT_EQ(init(spec), Error::ProgramIndexOutOfRange);
  }
  {
    ProgramSpec spec = add_program_spec();
    spec.plans[0].values.push_back(kiln_test::int_list_value({2, 9}));
    EXPECT_EQ(init(spec), Error::ProgramIndexOutOfRange);
  }
  {
    ProgramSpec spec = add_program_spec();
    spec.plans[0].values.push_back(kiln_test::tensor_list_value({0, 17}));
    EXPECT_EQ(init(spec), Error::ProgramIndexOutOfRange);
  }
  {
    ProgramSpec spec = add_program_spec();
    InstructionSpec move;
    move.kind = InstructionSpec::Kind::Move;
    move.a = 0;
    move.b = 99;
    spec.plans[0].instructions.push_back(move);
    EXPECT_EQ(init(spec), Error::ProgramIndexOutOfRange);
  }
}

TEST_F(MethodTest, RejectsListsOfTheWrongKind) {
  {
    ProgramSpec spec = add_program_spec();
    spec.plans[0].values.push_back(kiln_test::int_list_value({2, 0}));  // value 0 is a tensor
    EXPECT_EQ(init(spec), Error::InvalidProgram);
  }
  {
    ProgramSpec spec = add_program_spec();
    spec.plans[0].values.push_back(kiln_test::tensor_list_value({0, 2}));  // value 2 is an Int
    EXPECT_EQ(init(spec), Error::InvalidProgram);
  }
  {
    ProgramSpec spec = add_program_spec();
    kiln_test::ValueSpec bools;
    bools.kind = kiln_test::ValueSpec::Kind::BoolList;
    bools.bool_items = {0, 1, 2};
    spec.plans[0].values.push_back(bools);
    EXPECT_EQ(init(spec), Error::InvalidProgram);
  }
}

TEST_F(MethodTest, RejectsMalformedTensors) {
  auto with_tensor = [](const std::function<void(TensorSpec&)>& edit) {
    ProgramSpec spec = add_program_spec();
    edit(spec.plans[0].values[3].tensor);
    return spec;
  };
  EXPECT_EQ(init(with_tensor([](TensorSpec& t) { t.scalar_type = 99; })), Error::InvalidProgram);
  EXPECT_EQ(init(with_tensor([](TensorSpec& t) { t.sizes = std::vector<int32_t>(17, 1); })),
            Error::InvalidProgram);
  EXPECT_EQ(init(with_tensor([](TensorSpec& t) { t.dim_order = {0, 0}; })), Error::InvalidProgram);
  EXPECT_EQ(init(with_tensor([](TensorSpec& t) { t.dim_order = {0, 2}; })), Error::InvalidProgram);
  EXPECT_EQ(init(with_tensor([](TensorSpec& t) { t.dim_order = {0}; })), Error::InvalidProgram);
  EXPECT_EQ(init(with_tensor([](TensorSpec& t) { t.sizes = {2, -3}; })), Error::InvalidProgram);
  EXPECT_EQ(init(with_tensor([](TensorSpec& t) { t.sizes = {65536, 65536}; })), Error::InvalidProgram);
  // No elements, but the other dimensions' strides overflow int32 (a fuzzing finding:
  // signed overflow in the stride computation). Refused at load, like the case above.
  EXPECT_EQ(init(with_tensor([](TensorSpec& t) { t.sizes = {0, 65536, 65536}; })),
            Error::InvalidProgram);
  EXPECT_EQ(init(with_tensor([](TensorSpec& t) { t.sizes = {65536, 0, 65536}; })),
            Error::InvalidProgram);
  EXPECT_EQ(init(with_tensor([](TensorSpec& t) { t.sizes = {2147483647, 0}; })), Error::Ok);
  EXPECT_EQ(init(with_tensor([](TensorSpec& t) { t.storage_offset = 4; })), Error::InvalidProgram);
  EXPECT_EQ(init(with_tensor([](TensorSpec& t) { t.shape_dynamism = 2; })), Error::NotSupported);
  // Past the end of its 64-byte planned buffer.
  EXPECT_EQ(init(with_tensor([](TensorSpec& t) { t.memory_offset = 48; })), Error::InvalidProgram);
  EXPECT_EQ(init(with_tensor([](TensorSpec& t) { t.memory_offset = 1ull << 40; })),
            Error::InvalidProgram);
}

TEST_F(MethodTest, RejectsUnionsWithoutTables) {
  {
    ProgramSpec spec = add_program_spec();
    kiln_test::ValueSpec broken;
    broken.kind = kiln_test::ValueSpec::Kind::TypeWithoutTable;
    spec.plans[0].values.push_back(broken);
    EXPECT_EQ(init(spec), Error::InvalidProgram);
  }
  {
    ProgramSpec spec = add_program_spec();
    InstructionSpec broken;
    broken.kind = InstructionSpec::Kind::KindWithoutTable;
    spec.plans[0].instructions.push_back(broken);
    EXPECT_EQ(init(spec), Error::InvalidProgram);
  }
}

TEST_F(MethodTest, RejectsAnIntermediateTensorWithoutMemory) {
  ProgramSpec spec = add_program_spec();
  spec.plans[0].values[3].tensor.planned = false;
  spec.plans[0].outputs = {0};
  EXPECT_EQ(init(spec), Error::InvalidProgram);
}

TEST_F(MethodTest, ChecksInputDtypeAndShape) {
  ASSERT_EQ(init(add_program_spec()), Error::Ok);
  LogCapture log;
  FloatTensor wrong_shape({3, 2}, std::vector<float>(6, 1.f));
  EXPECT_EQ(method().set_input(EValue(&wrong_shape.tensor), 0), Error::InputShapeMismatch);
  EXPECT_TRUE(log.contains("[3, 2]") && log.contains("[2, 3]")) << log.text();
  FloatTensor wrong_rank({6}, std::vector<float>(6, 1.f));
  EXPECT_EQ(method().set_input(EValue(&wrong_rank.tensor), 0), Error::InputShapeMismatch);

  std::vector<int32_t> sizes = {2, 3};
  std::vector<uint8_t> order = {0, 1};
  std::vector<int32_t> strides(2);
  std::vector<int32_t> data(6, 1);
  kiln::Tensor ints(kiln::ScalarType::Int, 2, sizes.data(), order.data(), strides.data(), data.data());
  EXPECT_EQ(method().set_input(EValue(&ints), 0), Error::InputDtypeMismatch);
  EXPECT_EQ(method().set_input(EValue(int64_t{3}), 0), Error::InvalidType);
  FloatTensor x({2, 3}, std::vector<float>(6, 1.f));
  EXPECT_EQ(method().set_input(EValue(&x.tensor), 1), Error::InvalidArgument);
}

TEST_F(MethodTest, RefusesToExecuteBeforeInputsAreSet) {
  ASSERT_EQ(init(add_program_spec()), Error::Ok);
  EXPECT_EQ(method().execute(), Error::InvalidState);
}

TEST_F(MethodTest, StopsAtAFailingKernel) {
  ProgramSpec spec = add_program_spec();
  spec.plans[0].operators.push_back({"test::fail", "out"});
  spec.plans[0].instructions.push_back(kiln_test::kernel_call(1, {3}));
  spec.plans[0].instructions.push_back(kiln_test::kernel_call(0, {0, 1, 2, 3, 3}));
  ASSERT_EQ(init(spec), Error::Ok);
  FloatTensor x({2, 3}, std::vector<float>(6, 1.f));
  ASSERT_EQ(method().set_input(EValue(&x.tensor), 0), Error::Ok);
  LogCapture log;
  EXPECT_EQ(method().execute(), Error::NotSupported);
  EXPECT_TRUE(log.contains("instruction 1 (test::fail.out) failed: NotSupported")) << log.text();
}

TEST_F(MethodTest, StopsAnEndlessJumpLoop) {
  ProgramSpec spec = add_program_spec();
  spec.plans[0].values.push_back(kiln_test::bool_value(false));  // value 4
  InstructionSpec jump;
  jump.kind = InstructionSpec::Kind::JumpFalse;
  jump.a = 4;
  jump.b = 0;  // back to the add: forever
  spec.plans[0].instructions.push_back(jump);
  ASSERT_EQ(init(spec), Error::Ok);
  FloatTensor x({2, 3}, std::vector<float>(6, 1.f));
  ASSERT_EQ(method().set_input(EValue(&x.tensor), 0), Error::Ok);
  EXPECT_EQ(method().execute(), Error::InvalidProgram);
}

TEST_F(MethodTest, JumpsOverInstructionsWhenTheConditionIsFalse) {
  ProgramSpec spec = add_program_spec();
  auto& plan = spec.plans[0];
  plan.values.push_back(kiln_test::bool_value(false));  // value 4
  plan.values.push_back(kiln_test::bool_value(true));   // value 5
  plan.operators.push_back({"test::fail", "out"});
  InstructionSpec skip;
  skip.kind = InstructionSpec::Kind::JumpFalse;
  skip.a = 4;
  skip.b = 2;
  InstructionSpec no_skip = skip;
  no_skip.a = 5;
  no_skip.b = 4;
  InstructionSpec free_call;
  free_call.kind = InstructionSpec::Kind::Free;
  free_call.a = 3;
  // 0: jump to 2 (false) | 1: fail | 2: no jump (true) | 3: add | 4: free
  plan.instructions = {skip, kiln_test::kernel_call(1, {}), no_skip,
                       kiln_test::kernel_call(0, {0, 1, 2, 3, 3}), free_call};
  ASSERT_EQ(init(spec), Error::Ok);
  FloatTensor x({2, 3}, std::vector<float>(6, 2.f));
  ASSERT_EQ(method().set_input(EValue(&x.tensor), 0), Error::Ok);
  ASSERT_EQ(method().execute(), Error::Ok);
  EXPECT_FLOAT_EQ(method().get_output(0).to_tensor().const_data_ptr<float>()[0],
                  2.f + kiln_test::add_program_constant()[0]);
}

TEST_F(MethodTest, RejectsAJumpOutsideTheMethod) {
  ProgramSpec spec = add_program_spec();
  spec.plans[0].values.push_back(kiln_test::bool_value(false));
  InstructionSpec jump;
  jump.kind = InstructionSpec::Kind::JumpFalse;
  jump.a = 4;
  jump.b = 3;  // 2 instructions: 0..2 are valid destinations
  spec.plans[0].instructions.push_back(jump);
  EXPECT_EQ(init(spec), Error::ProgramIndexOutOfRange);
}

TEST_F(MethodTest, RejectsAJumpOnANonBool) {
  ProgramSpec spec = add_program_spec();
  InstructionSpec jump;
  jump.kind = InstructionSpec::Kind::JumpFalse;
  jump.a = 2;  // the Int alpha
  jump.b = 0;
  spec.plans[0].instructions.push_back(jump);
  ASSERT_EQ(init(spec), Error::Ok);
  FloatTensor x({2, 3}, std::vector<float>(6, 1.f));
  ASSERT_EQ(method().set_input(EValue(&x.tensor), 0), Error::Ok);
  EXPECT_EQ(method().execute(), Error::InvalidProgram);
}

TEST_F(MethodTest, UnboxesIntListsAndMovesValues) {
  TensorSpec out;
  out.scalar_type = 4;  // Long
  out.sizes = {1};
  out.planned = true;
  kiln_test::PlanSpec plan;
  plan.values = {kiln_test::int_value(5), kiln_test::int_value(-2), kiln_test::int_value(40),
                 kiln_test::int_list_value({0, 1, 2}), kiln_test::tensor_value(out)};
  plan.outputs = {4};
  plan.operators = {{"test::sum_ints", "out"}};
  InstructionSpec move;
  move.kind = InstructionSpec::Kind::Move;
  move.a = 2;
  move.b = 1;  // value 1 becomes 40 before the sum
  plan.instructions = {move, kiln_test::kernel_call(0, {3, 4, 4})};
  plan.buffer_sizes = {0, 8};
  ProgramSpec spec;
  spec.plans = {plan};
  ASSERT_EQ(init(spec), Error::Ok);
  ASSERT_EQ(method().execute(), Error::Ok);
  EXPECT_EQ(method().get_output(0).to_tensor().const_data_ptr<int64_t>()[0], 5 + 40 + 40);
}

TEST_F(MethodTest, ResetsTheTempAllocatorAfterEveryKernel) {
  kiln_test::PlanSpec plan;
  plan.operators = {{"test::scratch", "out"}};
  plan.instructions = {kiln_test::kernel_call(0, {}), kiln_test::kernel_call(0, {}),
                       kiln_test::kernel_call(0, {})};
  ProgramSpec spec;
  spec.plans = {plan};
  harness_.emplace(build_program(spec));
  ASSERT_EQ(harness_->load_program(), Error::Ok);
  ASSERT_EQ(harness_->load_method("forward", SIZE_MAX, 0, 100), Error::Ok);
  EXPECT_EQ(method().execute(), Error::Ok);
  ASSERT_EQ(harness_->load_method("forward", SIZE_MAX, 0, 32), Error::Ok);
  EXPECT_EQ(method().execute(), Error::MemoryAllocationFailed);
}

TEST_F(MethodTest, UsesCallerMemoryForUnplannedInputsAndOutputs) {
  ProgramSpec spec = add_program_spec();
  spec.plans[0].values[0].tensor.planned = false;
  spec.plans[0].values[3].tensor.planned = false;
  ASSERT_EQ(init(spec), Error::Ok);
  auto meta = method().method_meta();
  ASSERT_TRUE(meta.input_tensor_meta(0).ok());
  EXPECT_FALSE(meta.input_tensor_meta(0)->is_memory_planned);
  FloatTensor x({2, 3}, {1, 2, 3, 4, 5, 6});
  ASSERT_EQ(method().set_input(EValue(&x.tensor), 0), Error::Ok);
  EXPECT_EQ(method().execute(), Error::InvalidState);  // output has no memory yet
  std::vector<float> out(6, -1.f);
  EXPECT_EQ(method().set_output_data_ptr(out.data(), 4, 0), Error::InvalidArgument);
  EXPECT_EQ(method().set_output_data_ptr(out.data(), out.size() * sizeof(float), 1),
            Error::InvalidArgument);
  ASSERT_EQ(method().set_output_data_ptr(out.data(), out.size() * sizeof(float), 0), Error::Ok);
  ASSERT_EQ(method().execute(), Error::Ok);
  const std::vector<float> c = kiln_test::add_program_constant();
  for (size_t i = 0; i < 6; ++i) EXPECT_FLOAT_EQ(out[i], x.data[i] + c[i]);
  // The input is read in place: changing the caller's data changes the next result.
  x.data[0] = 100.f;
  ASSERT_EQ(method().execute(), Error::Ok);
  EXPECT_FLOAT_EQ(out[0], 100.f + c[0]);
}

TEST_F(MethodTest, RefusesAnOutputPointerForAPlannedOutput) {
  ASSERT_EQ(init(add_program_spec()), Error::Ok);
  std::vector<float> out(6);
  EXPECT_EQ(method().set_output_data_ptr(out.data(), 24, 0), Error::InvalidState);
}

TEST_F(MethodTest, AcceptsSmallerInputsForDynamicBoundTensors) {
  ProgramSpec spec = add_program_spec();
  spec.plans[0].values[0].tensor.shape_dynamism = 1;
  ASSERT_EQ(init(spec), Error::Ok);
  FloatTensor smaller({1, 3}, {1, 2, 3});
  ASSERT_EQ(method().set_input(EValue(&smaller.tensor), 0), Error::Ok);
  EXPECT_EQ(method().get_input(0).to_tensor().numel(), 3u);
  FloatTensor larger({3, 3}, std::vector<float>(9, 0.f));
  EXPECT_EQ(method().set_input(EValue(&larger.tensor), 0), Error::InputShapeMismatch);
}

TEST_F(MethodTest, RefusesADynamicInputBeyondItsBoundInAnyDimension) {
  ProgramSpec spec = add_program_spec();  // x: [2, 3] upper bound
  spec.plans[0].values[0].tensor.shape_dynamism = 1;
  ASSERT_EQ(init(spec), Error::Ok);
  LogCapture log;
  // Six elements fit the planned bytes, but dimension 1 exceeds its bound.
  FloatTensor wider({1, 6}, std::vector<float>(6, 0.f));
  EXPECT_EQ(method().set_input(EValue(&wider.tensor), 0), Error::InputShapeMismatch);
  EXPECT_TRUE(log.contains("input 0: dimension 1 is 6, above its upper bound 3")) << log.text();
  EXPECT_TRUE(log.contains("[1, 6] given, [2, 3] expected (upper bound)")) << log.text();
  FloatTensor other_rank({6}, std::vector<float>(6, 0.f));
  EXPECT_EQ(method().set_input(EValue(&other_rank.tensor), 0), Error::InputShapeMismatch);
  // Back up to the bound after a smaller input: the tensor's capacity is the bound's.
  FloatTensor smaller({1, 2}, {1, 2});
  ASSERT_EQ(method().set_input(EValue(&smaller.tensor), 0), Error::Ok);
  FloatTensor full({2, 3}, std::vector<float>(6, 1.f));
  ASSERT_EQ(method().set_input(EValue(&full.tensor), 0), Error::Ok);
  EXPECT_EQ(method().get_input(0).to_tensor().numel(), 6u);
}

TEST_F(MethodTest, AsksForOutputMemoryForTheWholeBoundOfADynamicOutput) {
  ProgramSpec spec = add_program_spec();
  TensorSpec& x = spec.plans[0].values[0].tensor;  // [2, 3], also returned as output 1
  x.planned = false;
  x.shape_dynamism = 1;
  spec.plans[0].outputs.push_back(0);
  ASSERT_EQ(init(spec), Error::Ok);
  FloatTensor smaller({1, 3}, {1, 2, 3});
  ASSERT_EQ(method().set_input(EValue(&smaller.tensor), 0), Error::Ok);
  std::vector<float> memory(6);
  // 12 bytes hold the current [1, 3], not the [2, 3] a later input may bring.
  EXPECT_EQ(method().set_output_data_ptr(memory.data(), 12, 1), Error::InvalidArgument);
  EXPECT_EQ(method().set_output_data_ptr(memory.data(), 24, 1), Error::Ok);
}

/// "forward"(n, fixed) -> [n + 10] (Long): input 0 is an Int the program reads (through
/// an int list), input 1 an Int no instruction reads (fixed at export to 7).
ProgramSpec scalar_input_spec() {
  TensorSpec out;
  out.scalar_type = 4;  // Long
  out.sizes = {1};
  out.planned = true;
  kiln_test::PlanSpec plan;
  plan.values = {kiln_test::int_value(3), kiln_test::int_value(7), kiln_test::int_value(10),
                 kiln_test::int_list_value({0, 2}), kiln_test::tensor_value(out)};
  plan.inputs = {0, 1};
  plan.outputs = {4};
  plan.operators = {{"test::sum_ints", "out"}};
  plan.instructions = {kiln_test::kernel_call(0, {3, 4, 4})};
  plan.buffer_sizes = {0, 8};
  ProgramSpec spec;
  spec.plans = {plan};
  return spec;
}

TEST_F(MethodTest, TakesAnyValueForAScalarInputTheProgramReads) {
  ASSERT_EQ(init(scalar_input_spec()), Error::Ok);
  ASSERT_EQ(method().execute(), Error::Ok);  // numbers have their exported values
  EXPECT_EQ(method().get_output(0).to_tensor().const_data_ptr<int64_t>()[0], 13);
  ASSERT_EQ(method().set_input(EValue(int64_t{-40}), 0), Error::Ok);
  ASSERT_EQ(method().execute(), Error::Ok);
  EXPECT_EQ(method().get_output(0).to_tensor().const_data_ptr<int64_t>()[0], -30);
}

TEST_F(MethodTest, RefusesAnotherValueForAScalarInputFixedAtExport) {
  ASSERT_EQ(init(scalar_input_spec()), Error::Ok);
  LogCapture log;
  EXPECT_EQ(method().set_input(EValue(int64_t{7}), 1), Error::Ok);
  EXPECT_EQ(method().set_input(EValue(int64_t{8}), 1), Error::InvalidArgument);
  EXPECT_TRUE(log.contains("input 1 was fixed to Int 7 when the program was exported; Int 8 given"))
      << log.text();
  EXPECT_EQ(method().set_input(EValue(2.5), 1), Error::InvalidType);
  EXPECT_EQ(method().set_input(EValue(true), 0), Error::InvalidType);
}

TEST_F(MethodTest, LoadsStateFromTheMutableSegmentAndKeepsItBetweenExecutions) {
  ASSERT_EQ(init(kiln_test::state_program_spec()), Error::Ok);
  const std::vector<float> initial = kiln_test::state_program_initial();
  FloatTensor x({2, 3}, {1, 1, 1, 1, 1, 1});
  for (int call = 1; call <= 3; ++call) {
    ASSERT_EQ(method().set_input(EValue(&x.tensor), 0), Error::Ok);
    ASSERT_EQ(method().execute(), Error::Ok);
    const float* state = method().get_output(0).to_tensor().const_data_ptr<float>();
    for (size_t i = 0; i < initial.size(); ++i) EXPECT_FLOAT_EQ(state[i], initial[i] + call) << i;
  }
  // Loading the method again (same memory) restores the initial state.
  ASSERT_EQ(harness_->load_method("forward"), Error::Ok);
  ASSERT_EQ(method().set_input(EValue(&x.tensor), 0), Error::Ok);
  ASSERT_EQ(method().execute(), Error::Ok);
  EXPECT_FLOAT_EQ(method().get_output(0).to_tensor().const_data_ptr<float>()[0], initial[0] + 1);
}

TEST_F(MethodTest, RefusesStateWhoseInitialDataIsMissingOrShort) {
  LogCapture log;
  ProgramSpec short_data = kiln_test::state_program_spec();
  short_data.segments[1].data.resize(20);  // 24 bytes of state
  EXPECT_EQ(init(short_data), Error::ProgramSegmentOutOfBounds);
  EXPECT_TRUE(log.contains("mutable data 1: bytes [0, +24) past the 20-byte segment")) << log.text();
  ProgramSpec bad_entry = kiln_test::state_program_spec();
  bad_entry.plans[0].values[1].tensor.data_buffer_idx = 2;
  EXPECT_EQ(init(bad_entry), Error::ProgramIndexOutOfRange);
  ProgramSpec no_segment = kiln_test::state_program_spec();
  no_segment.has_mutable_segment = false;
  EXPECT_EQ(init(no_segment), Error::InvalidProgram);
  EXPECT_TRUE(log.contains("the program has no mutable data segment")) << log.text();
  ProgramSpec bad_segment = kiln_test::state_program_spec();
  bad_segment.mutable_segment_index = 5;
  EXPECT_EQ(init(bad_segment), Error::ProgramIndexOutOfRange);
  ProgramSpec offset_past_end = kiln_test::state_program_spec();
  offset_past_end.mutable_offsets = {0, 1000};
  EXPECT_EQ(init(offset_past_end), Error::ProgramSegmentOutOfBounds);
}

// ExecuTorch's runtime starts state the program gives no initial value at zero; so must
// Kiln, whatever the planned memory held before (firmware pools are not zeroed at boot).
TEST_F(MethodTest, StartsStateWithoutAnInitialValueAtZeroAtEveryLoad) {
  kiln_test::register_state_write_back_kernel();
  FloatTensor ones({2, 3}, {1, 1, 1, 1, 1, 1});
  for (const uint8_t stale : {0x41, 0x7f, 0xc2}) {
    harness_.emplace(build_program(kiln_test::state_without_initial_value_spec()));
    harness_->planned_fill = stale;
    ASSERT_EQ(harness_->load_program(), Error::Ok);
    for (int load = 0; load < 2; ++load) {
      ASSERT_EQ(harness_->load_method("forward"), Error::Ok);
      for (int call = 1; call <= 2; ++call) {
        ASSERT_EQ(method().set_input(EValue(&ones.tensor), 0), Error::Ok);
        ASSERT_EQ(method().execute(), Error::Ok);
        const float* out = method().get_output(0).to_tensor().const_data_ptr<float>();
        for (size_t i = 0; i < 6; ++i) {
          EXPECT_EQ(out[i], static_cast<float>(call)) << "planned memory 0x" << std::hex << int{stale}
                                                      << std::dec << ", load " << load << ", call " << call;
        }
      }
    }
  }
}

TEST_F(MethodTest, ZeroesOnlyTheStateAmongThePlannedBytes) {
  kiln_test::register_state_write_back_kernel();
  harness_.emplace(build_program(kiln_test::state_without_initial_value_spec()));
  harness_->planned_fill = 0x41;
  ASSERT_EQ(harness_->load_program(), Error::Ok);
  ASSERT_EQ(harness_->load_method("forward"), Error::Ok);
  // Bytes [32, 56) are the state; the rest is the input's and the output's, which the
  // program writes before it reads them: init leaves them as they were.
  const kiln::Tensor& x = method().get_input(0).to_tensor();
  const auto* base = static_cast<const uint8_t*>(x.const_data_ptr());
  for (size_t i = 0; i < 96; ++i) {
    const bool state = i >= 32 && i < 56;
    EXPECT_EQ(base[i], state ? 0 : 0x41) << "planned byte " << i;
  }
}

// A profiler on the method's tracing hook: it overrides only the instructions' begin and
// end (every other event has a do-nothing default).
class RecordingProfiler : public kiln::EventTracer {
 public:
  void begin_instruction(uint32_t chain, uint32_t instruction_id, const char* name) override {
    names.push_back(std::to_string(instruction_id) + ":" + name);
    open = true;
  }
  void end_instruction() override {
    EXPECT_TRUE(open);
    open = false;
  }
  std::vector<std::string> names;
  bool open = false;
};

TEST_F(MethodTest, ReportsEveryInstructionToTheTracer) {
  ProgramSpec spec = add_program_spec();
  InstructionSpec free_call;
  free_call.kind = InstructionSpec::Kind::Free;
  free_call.a = 0;
  spec.plans[0].instructions.push_back(free_call);
  ASSERT_EQ(init(spec), Error::Ok);
  RecordingProfiler profiler;
  method().set_event_tracer(&profiler);
  FloatTensor x({2, 3}, std::vector<float>(6, 1.f));
  ASSERT_EQ(method().set_input(EValue(&x.tensor), 0), Error::Ok);
  ASSERT_EQ(method().execute(), Error::Ok);
  EXPECT_EQ(profiler.names, (std::vector<std::string>{"0:test::add.out", "1:FreeCall"}));
  EXPECT_FALSE(profiler.open);
  method().set_event_tracer(nullptr);
  ASSERT_EQ(method().execute(), Error::Ok);
  EXPECT_EQ(profiler.names.size(), 2u);
}

// A backend whose blob is one float k: out = in + k.
class AddConstantBackend : public kiln::BackendInterface {
 public:
  bool is_available() const override { return true; }
  kiln::Result<kiln::DelegateHandle*> init(kiln::BackendInitContext& context,
                                           kiln::Span<const uint8_t> processed,
                                           kiln::Span<const kiln::CompileSpec> specs) const override {
    if (processed.size() != sizeof(float)) return Error::InvalidProgram;
    auto* k = static_cast<float*>(context.method_allocator->allocate(sizeof(float)));
    if (k == nullptr) return Error::MemoryAllocationFailed;
    std::memcpy(k, processed.data(), sizeof(float));
    last_spec_count = specs.size();
    return static_cast<kiln::DelegateHandle*>(k);
  }
  Error execute(kiln::BackendExecuteContext&, kiln::DelegateHandle* handle,
                kiln::Span<EValue*> args) const override {
    if (args.size() != 2 || !args[0]->is_tensor() || !args[1]->is_tensor()) return Error::InvalidArgument;
    const float k = *static_cast<float*>(handle);
    const kiln::Tensor& in = args[0]->to_tensor();
    kiln::Tensor& out = args[1]->to_tensor();
    if (in.numel() != out.numel()) return Error::InvalidArgument;
    for (size_t i = 0; i < in.numel(); ++i) {
      out.mutable_data_ptr<float>()[i] = in.const_data_ptr<float>()[i] + k;
    }
    return Error::Ok;
  }
  void destroy(kiln::DelegateHandle*) const override { ++destroyed; }
  mutable int destroyed = 0;
  mutable size_t last_spec_count = 0;
};

AddConstantBackend g_backend;

void register_test_backend() {
  static const Error registered = kiln::register_backend({"AddConstantBackend", &g_backend});
  ASSERT_EQ(registered, Error::Ok);
}

ProgramSpec delegate_program_spec(int8_t location) {
  TensorSpec x;
  x.sizes = {4};
  x.planned = true;
  TensorSpec out = x;
  out.memory_offset = 16;
  kiln_test::PlanSpec plan;
  plan.values = {kiln_test::tensor_value(x), kiln_test::tensor_value(out)};
  plan.inputs = {0};
  plan.outputs = {1};
  kiln_test::DelegateSpec delegate;
  delegate.id = "AddConstantBackend";
  delegate.location = location;
  delegate.index = 0;
  delegate.compile_specs = {{"target", {1, 2}}, {"flags", {}}};
  plan.delegates = {delegate};
  InstructionSpec call;
  call.kind = InstructionSpec::Kind::Delegate;
  call.a = 0;
  call.args = {0, 1};
  plan.instructions = {call};
  plan.buffer_sizes = {0, 32};
  ProgramSpec spec;
  spec.plans = {plan};
  const std::vector<uint8_t> blob = kiln_test::float_bytes({2.5f});
  if (location == 0) {
    spec.inline_delegate_data = {blob};
  } else {
    kiln_test::SegmentSpec segment;
    segment.data = blob;
    spec.segments = {segment};
  }
  return spec;
}

TEST_F(MethodTest, RunsDelegatesFromInlineDataAndSegments) {
  register_test_backend();
  for (int8_t location : {0, 1}) {
    const int destroyed_before = g_backend.destroyed;
    {
      // The backend keeps its state (one float) in the method allocator, on top of
      // what MethodMeta counts for the method itself.
      ASSERT_EQ(init(delegate_program_spec(location), 0, 16 + sizeof(float)), Error::Ok);
      EXPECT_EQ(g_backend.last_spec_count, 2u);
      EXPECT_EQ(method().method_meta().num_backends(), 1u);
      FloatTensor x({4}, {1, 2, 3, 4});
      ASSERT_EQ(method().set_input(EValue(&x.tensor), 0), Error::Ok);
      ASSERT_EQ(method().execute(), Error::Ok);
      for (size_t i = 0; i < 4; ++i) {
        EXPECT_FLOAT_EQ(method().get_output(0).to_tensor().const_data_ptr<float>()[i], x.data[i] + 2.5f);
      }
      {
        kiln::Method moved(std::move(method()));
        EXPECT_EQ(g_backend.destroyed, destroyed_before);
      }
      EXPECT_EQ(g_backend.destroyed, destroyed_before + 1);
      harness_.reset();  // the moved-from Method owns no delegates any more
    }
    EXPECT_EQ(g_backend.destroyed, destroyed_before + 1);
  }
}

TEST_F(MethodTest, RejectsBadDelegates) {
  {
    ProgramSpec spec = delegate_program_spec(0);
    spec.plans[0].delegates[0].id = "NoSuchBackend";
    LogCapture log;
    EXPECT_EQ(init(spec), Error::NotFound);
    EXPECT_TRUE(log.contains("backend NoSuchBackend is not registered")) << log.text();
  }
  register_test_backend();
  {
    ProgramSpec spec = delegate_program_spec(0);
    spec.plans[0].delegates[0].index = 3;
    EXPECT_EQ(init(spec), Error::ProgramIndexOutOfRange);
  }
  {
    ProgramSpec spec = delegate_program_spec(1);
    spec.plans[0].delegates[0].index = 3;
    EXPECT_EQ(init(spec), Error::ProgramIndexOutOfRange);
  }
  {
    ProgramSpec spec = delegate_program_spec(0);
    spec.plans[0].instructions[0].a = 1;
    EXPECT_EQ(init(spec), Error::ProgramIndexOutOfRange);
  }
  {
    ProgramSpec spec = delegate_program_spec(0);
    spec.inline_delegate_data = {{1, 2, 3}};  // the backend's own check fails
    EXPECT_EQ(init(spec), Error::InvalidProgram);
  }
}

}  // namespace
