// Forwarding of every event to both tracers, the first one first.
#include "runtime/executor/event_tracer_pair.h"

namespace kiln {

void EventTracerPair::begin_run(const char* method_name) {
  if (first_ != nullptr) first_->begin_run(method_name);
  if (second_ != nullptr) second_->begin_run(method_name);
}

void EventTracerPair::end_run(bool ok) {
  if (first_ != nullptr) first_->end_run(ok);
  if (second_ != nullptr) second_->end_run(ok);
}

void EventTracerPair::begin_instruction(uint32_t chain, uint32_t instruction_id, const char* name) {
  if (first_ != nullptr) first_->begin_instruction(chain, instruction_id, name);
  if (second_ != nullptr) second_->begin_instruction(chain, instruction_id, name);
}

void EventTracerPair::end_instruction() {
  if (first_ != nullptr) first_->end_instruction();
  if (second_ != nullptr) second_->end_instruction();
}

void EventTracerPair::log_scratch_use(size_t bytes) {
  if (first_ != nullptr) first_->log_scratch_use(bytes);
  if (second_ != nullptr) second_->log_scratch_use(bytes);
}

void EventTracerPair::log_delegate_event(const DelegateEvent& event) {
  if (first_ != nullptr) first_->log_delegate_event(event);
  if (second_ != nullptr) second_->log_delegate_event(event);
}

bool EventTracerPair::logs_values() const {
  return (first_ != nullptr && first_->logs_values()) || (second_ != nullptr && second_->logs_values());
}

void EventTracerPair::log_value(const EValue& value, int32_t delegate_index) {
  if (first_ != nullptr && first_->logs_values()) first_->log_value(value, delegate_index);
  if (second_ != nullptr && second_->logs_values()) second_->log_value(value, delegate_index);
}

Span<uint8_t> EventTracerPair::log_tensor_in_place(ScalarType dtype, Span<const int32_t> sizes,
                                                   int32_t delegate_index, const char* name) {
  if (first_ != nullptr && first_->logs_values()) {
    return first_->log_tensor_in_place(dtype, sizes, delegate_index, name);
  }
  if (second_ != nullptr && second_->logs_values()) {
    return second_->log_tensor_in_place(dtype, sizes, delegate_index, name);
  }
  return {};
}

}  // namespace kiln
