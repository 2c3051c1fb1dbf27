// Registration of the Cortex-M int8 kernels (kernels/cortex_m/op_table.yaml).
#pragma once

#include "runtime/core/error.h"

namespace kiln {

/// Registers every cortex_m:: kernel, in the flavour this build was compiled for. Link
/// kiln::kernels_cortex_m. A selective build (KILN_SELECT_OPS_*, or a firmware with
/// SELECTIVE) layers the cortex_m and portable tables into one generated library whose
/// register_portable_kernels() registers the selected kernels of both; its
/// register_cortex_m_kernels() then has nothing left to register and returns Ok.
Error register_cortex_m_kernels();

}  // namespace kiln
