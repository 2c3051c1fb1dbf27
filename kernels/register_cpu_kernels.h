// Registration of the CPU kernels a runner is built with.
#pragma once

#include "runtime/core/error.h"

namespace kiln {

/// Registers the CPU kernels this binary links, portable and Cortex-M together. Defined
/// by whichever CPU kernel set the binary links:
/// - kiln::kernels_cpu (register_cpu_kernels.cpp): every portable and every Cortex-M kernel;
/// - a selective build (KILN_SELECT_OPS_*, or a firmware with SELECTIVE): a library
///   generated from both op tables (tools/cmake/KilnSelectiveBuild.cmake, NAME cpu) that
///   registers only the selected kernels.
/// Runners (kiln-run, the Arm firmware, the Python extension) call this one function.
/// Call once before loading methods; a second call fails with RegistrationAlreadyRegistered.
Error register_cpu_kernels();

}  // namespace kiln
