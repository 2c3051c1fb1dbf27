// OperatorProfile: per-operator call counts and time, an EventTracer on the method's
// tracing hook that keeps only the instructions' begin and end (--profile).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>

#include "runtime/executor/event_tracer.h"

namespace kiln::host {

class OperatorProfile final : public EventTracer {
 public:
  void begin_instruction(uint32_t chain, uint32_t instruction_id, const char* name) override;
  void end_instruction() override;

  /// Prints one row per operator, most time first.
  void print(uint64_t iterations) const;

 private:
  struct Entry {
    uint64_t calls = 0;
    uint64_t total_ns = 0;
  };
  // Keyed by the name's address (stable for the program's lifetime), so that the
  // observer does no string work between instructions; merged by text when printed.
  std::map<const char*, Entry> entries_;
  // The running instruction's name and start (kiln_pal_current_ticks()).
  const char* running_ = nullptr;
  uint64_t start_ticks_ = 0;
};

}  // namespace kiln::host
