// Command line of kiln_executor_runner (see print_usage for the flags).
#pragma once

#include <cstddef>
#include <cstdio>
#include <string>
#include <vector>

namespace kiln::host {

/// Exit status: 0 success, 1 a runtime or file Error, 2 a malformed command line.
constexpr int kExitRuntimeError = 1;
constexpr int kExitUsage = 2;
/// Kernel scratch (temp allocator) bytes unless --temp-bytes says otherwise.
constexpr size_t kDefaultTempBytes = 1 << 20;

struct Options {
  std::string program_path;
  std::vector<std::string> input_paths;
  std::string output_dir = ".";
  std::string method_name;  // empty: "forward" if present, else the first method
  long iterations = 1;
  size_t temp_bytes = kDefaultTempBytes;
  bool profile = false;
  bool verbose = false;
};

void print_usage(FILE* out);

/// Fills `options` from argv; sets `help` for -h/--help. Returns false (after printing
/// why on stderr) for a malformed command line.
bool parse_options(int argc, char** argv, Options* options, bool* help);

}  // namespace kiln::host
