// The Method's calls into its EventTracer (event_tracer.h), kept apart from the
// instruction loop so that execute() stays one line per hook.
#include "runtime/executor/method.h"
#include "runtime/executor/method_layout.h"

namespace kiln {

size_t Method::temp_bytes_used() const {
  return memory_.temp_allocator != nullptr ? memory_.temp_allocator->used() : 0;
}

void Method::trace_instruction_end(size_t pc, size_t scratch_bytes) {
  // The end time first: logging values copies data, which is not the instruction's time.
  event_tracer_->end_instruction();
  event_tracer_->log_scratch_use(scratch_bytes);
  const internal::PreparedInstruction& instruction = instructions_[pc];
  // A kernel's last argument is its result (the out tensor, or the list of outs).
  if (instruction.kind == internal::PreparedInstruction::Kind::Kernel && event_tracer_->logs_values() &&
      instruction.args.size() > 0 && instruction.args[instruction.args.size() - 1] != nullptr) {
    event_tracer_->log_value(*instruction.args[instruction.args.size() - 1], -1);
  }
}

}  // namespace kiln
