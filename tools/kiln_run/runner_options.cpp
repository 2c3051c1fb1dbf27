// Command-line parsing for kiln_executor_runner.
#include "examples/host/runner_options.h"

#include <cstdlib>

namespace kiln::host {

void print_usage(FILE* out) {
  std::fprintf(out,
               "usage: kiln_executor_runner PROGRAM.pte [--input x.npy ...] [--output-dir DIR]\n"
               "                            [--iterations N] [--method NAME] [--temp-bytes N]\n"
               "                            [--profile] [--verbose]\n"
               "\n"
               "Runs one method of a Kiln/ExecuTorch .pte program with the portable kernels.\n"
               "  --input FILE      a .npy file per method input, in order (repeat the flag);\n"
               "                    without it the inputs get deterministic values\n"
               "  --output-dir DIR  where output_<i>.npy files go (default: .)\n"
               "  --iterations N    executions to time (default 1)\n"
               "  --method NAME     method to run (default: forward, else the first)\n"
               "  --temp-bytes N    kernel scratch allocator size (default 1 MiB)\n"
               "  --profile         per-operator time table\n"
               "  --verbose         show the runtime's info messages\n"
               "exit status: 0 ok, 1 runtime/file error, 2 bad command line\n");
}

bool parse_options(int argc, char** argv, Options* options, bool* help) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    auto need_value = [&]() {
      if (!has_value) std::fprintf(stderr, "kiln_executor_runner: %s needs a value\n", argv[i]);
      return has_value;
    };
    auto parse_count = [&](const char* text, unsigned long long minimum, unsigned long long* out) {
      char* end = nullptr;
      *out = std::strtoull(text, &end, 10);
      if (end == text || *end != '\0' || *out < minimum || text[0] == '-') {
        std::fprintf(stderr, "kiln_executor_runner: %s needs an integer >= %llu, got '%s'\n",
                     arg.c_str(), minimum, text);
        return false;
      }
      return true;
    };
    unsigned long long count = 0;
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
      if (!need_value() || !parse_count(argv[++i], 1, &count)) return false;
      options->iterations = static_cast<long>(count);
    } else if (arg == "--temp-bytes") {
      if (!need_value() || !parse_count(argv[++i], 0, &count)) return false;
      options->temp_bytes = static_cast<size_t>(count);
    } else if (arg == "--profile") {
      options->profile = true;
    } else if (arg == "--verbose") {
      options->verbose = true;
    } else if (!arg.empty() && arg[0] == '-') {
      std::fprintf(stderr, "kiln_executor_runner: unknown option %s\n", arg.c_str());
      return false;
    } else if (options->program_path.empty()) {
      options->program_path = arg;
    } else {
      std::fprintf(stderr, "kiln_executor_runner: more than one program given (%s)\n",
                   arg.c_str());
      return false;
    }
  }
  if (!*help && options->program_path.empty()) {
    std::fprintf(stderr, "kiln_executor_runner: no program given\n");
    return false;
  }
  return true;
}

}  // namespace kiln::host
