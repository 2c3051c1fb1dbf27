// Internal: what Method::init's parts share while they build a method in the method
// allocator (method_init.cpp runs them: method_values.cpp, method_instructions.cpp,
// method_delegates.cpp).
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/core/error.h"
#include "runtime/core/evalue.h"
#include "runtime/core/result.h"
#include "runtime/executor/memory_manager.h"
#include "runtime/executor/method_layout.h"

namespace kiln_pte {
struct ExecutionPlan;
struct Instruction;
}  // namespace kiln_pte

namespace kiln {

class Program;

namespace internal {

/// Hands out pieces of the sections init allocated. Taking more than the layout
/// counted is a runtime bug, reported as Internal rather than overrunning.
class SectionCursor {
 public:
  SectionCursor(void* base, size_t bytes) : base_(static_cast<uint8_t*>(base)), bytes_(bytes) {}

  template <typename T>
  T* take(size_t count) {
    const size_t bytes = count * sizeof(T);
    if (count > bytes_ / sizeof(T) || bytes > bytes_ - used_) return nullptr;
    T* out = reinterpret_cast<T*>(base_ + used_);
    used_ += bytes;
    return out;
  }

 private:
  uint8_t* base_;
  size_t bytes_;
  size_t used_ = 0;
};

/// Everything init builds, before it is handed to the Method.
struct InitState {
  const Program* program;
  const kiln_pte::ExecutionPlan* plan;
  const MemoryManager* memory;
  EValue* values;
  size_t num_values;
  Tensor* tensors;
  size_t num_tensors_built;
  SectionCursor shapes;
  SectionCursor dim_orders;
  SectionCursor value_pointers;
  SectionCursor tensor_pointers;
  SectionCursor int_scratch;
  SectionCursor names;
  internal::ResolvedOperator* operators;
  size_t num_operators;
  SectionCursor compile_specs;
};

/// Internal (a layout mismatch: init asked a section for more than the layout counted).
Error out_of_space(const char* what);

/// ProgramIndexOutOfRange (logged with `what` and `owner`) unless 0 <= index < num_values.
Error check_value_index(int64_t index, size_t num_values, const char* what, size_t owner);

/// Checks the caller's planned buffers against the sizes the plan declares.
Error check_planned_buffers(const kiln_pte::ExecutionPlan& plan, const MemoryManager& memory);

/// Fills s.values: scalars, strings and tensors first, then the lists that refer to them.
Error parse_values(InitState& s);

/// Looks every operator up in the kernel registry (a missing one is reported later, by
/// the instruction that calls it).
Error resolve_operators(InitState& s);

/// Resolves instruction `pc`; sets *missing if it calls an unregistered operator.
Error prepare_instruction(InitState& s, const kiln_pte::Instruction& instruction, size_t pc,
                          size_t num_instructions, PreparedInstruction* out, bool* missing);

/// Initializes every delegate of the plan into `delegates` (with their compile specs in
/// s.compile_specs); *num_initialized counts those to destroy. NotFound for an
/// unregistered backend, NotSupported for an unavailable one, or the backend's error.
Error init_delegates(InitState& s, MemoryAllocator& method_allocator, DelegateInstance* delegates,
                     size_t num_delegates, size_t* num_initialized);

}  // namespace internal
}  // namespace kiln
