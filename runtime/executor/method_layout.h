// Internal: what Method init allocates, computed from the plan alone.
//
// MethodMeta::method_allocator_size() and Method::init() both go through
// method_allocations(), so the size a runner reserves and what init takes cannot drift
// apart: init allocates exactly these sections, in this order, and fills them.
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/backend/backend_interface.h"
#include "runtime/core/evalue.h"
#include "runtime/core/memory_allocator.h"
#include "runtime/core/result.h"
#include "runtime/kernel/operator_registry.h"

namespace kiln_pte {
struct ExecutionPlan;
struct BackendDelegate;
}  // namespace kiln_pte

namespace kiln {

class Program;

namespace internal {

/// One instruction of chain 0 with everything execute needs already resolved.
struct PreparedInstruction {
  enum class Kind : uint8_t { Kernel, Delegate, Move, JumpFalse, Free };
  Kind kind;
  /// Operator index, delegate index, move source, condition value or freed value.
  uint32_t a;
  /// Move destination or jump destination.
  uint32_t b;
  /// The kernel (Kind::Kernel).
  OpFunction function;
  /// The kernel's or delegate's arguments.
  Span<EValue*> args;
  /// Operator name, backend id or instruction kind, for logs and event tracers.
  const char* name;
};

/// One entry of the method's operator table, resolved against the kernel registry.
struct ResolvedOperator {
  /// nullptr when no kernel is registered under `name`.
  OpFunction function;
  /// "name.overload", NUL-terminated, in the method allocator.
  const char* name;
  /// Set once a missing operator has been logged, so each is named once.
  bool reported_missing;
};

/// An initialized delegate.
struct DelegateInstance {
  const BackendInterface* backend;
  DelegateHandle* handle;
  /// The backend id, NUL-terminated in the program.
  const char* id;
};

/// How many of each thing the plan needs.
struct MethodLayout {
  size_t num_values = 0;
  size_t num_tensors = 0;
  /// Sum of the ranks of all tensors.
  size_t total_dims = 0;
  /// Items of all IntLists (pointers to Int values, plus an unboxing scratch slot each).
  size_t int_list_items = 0;
  /// Items of all TensorLists and OptionalTensorLists.
  size_t tensor_list_items = 0;
  /// Arguments of all kernel and delegate calls.
  size_t instruction_args = 0;
  size_t num_instructions = 0;
  size_t num_operators = 0;
  /// Bytes of "name.overload\0" for every operator.
  size_t operator_name_bytes = 0;
  size_t num_delegates = 0;
  size_t num_compile_specs = 0;
  size_t num_inputs = 0;
};

/// Counts everything in `plan` (a verified flatbuffer table). InvalidProgram (logged)
/// if a count overflows.
Result<MethodLayout> compute_method_layout(const kiln_pte::ExecutionPlan& plan);

/// The sections init allocates, in order.
enum class Section : uint8_t {
  Values,
  Tensors,
  /// int32: sizes then strides of every tensor.
  TensorShapes,
  DimOrders,
  /// EValue*: IntList items, then instruction arguments.
  ValuePointers,
  /// Tensor*: TensorList and OptionalTensorList items.
  TensorPointers,
  /// int64: unboxing scratch of IntLists.
  IntScratch,
  Instructions,
  /// ResolvedOperator per operator.
  Operators,
  OperatorNames,
  Delegates,
  CompileSpecs,
  InputFlags,
  Count,
};
constexpr size_t kNumSections = static_cast<size_t>(Section::Count);

struct Allocation {
  size_t bytes;
  size_t alignment;
};

/// Byte size and alignment of each section. InvalidProgram if a size overflows.
Error method_allocations(const MethodLayout& layout, Allocation (&out)[kNumSections]);

/// The most bytes a bump allocator uses for `allocations` over any base address.
size_t worst_case_allocator_bytes(const Allocation (&allocations)[kNumSections]);

/// Allocates every non-empty section from `allocator`, in order; empty sections get
/// nullptr. MemoryAllocationFailed (logged with the section) if the allocator is full.
Error allocate_sections(MemoryAllocator& allocator, const Allocation (&allocations)[kNumSections],
                        void* (&out)[kNumSections]);

/// The processed blob of delegate `index` (inline data or a segment of `program`).
/// InvalidProgram, ProgramIndexOutOfRange or ProgramSegmentOutOfBounds (logged).
Result<Span<const uint8_t>> delegate_blob(const Program& program,
                                          const kiln_pte::BackendDelegate& delegate, size_t index);

/// a + b or a * b, false on overflow.
inline bool checked_add(size_t a, size_t b, size_t* out) { return !__builtin_add_overflow(a, b, out); }
inline bool checked_mul(size_t a, size_t b, size_t* out) { return !__builtin_mul_overflow(a, b, out); }

}  // namespace internal
}  // namespace kiln
