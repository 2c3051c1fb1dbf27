// Per-operator timing for the runner's --profile table.
#include "tools/kiln_run/operator_profile.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "runtime/platform/platform.h"
#include "tools/kiln_run/printable.h"

namespace kiln::host {

void OperatorProfile::begin_instruction(uint32_t chain, uint32_t instruction_id, const char* name) {
  running_ = name;
  start_ticks_ = kiln_pal_current_ticks();
}

void OperatorProfile::end_instruction() {
  const uint64_t end_ticks = kiln_pal_current_ticks();
  Entry& entry = entries_[running_ != nullptr ? running_ : "(unnamed)"];
  entry.calls += 1;
  entry.total_ns += ticks_to_ns(end_ticks - start_ticks_);
}

void OperatorProfile::print(uint64_t iterations) const {
  // Equal names at different addresses (e.g. two operator tables) become one row.
  std::map<std::string, Entry> by_name;
  for (const auto& [name, entry] : entries_) {
    Entry& merged = by_name[name];
    merged.calls += entry.calls;
    merged.total_ns += entry.total_ns;
  }
  std::vector<std::pair<std::string, Entry>> rows(by_name.begin(), by_name.end());
  std::sort(rows.begin(), rows.end(),
            [](const auto& a, const auto& b) { return a.second.total_ns > b.second.total_ns; });
  uint64_t all_ns = 0;
  for (const auto& row : rows) all_ns += row.second.total_ns;
  std::printf("per-operator time over %" PRIu64 " iteration(s):\n", iterations);
  std::printf("  %-48s %8s %12s %7s\n", "operator", "calls", "total ms", "share");
  for (const auto& [name, entry] : rows) {
    const double share =
        all_ns == 0 ? 0.0 : 100.0 * static_cast<double>(entry.total_ns) / static_cast<double>(all_ns);
    // Operator names come from the program: escaped.
    std::printf("  %-48s %8" PRIu64 " %12.3f %6.1f%%\n", printable(name).c_str(), entry.calls,
                static_cast<double>(entry.total_ns) / 1e6, share);
  }
}

}  // namespace kiln::host
