// Command line of kiln-run (the C++ host runner; see print_usage for the flags).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace kiln::host {

/// Exit status: 0 success, 1 a runtime or file Error, 2 a malformed command line.
constexpr int kExitRuntimeError = 1;
constexpr int kExitUsage = 2;
/// Kernel scratch (temp allocator) bytes unless --temp-bytes says otherwise.
constexpr size_t kDefaultTempBytes = 1 << 20;
/// Bounds of the numeric flags: every timing is kept (8 bytes each), and a temp
/// allocator beyond 1 TiB is a typo, not a plan.
constexpr uint64_t kMaxIterations = 10000000;
constexpr uint64_t kMaxTempBytes = uint64_t{1} << 40;

struct Options {
  std::string program_path;
  std::vector<std::string> input_paths;
  /// Created, with its parents, when missing.
  std::string output_dir = ".";
  std::string method_name;  // empty: "forward" if present, else the first method
  uint64_t iterations = 1;
  size_t temp_bytes = kDefaultTempBytes;
  bool profile = false;
  bool verbose = false;
};

void print_usage(FILE* out);

/// Fills `options` from argv; sets `help` for -h/--help. Returns false for a malformed
/// command line after printing one line saying why on stderr ("kiln-run: ...").
bool parse_options(int argc, char** argv, Options* options, bool* help);

/// `text` as a decimal integer in [minimum, maximum]: digits only (no sign, no spaces),
/// without overflow. False otherwise.
bool parse_bounded_unsigned(const char* text, uint64_t minimum, uint64_t maximum, uint64_t* out);

}  // namespace kiln::host
