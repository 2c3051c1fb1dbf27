// MethodMeta: what a method needs, read from the program without initializing it.
//
// A runner uses it to size the method allocator and the planned buffers before it
// loads the method, and to learn the inputs' shapes and dtypes.
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/core/evalue.h"
#include "runtime/core/result.h"
#include "runtime/core/scalar_type.h"
#include "runtime/core/span.h"
#include "runtime/core/tensor.h"

namespace kiln_pte {
struct ExecutionPlan;
}  // namespace kiln_pte

namespace kiln {

class Program;

/// Shape, dtype and placement of one input or output tensor.
struct TensorInfo {
  /// Sizes as the program declares them (upper bounds for dynamic tensors).
  Span<const int32_t> sizes;
  /// Dimension order, outermost first.
  Span<const uint8_t> dim_order;
  ScalarType scalar_type;
  /// Bytes of the tensor's data at the declared sizes.
  size_t nbytes;
  /// True when the tensor lives in a planned buffer (set_input copies into it); false
  /// when the caller provides the memory.
  bool is_memory_planned;
  /// DynamicBound: `sizes` are upper bounds and smaller tensors are accepted.
  ShapeDynamism shape_dynamism;
};

/// One piece of a method's state: a planned tensor kept from one execute to the next (a
/// mutable buffer; method_state.h says how the runtime recognises it).
struct StateInfo {
  /// Its index in the method's value table (programs record no buffer names).
  size_t value_index;
  TensorInfo tensor;
  /// False when the program stores no initial value (ExecuTorch's exporter without its
  /// InitializedMutableBufferPass): the runtime starts the state at zero at every load.
  bool has_initial_value;
};

class MethodMeta final {
 public:
  /// Wraps a verified execution plan (Program::method_meta builds these). `program`
  /// (optional) lets method_allocator_size() ask backends about their blobs.
  explicit MethodMeta(const kiln_pte::ExecutionPlan* plan, const Program* program = nullptr)
      : plan_(plan), program_(program) {}

  /// The method's name, e.g. "forward".
  const char* name() const;

  size_t num_inputs() const;
  /// Kind of input `i`; InvalidArgument if `i` is out of range.
  Result<Tag> input_tag(size_t i) const;
  /// InvalidArgument for a bad `i`, InvalidType if the input is not a tensor,
  /// InvalidProgram if the tensor's description is malformed.
  Result<TensorInfo> input_tensor_meta(size_t i) const;

  size_t num_outputs() const;
  Result<Tag> output_tag(size_t i) const;
  Result<TensorInfo> output_tensor_meta(size_t i) const;

  /// Number of planned buffers the caller must provide (memory ids 1..n).
  size_t num_memory_planned_buffers() const;
  /// Size in bytes of planned buffer `i` (memory id i + 1).
  Result<int64_t> memory_planned_buffer_size(size_t i) const;

  /// Pieces of state: first those with an initial value (in value order), then those
  /// without (in the order of their write-backs).
  size_t num_states() const;
  /// State `i`; InvalidArgument for a bad `i`, InvalidProgram for a malformed tensor.
  Result<StateInfo> state_meta(size_t i) const;

  /// Instructions in the method's (first and only executed) chain.
  size_t num_instructions() const;
  /// Entries in the method's operator table.
  size_t num_operators() const;
  /// Writes operator `i`'s full name, e.g. "aten::add.out", NUL-terminated, into `buf`
  /// and returns `buf`. InvalidArgument if `i` is out of range or `buf` is too small.
  Result<const char*> operator_name(size_t i, char* buf, size_t buf_size) const;
  /// Delegates (lowered subgraphs) in the method.
  size_t num_backends() const;

  /// Bytes Method init takes from the method allocator, whatever the allocator's base
  /// alignment (padding included). Computed from the program without allocating.
  /// Includes what registered backends say their init takes
  /// (BackendInterface::method_allocator_size) when the MethodMeta came from a Program;
  /// unregistered backends count 0 (loading the method fails for them anyway).
  /// InvalidProgram if the method's tables are malformed.
  Result<size_t> method_allocator_size() const;

  /// The underlying plan (for the runtime's own use).
  const kiln_pte::ExecutionPlan* plan() const { return plan_; }

 private:
  /// Value index of state `wanted` (SIZE_MAX: none; counts them all into *count).
  size_t find_state(size_t wanted, size_t* count) const;
  /// Sum of the registered backends' method_allocator_size() over the delegates.
  Result<size_t> backends_allocator_size() const;

  const kiln_pte::ExecutionPlan* plan_;
  const Program* program_;
};

}  // namespace kiln
