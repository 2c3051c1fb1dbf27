// EventTracer: what a Method tells a profiler or debugger while it runs — the Method's one
// tracing hook.
//
// Optional. A Method without a tracer makes no calls and reads no clock. With one
// (Method::set_event_tracer), execute() reports the run, every instruction it starts and
// ends, the kernel scratch each instruction used, and — when the tracer asks for them —
// every kernel's output value; backends report their own operations through
// BackendExecuteContext::event_tracer. The tracer reads the clock itself, so that a
// host tracer can keep nanoseconds and firmware its tick counter.
//
// Every event has a do-nothing default, so a tracer overrides only what it keeps: the
// ETDump writer (runtime/etdump/etdump_writer.h) records them all into a caller's buffer,
// the per-operator profilers (kiln-run --profile, the Arm firmware's timing table) only
// the instructions' begin and end, per-layer numerics the values (through the ETDump).
// Two tracers at once: EventTracerPair (event_tracer_pair.h).
//
// Implementations must not allocate from the heap or block: they are called on the
// execution path.
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/core/evalue.h"
#include "runtime/core/span.h"

namespace kiln {

/// An operation a delegate ran inside one delegate call (e.g. one NPU operation).
struct DelegateEvent {
  /// The operation's index within the delegate call; -1 if it has none.
  int32_t index = -1;
  /// What ran ("conv", "depthwise", ...): a string that lives as long as the program
  /// (a literal, or text in the program).
  const char* name = nullptr;
  /// Clock readings (kiln_pal_current_ticks()) around the operation; equal when the
  /// backend cannot time it.
  uint64_t start_ticks = 0;
  uint64_t end_ticks = 0;
  /// Free-form bytes describing the operation (Kiln's Ethos-U delegate: a JSON object
  /// with the NPU's counters). Copied by the tracer; may be empty.
  Span<const uint8_t> metadata;
};

class EventTracer {
 public:
  virtual ~EventTracer() = default;

  /// Method::execute of `method_name` begins / ends (`ok`: it returned Error::Ok).
  virtual void begin_run(const char* method_name) {}
  virtual void end_run(bool ok) {}

  /// Instruction `instruction_id` of chain `chain` starts / ends. `name` is the operator
  /// ("aten::add.out"), the backend id of a delegate call, or the instruction kind
  /// ("MoveCall", "JumpFalseCall", "FreeCall"); it lives as long as the method, and every
  /// call of one operator gives the same pointer. end_instruction comes right after the
  /// instruction's work, before its scratch use and value are logged.
  virtual void begin_instruction(uint32_t chain, uint32_t instruction_id, const char* name) {}
  virtual void end_instruction() {}

  /// The running instruction took `bytes` of kernel scratch (temp allocator) in all.
  virtual void log_scratch_use(size_t bytes) {}

  /// A backend ran one of its operations inside the running delegate call.
  virtual void log_delegate_event(const DelegateEvent& event) {}

  /// True when the tracer wants intermediate values (log_value calls).
  virtual bool logs_values() const { return false; }
  /// A value the running instruction produced (a kernel's output), or, from a backend,
  /// one its operation `delegate_index` produced (-1: the delegate call's own output).
  /// The tracer copies what it keeps. Called only when logs_values().
  virtual void log_value(const EValue& value, int32_t delegate_index) {}
  /// Like log_value for a tensor a backend produces in its own layout (an NPU feature
  /// map): logs a `dtype` tensor of `sizes` made by operation `delegate_index` (`name`
  /// as in DelegateEvent) and returns the tracer's memory for its bytes (row-major,
  /// contiguous), which the caller fills before its next call to the tracer. Empty when
  /// the tracer keeps no values or has no room left.
  virtual Span<uint8_t> log_tensor_in_place(ScalarType dtype, Span<const int32_t> sizes,
                                            int32_t delegate_index, const char* name) {
    return {};
  }
};

}  // namespace kiln
