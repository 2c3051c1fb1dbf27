// Registration of the portable CPU kernels.
#pragma once

#include "runtime/core/error.h"

namespace kiln {

/// Adds every portable kernel (see kernels/portable/op_table.yaml) to the kernel
/// registry. Call once before loading methods; a second call fails with
/// RegistrationAlreadyRegistered.
///
/// Generated at build time from op_table.yaml (tools/codegen/gen_registration.py) into
/// kiln::kernels_portable. A selective build (KILN_SELECT_OPS_*) links runners with
/// kiln::kernels_selected instead, whose generated register_portable_kernels() registers
/// only the selected kernels (tools/cmake/KilnSelectiveBuild.cmake).
Error register_portable_kernels();

}  // namespace kiln
