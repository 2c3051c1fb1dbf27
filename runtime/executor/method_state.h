// Internal: which planned tensors of a method are its state (a mutable buffer kept
// between executions), found from the program alone. MethodMeta lists them;
// Method::init starts the ones without an initial value at zero.
//
// A program writes a buffer's new value back at the end of the method with the in-place
// `aten::copy_(self, src, non_blocking, out)` whose `self` and `out` are one planned
// tensor that is not a method input (an input belongs to the caller). ExecuTorch's
// exporter and Kiln's both emit it, and after torch.export's functionalization it is the
// only in-place copy a program holds. That tensor is the state.
//
// Its initial value is optional: ExecuTorch's exporter stores one (in the mutable data
// segment) only when its InitializedMutableBufferPass runs. Without one the tensor has no
// data (data_buffer_idx 0) and its bytes would be whatever the planned memory held:
// ExecuTorch's runtime starts such state at zero (its hosts hand out zeroed memory), and
// Kiln zeroes exactly those bytes at every method load — the state's size, not the
// planned memory's. A planned tensor with initial data is state too (written back or
// not): init copies its initial value at every load.
#pragma once

#include <cstddef>
#include <cstdint>

namespace kiln_pte {
struct ExecutionPlan;
struct Instruction;
}  // namespace kiln_pte

namespace kiln::internal {

/// The in-place kernel that writes state back (its overload is "" or "default").
constexpr const char kStateWriteBackOperator[] = "aten::copy_";

/// Value index of the state `instruction` writes back into, or -1 when it is no such
/// write-back. Checks every index it reads: MethodMeta calls it on programs whose
/// indices Method::init has not checked.
int64_t state_written_back_by(const kiln_pte::ExecutionPlan& plan,
                              const kiln_pte::Instruction& instruction);

/// True if value `index` is a planned tensor whose initial value the program stores.
bool has_initial_state(const kiln_pte::ExecutionPlan& plan, size_t index);

}  // namespace kiln::internal
