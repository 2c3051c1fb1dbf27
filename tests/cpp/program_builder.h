// Builds .pte programs in C++ for the runtime tests, through the flatc-generated
// builder API, so that the C++ tests need no Python. A ProgramSpec describes the
// program in plain vectors; tests take a valid spec, break one thing, and build it.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace kiln_test {

struct TensorSpec {
  int8_t scalar_type = 6;  // Float
  std::vector<int32_t> sizes;
  std::vector<uint8_t> dim_order;  // empty: 0..n-1
  uint32_t data_buffer_idx = 0;    // > 0: constant
  bool planned = false;
  uint32_t memory_id = 1;
  uint64_t memory_offset = 0;
  int8_t shape_dynamism = 0;
  int32_t storage_offset = 0;
};

struct ValueSpec {
  enum class Kind { Null, Int, Bool, Double, String, Tensor, IntList, DoubleList, BoolList,
                    TensorList, OptionalTensorList, TypeWithoutTable };
  Kind kind = Kind::Null;
  int64_t int_value = 0;
  bool bool_value = false;
  double double_value = 0.0;
  std::string string_value;
  TensorSpec tensor;
  std::vector<int64_t> int_items;     // IntList: value indices
  std::vector<double> double_items;
  std::vector<uint8_t> bool_items;
  std::vector<int32_t> index_items;   // TensorList / OptionalTensorList
};

ValueSpec int_value(int64_t v);
ValueSpec bool_value(bool v);
ValueSpec double_value(double v);
ValueSpec tensor_value(const TensorSpec& t);
ValueSpec int_list_value(std::vector<int64_t> value_indices);
ValueSpec tensor_list_value(std::vector<int32_t> value_indices);

struct InstructionSpec {
  enum class Kind { Kernel, Delegate, Move, JumpFalse, Free, KindWithoutTable };
  Kind kind = Kind::Kernel;
  int32_t a = 0;  // op index / delegate index / move_from / cond / freed value
  int32_t b = 0;  // move_to / destination
  std::vector<int32_t> args;
};

InstructionSpec kernel_call(int32_t op_index, std::vector<int32_t> args);

struct DelegateSpec {
  std::string id;
  int8_t location = 0;  // 0 inline, 1 segment
  uint32_t index = 0;
  std::vector<std::pair<std::string, std::vector<uint8_t>>> compile_specs;
};

struct PlanSpec {
  std::string name = "forward";
  std::vector<ValueSpec> values;
  std::vector<int32_t> inputs;
  std::vector<int32_t> outputs;
  std::vector<InstructionSpec> instructions;
  std::vector<std::pair<std::string, std::string>> operators;  // name, overload
  std::vector<DelegateSpec> delegates;
  std::vector<int64_t> buffer_sizes;  // non_const_buffer_sizes, [0] unused
  bool has_chain = true;
};

struct SegmentSpec {
  std::vector<uint8_t> data;
  /// Written into the segment table instead of the real offset/size when >= 0.
  int64_t offset_override = -1;
  int64_t size_override = -1;
};

struct ProgramSpec {
  std::vector<PlanSpec> plans;
  std::vector<SegmentSpec> segments;
  bool has_constant_segment = false;
  uint32_t constant_segment_index = 0;
  std::vector<uint64_t> constant_offsets;           // [0] reserved
  /// mutable_data_segments[0]: initial values of planned tensors with a data_buffer_idx.
  bool has_mutable_segment = false;
  uint32_t mutable_segment_index = 0;
  std::vector<uint64_t> mutable_offsets;            // [0] reserved
  std::vector<std::vector<uint8_t>> constant_buffers;  // legacy inline, [0] reserved
  std::vector<std::vector<uint8_t>> inline_delegate_data;
  bool extended_header = true;
};

/// Serializes `spec`: flatbuffer ("ET12"), extended header ("eh00", 32 bytes), then the
/// segments, each 16-byte aligned after the segment base.
std::vector<uint8_t> build_program(const ProgramSpec& spec);

/// Byte offsets of the extended header's fields in a built program.
constexpr size_t kHeaderMagicOffset = 8;
constexpr size_t kHeaderLengthOffset = 12;
constexpr size_t kProgramSizeOffset = 16;
constexpr size_t kSegmentBaseOffset = 24;
constexpr size_t kSegmentDataSizeOffset = 32;

void write_u32(std::vector<uint8_t>& bytes, size_t offset, uint32_t value);
void write_u64(std::vector<uint8_t>& bytes, size_t offset, uint64_t value);

/// Float tensor bytes.
std::vector<uint8_t> float_bytes(const std::vector<float>& values);

/// The reference program used by most tests: "forward"(x) = x + 1 * c where x is a
/// planned float [2, 3] input, c a constant float [2, 3] from the constant segment and
/// the output a planned float [2, 3]; one call to "test::add.out".
///   values: 0 x, 1 c, 2 Int alpha=1, 3 out
///   planned buffer 0: 48 bytes (x at 0, out at 32... see kAddProgram* constants)
ProgramSpec add_program_spec();
std::vector<float> add_program_constant();

/// A stateful program: "forward"(x) updates a float [2, 3] state s (planned, initial
/// value kStateInitial in the mutable data segment, segment 1) with s = s + 1 * x and
/// returns the new s (test::add.out writes the state in place).
///   values: 0 x, 1 s (state), 2 Int alpha=1
ProgramSpec state_program_spec();
std::vector<float> state_program_initial();

/// State as ExecuTorch's exporter writes it without InitializedMutableBufferPass: a
/// planned float [2, 3] state s with no initial value, "forward"(x) computes
/// t = s + 1 * x (test::add.out), writes it back with aten::copy_(s, t, false, s) and
/// returns t.
///   values: 0 s (state), 1 x, 2 Int alpha=1, 3 t, 4 Bool non_blocking=false
///   planned buffer 0: 96 bytes (x at 0, s at 32, t at 64)
ProgramSpec state_without_initial_value_spec();

}  // namespace kiln_test
