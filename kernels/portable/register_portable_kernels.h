// Registration of the portable CPU kernels.
#pragma once

#include "runtime/core/error.h"

namespace kiln {

/// Adds every portable kernel (see kernels/portable/op_table.yaml) to the kernel
/// registry. Call once before loading methods; a second call fails with
/// RegistrationAlreadyRegistered.
Error register_portable_kernels();

}  // namespace kiln
