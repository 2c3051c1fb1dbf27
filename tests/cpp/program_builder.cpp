#include "program_builder.h"

#include <cstring>

#include "kiln_schema/program_generated.h"

namespace kiln_test {
namespace {

using flatbuffers::FlatBufferBuilder;
using flatbuffers::Offset;

constexpr size_t kSegmentAlignment = 16;
constexpr uint32_t kHeaderLength = 32;

size_t align_up(size_t n, size_t alignment) { return (n + alignment - 1) / alignment * alignment; }

Offset<kiln_pte::Tensor> build_tensor(FlatBufferBuilder& fbb, const TensorSpec& t) {
  auto sizes = fbb.CreateVector(t.sizes);
  std::vector<uint8_t> order = t.dim_order;
  if (order.empty()) {
    for (size_t i = 0; i < t.sizes.size(); ++i) order.push_back(static_cast<uint8_t>(i));
  }
  auto dim_order = fbb.CreateVector(order);
  Offset<kiln_pte::AllocationDetails> allocation = 0;
  if (t.planned) {
    allocation = kiln_pte::CreateAllocationDetails(
        fbb, t.memory_id, static_cast<uint32_t>(t.memory_offset & 0xffffffffu),
        static_cast<uint32_t>(t.memory_offset >> 32));
  }
  return kiln_pte::CreateTensor(fbb, static_cast<kiln_pte::ScalarType>(t.scalar_type),
                                t.storage_offset, sizes, dim_order, false, t.data_buffer_idx,
                                allocation, 0,
                                static_cast<kiln_pte::TensorShapeDynamism>(t.shape_dynamism));
}

Offset<kiln_pte::EValue> build_value(FlatBufferBuilder& fbb, const ValueSpec& v) {
  using K = kiln_pte::KernelTypes;
  switch (v.kind) {
    case ValueSpec::Kind::Null:
      return kiln_pte::CreateEValue(fbb, K::Null, kiln_pte::CreateNull(fbb).Union());
    case ValueSpec::Kind::Int:
      return kiln_pte::CreateEValue(fbb, K::Int, kiln_pte::CreateInt(fbb, v.int_value).Union());
    case ValueSpec::Kind::Bool:
      return kiln_pte::CreateEValue(fbb, K::Bool, kiln_pte::CreateBool(fbb, v.bool_value).Union());
    case ValueSpec::Kind::Double:
      return kiln_pte::CreateEValue(fbb, K::Double,
                                    kiln_pte::CreateDouble(fbb, v.double_value).Union());
    case ValueSpec::Kind::String:
      return kiln_pte::CreateEValue(
          fbb, K::String, kiln_pte::CreateStringDirect(fbb, v.string_value.c_str()).Union());
    case ValueSpec::Kind::Tensor:
      return kiln_pte::CreateEValue(fbb, K::Tensor, build_tensor(fbb, v.tensor).Union());
    case ValueSpec::Kind::IntList:
      return kiln_pte::CreateEValue(fbb, K::IntList,
                                    kiln_pte::CreateIntListDirect(fbb, &v.int_items).Union());
    case ValueSpec::Kind::DoubleList:
      return kiln_pte::CreateEValue(
          fbb, K::DoubleList, kiln_pte::CreateDoubleListDirect(fbb, &v.double_items).Union());
    case ValueSpec::Kind::BoolList:
      return kiln_pte::CreateEValue(fbb, K::BoolList,
                                    kiln_pte::CreateBoolListDirect(fbb, &v.bool_items).Union());
    case ValueSpec::Kind::TensorList:
      return kiln_pte::CreateEValue(
          fbb, K::TensorList, kiln_pte::CreateTensorListDirect(fbb, &v.index_items).Union());
    case ValueSpec::Kind::OptionalTensorList:
      return kiln_pte::CreateEValue(
          fbb, K::OptionalTensorList,
          kiln_pte::CreateOptionalTensorListDirect(fbb, &v.index_items).Union());
    case ValueSpec::Kind::TypeWithoutTable:
      return kiln_pte::CreateEValue(fbb, K::Tensor, 0);
  }
  return 0;
}

Offset<kiln_pte::Instruction> build_instruction(FlatBufferBuilder& fbb, const InstructionSpec& i) {
  using A = kiln_pte::InstructionArguments;
  switch (i.kind) {
    case InstructionSpec::Kind::Kernel:
      return kiln_pte::CreateInstruction(
          fbb, A::KernelCall, kiln_pte::CreateKernelCallDirect(fbb, i.a, &i.args).Union());
    case InstructionSpec::Kind::Delegate:
      return kiln_pte::CreateInstruction(
          fbb, A::DelegateCall, kiln_pte::CreateDelegateCallDirect(fbb, i.a, &i.args).Union());
    case InstructionSpec::Kind::Move:
      return kiln_pte::CreateInstruction(fbb, A::MoveCall,
                                         kiln_pte::CreateMoveCall(fbb, i.a, i.b).Union());
    case InstructionSpec::Kind::JumpFalse:
      return kiln_pte::CreateInstruction(fbb, A::JumpFalseCall,
                                         kiln_pte::CreateJumpFalseCall(fbb, i.a, i.b).Union());
    case InstructionSpec::Kind::Free:
      return kiln_pte::CreateInstruction(fbb, A::FreeCall,
                                         kiln_pte::CreateFreeCall(fbb, i.a).Union());
    case InstructionSpec::Kind::KindWithoutTable:
      return kiln_pte::CreateInstruction(fbb, A::KernelCall, 0);
  }
  return 0;
}

Offset<kiln_pte::ExecutionPlan> build_plan(FlatBufferBuilder& fbb, const PlanSpec& p) {
  std::vector<Offset<kiln_pte::EValue>> values;
  for (const ValueSpec& v : p.values) values.push_back(build_value(fbb, v));
  std::vector<Offset<kiln_pte::Instruction>> instructions;
  for (const InstructionSpec& i : p.instructions) instructions.push_back(build_instruction(fbb, i));
  std::vector<Offset<kiln_pte::Chain>> chains;
  if (p.has_chain) {
    chains.push_back(kiln_pte::CreateChainDirect(fbb, &p.inputs, &p.outputs, &instructions));
  }
  std::vector<Offset<kiln_pte::Operator>> operators;
  for (const auto& op : p.operators) {
    operators.push_back(kiln_pte::CreateOperatorDirect(fbb, op.first.c_str(), op.second.c_str()));
  }
  std::vector<Offset<kiln_pte::BackendDelegate>> delegates;
  for (const DelegateSpec& d : p.delegates) {
    std::vector<Offset<kiln_pte::CompileSpec>> specs;
    for (const auto& spec : d.compile_specs) {
      specs.push_back(kiln_pte::CreateCompileSpecDirect(fbb, spec.first.c_str(), &spec.second));
    }
    auto processed = kiln_pte::CreateBackendDelegateDataReference(
        fbb, static_cast<kiln_pte::DataLocation>(d.location), d.index);
    delegates.push_back(kiln_pte::CreateBackendDelegateDirect(fbb, d.id.c_str(), processed, &specs));
  }
  return kiln_pte::CreateExecutionPlanDirect(fbb, p.name.c_str(), 0, &values, &p.inputs,
                                             &p.outputs, &chains, &operators, &delegates,
                                             &p.buffer_sizes);
}

}  // namespace

ValueSpec int_value(int64_t v) {
  ValueSpec s;
  s.kind = ValueSpec::Kind::Int;
  s.int_value = v;
  return s;
}

ValueSpec bool_value(bool v) {
  ValueSpec s;
  s.kind = ValueSpec::Kind::Bool;
  s.bool_value = v;
  return s;
}

ValueSpec double_value(double v) {
  ValueSpec s;
  s.kind = ValueSpec::Kind::Double;
  s.double_value = v;
  return s;
}

ValueSpec tensor_value(const TensorSpec& t) {
  ValueSpec s;
  s.kind = ValueSpec::Kind::Tensor;
  s.tensor = t;
  return s;
}

ValueSpec int_list_value(std::vector<int64_t> value_indices) {
  ValueSpec s;
  s.kind = ValueSpec::Kind::IntList;
  s.int_items = std::move(value_indices);
  return s;
}

ValueSpec tensor_list_value(std::vector<int32_t> value_indices) {
  ValueSpec s;
  s.kind = ValueSpec::Kind::TensorList;
  s.index_items = std::move(value_indices);
  return s;
}

InstructionSpec kernel_call(int32_t op_index, std::vector<int32_t> args) {
  InstructionSpec i;
  i.kind = InstructionSpec::Kind::Kernel;
  i.a = op_index;
  i.args = std::move(args);
  return i;
}

void write_u32(std::vector<uint8_t>& bytes, size_t offset, uint32_t value) {
  for (size_t i = 0; i < 4; ++i) bytes[offset + i] = static_cast<uint8_t>(value >> (8 * i));
}

void write_u64(std::vector<uint8_t>& bytes, size_t offset, uint64_t value) {
  for (size_t i = 0; i < 8; ++i) bytes[offset + i] = static_cast<uint8_t>(value >> (8 * i));
}

std::vector<uint8_t> float_bytes(const std::vector<float>& values) {
  std::vector<uint8_t> bytes(values.size() * sizeof(float));
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

std::vector<uint8_t> build_program(const ProgramSpec& spec) {
  // Segment offsets are relative to the segment base and known before the flatbuffer.
  std::vector<uint64_t> segment_offsets;
  size_t segment_bytes = 0;
  for (const SegmentSpec& s : spec.segments) {
    segment_offsets.push_back(segment_bytes);
    segment_bytes = align_up(segment_bytes + s.data.size(), kSegmentAlignment);
  }

  FlatBufferBuilder fbb;
  std::vector<Offset<kiln_pte::ExecutionPlan>> plans;
  for (const PlanSpec& p : spec.plans) plans.push_back(build_plan(fbb, p));
  std::vector<Offset<kiln_pte::Buffer>> constant_buffers;
  for (const auto& b : spec.constant_buffers) {
    fbb.ForceVectorAlignment(b.size(), sizeof(uint8_t), 16);
    constant_buffers.push_back(kiln_pte::CreateBuffer(fbb, fbb.CreateVector(b)));
  }
  std::vector<Offset<kiln_pte::BackendDelegateInlineData>> inline_data;
  for (const auto& d : spec.inline_delegate_data) {
    fbb.ForceVectorAlignment(d.size(), sizeof(uint8_t), 16);
    inline_data.push_back(kiln_pte::CreateBackendDelegateInlineData(fbb, fbb.CreateVector(d)));
  }
  std::vector<Offset<kiln_pte::DataSegment>> segments;
  for (size_t i = 0; i < spec.segments.size(); ++i) {
    const SegmentSpec& s = spec.segments[i];
    const uint64_t offset = s.offset_override >= 0 ? static_cast<uint64_t>(s.offset_override)
                                                   : segment_offsets[i];
    const uint64_t size = s.size_override >= 0 ? static_cast<uint64_t>(s.size_override)
                                               : s.data.size();
    segments.push_back(kiln_pte::CreateDataSegment(fbb, offset, size));
  }
  Offset<kiln_pte::SubsegmentOffsets> constant_segment = 0;
  if (spec.has_constant_segment) {
    constant_segment = kiln_pte::CreateSubsegmentOffsetsDirect(fbb, spec.constant_segment_index,
                                                               &spec.constant_offsets);
  }
  std::vector<Offset<kiln_pte::SubsegmentOffsets>> mutable_segments;
  if (spec.has_mutable_segment) {
    mutable_segments.push_back(kiln_pte::CreateSubsegmentOffsetsDirect(
        fbb, spec.mutable_segment_index, &spec.mutable_offsets));
  }
  auto root = kiln_pte::CreateProgramDirect(fbb, 0, &plans, &constant_buffers, &inline_data,
                                            &segments, constant_segment,
                                            spec.has_mutable_segment ? &mutable_segments : nullptr);
  kiln_pte::FinishProgramBuffer(fbb, root);
  std::vector<uint8_t> bytes(fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize());
  if (!spec.extended_header) return bytes;

  // The header goes right after the identifier. Everything behind it moves by the
  // header length (a multiple of 16, so alignment is kept); only the root offset,
  // the one offset measured from byte 0, changes.
  bytes.insert(bytes.begin() + 8, kHeaderLength, 0);
  uint32_t root_offset = 0;
  std::memcpy(&root_offset, bytes.data(), 4);
  write_u32(bytes, 0, root_offset + kHeaderLength);
  const size_t program_size = bytes.size();
  // Like ExecuTorch: the segment base is 0 when there are no segments.
  const size_t segment_base = spec.segments.empty() ? 0 : align_up(program_size, kSegmentAlignment);
  std::memcpy(bytes.data() + kHeaderMagicOffset, "eh00", 4);
  write_u32(bytes, kHeaderLengthOffset, kHeaderLength);
  write_u64(bytes, kProgramSizeOffset, program_size);
  write_u64(bytes, kSegmentBaseOffset, segment_base);
  write_u64(bytes, kSegmentDataSizeOffset, segment_bytes);
  if (!spec.segments.empty()) {
    bytes.resize(segment_base, 0);
    for (size_t i = 0; i < spec.segments.size(); ++i) {
      bytes.resize(segment_base + segment_offsets[i], 0);
      bytes.insert(bytes.end(), spec.segments[i].data.begin(), spec.segments[i].data.end());
    }
    bytes.resize(segment_base + segment_bytes, 0);
  }
  return bytes;
}

std::vector<float> add_program_constant() { return {0.5f, -1.0f, 2.0f, 3.25f, -4.5f, 10.0f}; }

ProgramSpec add_program_spec() {
  TensorSpec x;
  x.sizes = {2, 3};
  x.planned = true;
  x.memory_offset = 0;
  TensorSpec c;
  c.sizes = {2, 3};
  c.data_buffer_idx = 1;
  TensorSpec out;
  out.sizes = {2, 3};
  out.planned = true;
  out.memory_offset = 32;

  PlanSpec plan;
  plan.values = {tensor_value(x), tensor_value(c), int_value(1), tensor_value(out)};
  plan.inputs = {0};
  plan.outputs = {3};
  plan.operators = {{"test::add", "out"}};
  plan.instructions = {kernel_call(0, {0, 1, 2, 3, 3})};
  plan.buffer_sizes = {0, 64};

  ProgramSpec spec;
  spec.plans = {plan};
  SegmentSpec constants;
  constants.data = float_bytes(add_program_constant());
  spec.segments = {constants};
  spec.has_constant_segment = true;
  spec.constant_segment_index = 0;
  spec.constant_offsets = {0, 0};
  return spec;
}

std::vector<float> state_program_initial() { return {0.5f, -1.f, 2.f, 0.f, 3.25f, -4.f}; }

ProgramSpec state_program_spec() {
  TensorSpec x;
  x.sizes = {2, 3};
  x.planned = true;
  x.memory_offset = 0;
  TensorSpec state;
  state.sizes = {2, 3};
  state.planned = true;
  state.memory_offset = 32;
  state.data_buffer_idx = 1;  // entry 1 of the mutable data segment

  PlanSpec plan;
  plan.values = {tensor_value(x), tensor_value(state), int_value(1)};
  plan.inputs = {0};
  plan.outputs = {1};
  plan.operators = {{"test::add", "out"}};
  plan.instructions = {kernel_call(0, {1, 0, 2, 1, 1})};
  plan.buffer_sizes = {0, 64};

  ProgramSpec spec;
  spec.plans = {plan};
  SegmentSpec constants;  // the (empty) constant segment
  SegmentSpec initial;
  initial.data = float_bytes(state_program_initial());
  spec.segments = {constants, initial};
  spec.has_mutable_segment = true;
  spec.mutable_segment_index = 1;
  spec.mutable_offsets = {0, 0};
  return spec;
}

ProgramSpec state_without_initial_value_spec() {
  TensorSpec state;
  state.sizes = {2, 3};
  state.planned = true;
  state.memory_offset = 32;
  TensorSpec x = state;
  x.memory_offset = 0;
  TensorSpec t = state;
  t.memory_offset = 64;

  PlanSpec plan;
  plan.values = {tensor_value(state), tensor_value(x), int_value(1), tensor_value(t), bool_value(false)};
  plan.inputs = {1};
  plan.outputs = {3};
  plan.operators = {{"test::add", "out"}, {"aten::copy_", ""}};
  plan.instructions = {kernel_call(0, {0, 1, 2, 3, 3}), kernel_call(1, {0, 3, 4, 0})};
  plan.buffer_sizes = {0, 96};

  ProgramSpec spec;
  spec.plans = {plan};
  return spec;
}

}  // namespace kiln_test
