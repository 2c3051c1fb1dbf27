// Registration of the portable CPU kernels.
#pragma once

#include "runtime/core/error.h"

namespace kiln {

/// Adds every portable kernel (see kernels/portable/op_table.yaml) to the kernel
/// registry. Call once before loading methods; a second call fails with
/// RegistrationAlreadyRegistered.
///
/// Generated at build time from op_table.yaml (tools/codegen/gen_registration.py) into
/// kiln::kernels_portable; it registers no Cortex-M kernel. Runners register both CPU
/// libraries with register_cpu_kernels() (kernels/register_cpu_kernels.h), which a
/// selective build (KILN_SELECT_OPS_*) replaces with the selected kernels of both
/// (tools/cmake/KilnSelectiveBuild.cmake).
Error register_portable_kernels();

}  // namespace kiln
