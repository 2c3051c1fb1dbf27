// OperatorTiming: per-operator and per-delegate time of one inference, from the tick
// counter the platform gives the runtime (the SSE-300 system counter). It also keeps
// the board's "activity" pointing at the instruction about to run, so that a fault
// report names the operator that was running.
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/executor/method.h"
#include "runtime/executor/method_meta.h"

namespace kiln::firmware {

class OperatorTiming final : public InstructionObserver {
 public:
  /// Distinct operator/delegate names kept; further ones are summed under "(other)".
  static constexpr size_t kMaxEntries = 48;

  explicit OperatorTiming(const MethodMeta& meta) : meta_(meta) {}

  /// Points the fault report at instruction 0; call right before execute().
  void start();
  /// Stops naming instructions in fault reports; call after execute().
  void stop();
  void on_instruction_end(size_t index, const char* op_name, uint64_t start_ticks,
                          uint64_t end_ticks) override;

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
  /// The instruction running now (the one after the last that ended).
  size_t running_ = 0;
};

}  // namespace kiln::firmware
