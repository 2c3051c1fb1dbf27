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
/// ETDump memory unless --etdump-bytes says otherwise: ~23,000 events (mv2 on the
/// portable kernels records ~160 per run, on the virtual NPU ~110).
constexpr size_t kDefaultEtdumpBytes = size_t{8} << 20;
/// Intermediate-value memory unless --debug-buffer-bytes says otherwise (every
/// intermediate of one fp32 mv2 run takes ~45 MB).
constexpr size_t kDefaultDebugBufferBytes = size_t{64} << 20;
/// Default tolerance of bundled test cases (ExecuTorch's defaults).
constexpr double kDefaultBundleRtol = 1e-5;
constexpr double kDefaultBundleAtol = 1e-8;

struct Options {
  std::string program_path;
  std::vector<std::string> input_paths;
  /// Created, with its parents, when missing.
  std::string output_dir = ".";
  std::string method_name;  // empty: "forward" if present, else the first method
  uint64_t iterations = 1;
  /// Threads of the XNNPACK delegate's pool (--threads; 1: the calling thread only).
  uint64_t threads = 1;
  size_t temp_bytes = kDefaultTempBytes;
  /// --fill-planned: the byte written over the planned buffers before the method loads
  /// (-1: left as allocated).
  int fill_planned = -1;
  bool profile = false;
  bool verbose = false;
  /// --etdump: where the ETDump goes (empty: none recorded).
  std::string etdump_path;
  size_t etdump_bytes = kDefaultEtdumpBytes;
  /// --debug-buffer: where intermediate values go (empty: none recorded).
  std::string debug_buffer_path;
  size_t debug_buffer_bytes = kDefaultDebugBufferBytes;
  /// Tolerance of a bundled program's test cases: |actual - expected| <= atol + rtol * |expected|.
  double bundle_rtol = kDefaultBundleRtol;
  double bundle_atol = kDefaultBundleAtol;
};

void print_usage(FILE* out);

/// Fills `options` from argv; sets `help` for -h/--help. Returns false for a malformed
/// command line after printing one line saying why on stderr ("kiln-run: ...").
bool parse_options(int argc, char** argv, Options* options, bool* help);

/// `text` as a decimal integer in [minimum, maximum]: digits only (no sign, no spaces),
/// without overflow. False otherwise.
bool parse_bounded_unsigned(const char* text, uint64_t minimum, uint64_t maximum, uint64_t* out);

/// `text` as a finite, non-negative decimal number (e.g. "1e-3"). False otherwise.
bool parse_tolerance(const char* text, double* out);

}  // namespace kiln::host
