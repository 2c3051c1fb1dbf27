// Every CPU kernel: the portable library and the Cortex-M library, each registered by its
// own generated function (the op names do not overlap: aten:: and quantized_decomposed::
// against cortex_m::).
#include "kernels/register_cpu_kernels.h"

#include "kernels/cortex_m/register_cortex_m_kernels.h"
#include "kernels/portable/register_portable_kernels.h"
#include "runtime/core/result.h"

namespace kiln {

Error register_cpu_kernels() {
  KILN_TRY(register_portable_kernels());
  return register_cortex_m_kernels();
}

}  // namespace kiln
