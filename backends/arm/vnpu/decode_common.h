// Register decoding steps that every architecture's decoder shares (same field meaning,
// possibly at different positions).
#pragma once

#include <cstdint>

#include "backends/arm/vnpu/op_desc.h"
#include "runtime/core/error.h"

namespace kiln::vnpu {

/// A zero-point register read for an input of `type`: sign-extended for signed types, as
/// is for unsigned ones; 32/64-bit inputs have none.
int32_t zero_point_of(ElemType type, uint16_t raw);

/// IFM_UPSCALE mode field (0 none, 1 nearest, 2 zeros/transpose); 3 is reserved.
Error decode_upscale(uint32_t field, UpscaleMode* mode);

/// Fills the kernel's undilated size and padding from the KERNEL_*_M1 registers (dilated
/// extent minus one) once stride and dilation are set; NpuInvalidRegister for an extent that
/// is not a multiple of the dilation or a kernel/padding the NPU cannot have.
Error finish_kernel(uint32_t height_m1, uint32_t width_m1, uint32_t pad_top, uint32_t pad_left,
                    uint32_t pad_bottom, uint32_t pad_right, KernelGeometry* k);

/// NpuInvalidRegister (with a log line naming `what`) for a scaling whose shift cannot be
/// applied: every shift field is 6 bits, but a rounding step at bit 63 overflows.
Error check_shift(const Scaling& s, const char* what);

}  // namespace kiln::vnpu
