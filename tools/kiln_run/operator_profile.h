// OperatorProfile: per-operator call counts and time, fed by the method's
// InstructionObserver hook (--profile).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>

#include "runtime/executor/method.h"

namespace kiln::host {

class OperatorProfile final : public InstructionObserver {
 public:
  void on_instruction_end(size_t index, const char* op_name, uint64_t start_ticks,
                          uint64_t end_ticks) override;

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
};

}  // namespace kiln::host
