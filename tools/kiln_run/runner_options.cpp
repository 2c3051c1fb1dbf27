// Command-line parsing for kiln-run.
#include "tools/kiln_run/runner_options.h"

#include <cinttypes>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "tools/kiln_run/printable.h"

namespace kiln::host {

void print_usage(FILE* out) {
  std::fprintf(out,
               "usage: kiln-run PROGRAM.pte|BUNDLE.bpte [--input x.npy|NUMBER ...] [--output-dir DIR]\n"
               "                [--iterations N] [--method NAME] [--temp-bytes N] [--threads N]\n"
               "                [--fill-planned BYTE] [--profile] [--verbose] [--etdump FILE [--etdump-bytes N]]\n"
               "                [--debug-buffer FILE [--debug-buffer-bytes N]] [--rtol X] [--atol X]\n"
               "\n"
               "Runs one method of a Kiln/ExecuTorch .pte program with the portable kernels\n"
               "(Ethos-U delegates on Kiln's virtual NPU, XNNPACK delegates with XNNPACK). Given a bundled program (.bpte), runs\n"
               "every test case of the method and prints PASS/FAIL with the error per output\n"
               "(exit status 1 when a case fails).\n"
               "  --input VALUE     per method input, in order (repeat the flag): a .npy file for\n"
               "                    a tensor, the number for an int/float/bool input (3, 0.5,\n"
               "                    true); without it tensors get deterministic values and\n"
               "                    numbers the program's\n"
               "  --output-dir DIR  where output_<i>.npy files go, created if missing (default: .)\n"
               "  --iterations N    executions to time, 1 to %" PRIu64 " (default 1)\n"
               "  --method NAME     method to run (default: forward, else the first)\n"
               "  --temp-bytes N    kernel scratch allocator size, up to 2^40 (default 1 MiB)\n"
               "  --threads N       threads for XNNPACK delegates, 1 to 64 (default 1)\n"
               "  --fill-planned BYTE  write BYTE (0 to 255) over the planned memory before the\n"
               "                    method loads: outputs that change with it read memory the\n"
               "                    program never wrote\n"
               "  --profile         per-operator time table\n"
               "  --verbose         show the runtime's info messages\n"
               "  --etdump FILE     record an ETDump (profiling: every instruction, NPU operation\n"
               "                    and kernel scratch use; times in ns) into FILE\n"
               "  --etdump-bytes N  memory for the ETDump (default 8 MiB; when full, recording\n"
               "                    stops and the dropped events are counted)\n"
               "  --debug-buffer FILE  also record every intermediate value (kernel outputs, NPU\n"
               "                    operation outputs) into FILE, which the ETDump points into\n"
               "  --debug-buffer-bytes N  memory for the intermediate values (default 64 MiB)\n"
               "  --rtol X, --atol X  tolerance of bundled test cases (default 1e-5, 1e-8):\n"
               "                    |actual - expected| <= atol + rtol * |expected|\n"
               "exit status: 0 ok, 1 runtime/file error, 2 bad command line\n",
               kMaxIterations);
}

bool parse_bounded_unsigned(const char* text, uint64_t minimum, uint64_t maximum, uint64_t* out) {
  uint64_t value = 0;
  if (*text == '\0') return false;
  for (const char* p = text; *p != '\0'; ++p) {
    if (*p < '0' || *p > '9') return false;
    if (__builtin_mul_overflow(value, uint64_t{10}, &value) ||
        __builtin_add_overflow(value, static_cast<uint64_t>(*p - '0'), &value)) {
      return false;
    }
  }
  if (value < minimum || value > maximum) return false;
  *out = value;
  return true;
}

bool parse_tolerance(const char* text, double* out) {
  if (*text == '\0' || std::strchr(text, ' ') != nullptr) return false;
  char* end = nullptr;
  const double value = std::strtod(text, &end);
  if (end == nullptr || *end != '\0' || !std::isfinite(value) || value < 0.0) return false;
  *out = value;
  return true;
}

bool parse_options(int argc, char** argv, Options* options, bool* help) {
  // One line per problem; the full usage is for --help.
  auto fail = [](const std::string& why) {
    std::fprintf(stderr, "kiln-run: %s (kiln-run --help for usage)\n", why.c_str());
    return false;
  };
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    auto need_value = [&]() { return has_value || fail(arg + " needs a value"); };
    auto parse_count = [&](uint64_t minimum, uint64_t maximum, uint64_t* out) {
      const char* text = argv[++i];
      if (parse_bounded_unsigned(text, minimum, maximum, out)) return true;
      return fail(arg + " needs an integer from " + std::to_string(minimum) + " to " +
                  std::to_string(maximum) + ", got '" + printable(text, std::strlen(text)) + "'");
    };
    uint64_t count = 0;
    if (arg == "-h" || arg == "--help") {
      *help = true;
    } else if (arg == "--input") {
      if (!need_value()) return false;
      options->input_paths.push_back(argv[++i]);
    } else if (arg == "--output-dir") {
      if (!need_value()) return false;
      options->output_dir = argv[++i];
    } else if (arg == "--method") {
      if (!need_value()) return false;
      options->method_name = argv[++i];
    } else if (arg == "--iterations") {
      if (!need_value() || !parse_count(1, kMaxIterations, &count)) return false;
      options->iterations = count;
    } else if (arg == "--temp-bytes") {
      if (!need_value() || !parse_count(0, kMaxTempBytes, &count)) return false;
      options->temp_bytes = static_cast<size_t>(count);
    } else if (arg == "--fill-planned") {
      if (!need_value() || !parse_count(0, 255, &count)) return false;
      options->fill_planned = static_cast<int>(count);
    } else if (arg == "--threads") {
      if (!need_value() || !parse_count(1, 64, &count)) return false;
      options->threads = count;
    } else if (arg == "--etdump") {
      if (!need_value()) return false;
      options->etdump_path = argv[++i];
    } else if (arg == "--debug-buffer") {
      if (!need_value()) return false;
      options->debug_buffer_path = argv[++i];
    } else if (arg == "--etdump-bytes" || arg == "--debug-buffer-bytes") {
      if (!need_value() || !parse_count(4096, kMaxTempBytes, &count)) return false;
      (arg == "--etdump-bytes" ? options->etdump_bytes : options->debug_buffer_bytes) = static_cast<size_t>(count);
    } else if (arg == "--rtol" || arg == "--atol") {
      if (!need_value()) return false;
      const char* text = argv[++i];
      if (!parse_tolerance(text, arg == "--rtol" ? &options->bundle_rtol : &options->bundle_atol)) {
        return fail(arg + " needs a finite number >= 0, got '" + printable(text, std::strlen(text)) + "'");
      }
    } else if (arg == "--profile") {
      options->profile = true;
    } else if (arg == "--verbose") {
      options->verbose = true;
    } else if (!arg.empty() && arg[0] == '-') {
      return fail("unknown option " + printable(arg));
    } else if (options->program_path.empty()) {
      options->program_path = arg;
    } else {
      return fail("more than one program given (" + printable(arg) + ")");
    }
  }
  if (!*help && options->program_path.empty()) return fail("no program given");
  if (!options->debug_buffer_path.empty() && options->etdump_path.empty()) {
    return fail("--debug-buffer needs --etdump (the ETDump says where each value is)");
  }
  return true;
}

}  // namespace kiln::host
