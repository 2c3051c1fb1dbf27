// Method: one initialized, executable method of a Program.
//
// Init (Program::load_method) builds the value table, tensors and argument lists in
// the caller's method allocator, places tensors in the planned buffers, resolves every
// operator and backend, and checks every index the program contains. Execute then
// runs the instructions without allocating anything.
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/backend/backend_interface.h"
#include "runtime/core/error.h"
#include "runtime/core/evalue.h"
#include "runtime/core/result.h"
#include "runtime/core/span.h"
#include "runtime/executor/event_tracer.h"
#include "runtime/executor/memory_manager.h"
#include "runtime/executor/method_meta.h"

namespace kiln_pte {
struct ExecutionPlan;
}  // namespace kiln_pte

namespace kiln {

class Program;

/// One initialized delegate of a method (see Method::get_delegate).
struct DelegateInfo {
  /// The backend id the program names, e.g. "EthosUBackend".
  const char* backend_id;
  const BackendInterface* backend;
  /// What the backend's init returned; the backend defines what it points at.
  const DelegateHandle* handle;
};

namespace internal {
struct PreparedInstruction;
struct DelegateInstance;
}  // namespace internal

class Method final {
 public:
  Method(Method&& other) noexcept;
  Method& operator=(Method&& other) = delete;
  Method(const Method&) = delete;
  Method& operator=(const Method&) = delete;
  /// Calls destroy() on every initialized delegate.
  ~Method();

  /// Sets input `i`. For a tensor input: InputDtypeMismatch or InputShapeMismatch (with
  /// both shapes logged) unless `value` matches the declared tensor (a dynamic-bound
  /// input may be smaller in any dimension, never larger); then a planned input's data
  /// is copied into its planned buffer, and an unplanned input is pointed at the
  /// caller's data (which must stay alive while the method runs). Int/Double/Bool inputs
  /// take the new value if an instruction reads them (a symbolic int); one that no
  /// instruction reads was fixed at export and accepts only that value (InvalidArgument
  /// otherwise, with both values logged). InvalidArgument for a bad `i`, InvalidType for
  /// a value of the wrong kind.
  Error set_input(const EValue& value, size_t i);

  /// Gives unplanned output `i` its memory (`size` bytes, at least the tensor's at its
  /// declared sizes: a dynamic-bound output may grow back to its bound). InvalidState if
  /// the output is memory-planned (it already has memory).
  Error set_output_data_ptr(void* data, size_t size, size_t i);

  /// Runs the method. InvalidState if an input was never set or an unplanned output
  /// has no memory; a failing kernel's error (logged with the instruction index and
  /// operator); InvalidProgram if control flow runs away (more than 1000 times the
  /// instruction count).
  Error execute();

  size_t inputs_size() const;
  size_t outputs_size() const;
  /// Input/output `i`; a None value (and a log line) if `i` is out of range.
  const EValue& get_input(size_t i) const;
  const EValue& get_output(size_t i) const;
  MethodMeta method_meta() const;
  /// Entries in the value table.
  size_t values_size() const { return num_values_; }
  /// Delegates (backend calls) the method initialized.
  size_t delegates_size() const { return num_delegates_; }
  /// Delegate `i` (in the program's delegate order), for a backend's per-delegate
  /// statistics; InvalidArgument (logged) for a bad `i`.
  Result<DelegateInfo> get_delegate(size_t i) const;

  /// The method's one tracing hook: receives the events of every execute from now on
  /// (event_tracer.h: instructions, kernel scratch, delegate operations, intermediate
  /// values) — ETDump recording, per-operator profiling, per-layer numerics; nullptr
  /// stops it. Two at once: EventTracerPair. The tracer must outlive its use.
  void set_event_tracer(EventTracer* tracer) { event_tracer_ = tracer; }
  EventTracer* event_tracer() const { return event_tracer_; }

 private:
  friend class Program;

  Method(const Program* program, const kiln_pte::ExecutionPlan* plan,
         const MemoryManager& memory_manager)
      : program_(program), plan_(plan), memory_(memory_manager) {}

  /// Builds everything (method_init.cpp); on failure the Method is safe to destroy.
  Error init();
  /// Starts the state the program gives no initial value at zero (init; method_state.h
  /// says which planned tensors are state). Costs the state's bytes, once per load.
  void zero_state_without_initial_value();
  /// Finds the inputs some instruction reads (init, for set_scalar_input).
  void mark_read_inputs();
  Error set_scalar_input(const EValue& value, size_t i);
  Error check_ready_to_execute() const;
  /// The instruction loop of execute().
  Error run_instructions();
  /// Bytes the temp allocator handed out since its last reset (0 without one).
  size_t temp_bytes_used() const;
  Error execute_instruction(size_t pc, size_t* next_pc);
  /// Tells the event tracer about the instruction that just ran (method_tracing.cpp).
  void trace_instruction_end(size_t pc, size_t scratch_bytes);
  /// Index in the value table of method input / output `i` (checked at init).
  size_t input_value_index(size_t i) const;
  size_t output_value_index(size_t i) const;

  const Program* program_ = nullptr;
  const kiln_pte::ExecutionPlan* plan_ = nullptr;
  MemoryManager memory_;

  EValue* values_ = nullptr;
  size_t num_values_ = 0;
  internal::PreparedInstruction* instructions_ = nullptr;
  size_t num_instructions_ = 0;
  internal::DelegateInstance* delegates_ = nullptr;
  size_t num_delegates_ = 0;
  /// Per input: has it been given data (planned inputs: copied; unplanned: pointed).
  bool* input_set_ = nullptr;
  /// Per input: does an instruction (or an int list one passes) read its value.
  bool* input_is_read_ = nullptr;
  size_t num_inputs_ = 0;
  size_t num_outputs_ = 0;
  EventTracer* event_tracer_ = nullptr;
  bool initialized_ = false;
};

}  // namespace kiln
