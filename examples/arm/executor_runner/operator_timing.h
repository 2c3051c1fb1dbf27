// OperatorTiming: per-operator and per-delegate time of one inference, from the tick
// counter the platform gives the runtime (the SSE-300 system counter): an EventTracer on
// the method's tracing hook that keeps only the instructions' begin and end. It also keeps
// the board's "activity" pointing at the running instruction, so that a fault report
// names the operator that was running.
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/executor/event_tracer.h"
#include "runtime/executor/method_meta.h"

namespace kiln::firmware {

class OperatorTiming final : public EventTracer {
 public:
  /// Distinct operator/delegate names kept; further ones are summed under "(other)".
  static constexpr size_t kMaxEntries = 48;

  explicit OperatorTiming(const MethodMeta& meta) : meta_(meta) {}

  /// Points the fault report at instruction 0; call right before execute().
  void start();
  /// Stops naming instructions in fault reports; call after execute().
  void stop();
  void begin_instruction(uint32_t chain, uint32_t instruction_id, const char* name) override;
  void end_instruction() override;

  /// Prints one line per operator and per delegate (calls, ticks, ~instructions).
  void print() const;
  uint64_t total_ticks() const { return total_ticks_; }

 private:
  struct Entry {
    const char* name;
    bool is_delegate;
    uint32_t calls;
    uint64_t ticks;
  };
  /// Writes "instruction <i> (<operator>)" for the fault report (board.h describer).
  static void describe_running(void* self, char* buffer, size_t size);

  const MethodMeta& meta_;
  Entry entries_[kMaxEntries] = {};
  size_t num_entries_ = 0;
  uint64_t total_ticks_ = 0;
  /// The instruction running now (or the next to run), its name and start tick.
  size_t running_ = 0;
  const char* running_name_ = nullptr;
  uint64_t start_ticks_ = 0;
};

}  // namespace kiln::firmware
