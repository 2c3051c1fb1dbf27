// EventTracerPair: one EventTracer that hands every event to two others, for a run that
// is both profiled and recorded (kiln-run --profile --etdump; the Arm firmware's timing
// table beside its ETDump). The Method has one tracing hook; this is how two users share it.
#pragma once

#include "runtime/executor/event_tracer.h"

namespace kiln {

class EventTracerPair final : public EventTracer {
 public:
  /// Either may be nullptr (then the other gets everything). Both must outlive the pair.
  EventTracerPair(EventTracer* first, EventTracer* second) : first_(first), second_(second) {}

  void begin_run(const char* method_name) override;
  void end_run(bool ok) override;
  void begin_instruction(uint32_t chain, uint32_t instruction_id, const char* name) override;
  void end_instruction() override;
  void log_scratch_use(size_t bytes) override;
  void log_delegate_event(const DelegateEvent& event) override;
  bool logs_values() const override;
  /// To each tracer that logs values.
  void log_value(const EValue& value, int32_t delegate_index) override;
  /// The memory of the first tracer that logs values (one caller fills one buffer).
  Span<uint8_t> log_tensor_in_place(ScalarType dtype, Span<const int32_t> sizes, int32_t delegate_index,
                                    const char* name) override;

 private:
  EventTracer* first_;
  EventTracer* second_;
};

}  // namespace kiln
