// Registration of the Cortex-M int8 kernels (kernels/cortex_m/op_table.yaml).
#pragma once

#include "runtime/core/error.h"

namespace kiln {

/// Registers every cortex_m:: kernel (and no portable one), in the flavour this build was
/// compiled for. Link kiln::kernels_cortex_m. Runners register both CPU libraries with
/// register_cpu_kernels() (kernels/register_cpu_kernels.h), which a selective build
/// replaces with the selected kernels of both.
Error register_cortex_m_kernels();

}  // namespace kiln
