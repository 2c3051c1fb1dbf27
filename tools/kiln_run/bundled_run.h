// kiln-run on a bundled program (.bpte): runs every test case of the chosen method and
// prints PASS/FAIL with the error of each output.
#pragma once

#include <string>

#include "tools/kiln_run/runner_common.h"
#include "tools/kiln_run/runner_options.h"

namespace kiln::host {

/// True if the file at `path` starts like a bundled program ("BP08" at bytes 4-7).
bool is_bundled_program_file(const std::string& path);

/// Runs the bundle's test cases. Exit status: 0 when all pass, kExitRuntimeError when one
/// fails or the runtime reports an error.
int run_bundled_program(const Options& options, LogCapture& capture);

}  // namespace kiln::host
