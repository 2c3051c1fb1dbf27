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

void OperatorProfile::on_instruction_end(size_t index, const char* op_name,
                                         uint64_t start_ticks, uint64_t end_ticks) {
  Entry& entry = entries_[op_name != nullptr ? op_name : "(unnamed)"];
  entry.calls += 1;
  entry.total_ns += ticks_to_ns(end_ticks - start_ticks);
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
