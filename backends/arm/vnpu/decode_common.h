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

// The kernel registers' field widths, the same in the Ethos-U55/U65 and the Ethos-U85
// interface (Arm's interface headers, as Vela 5.2 and the core driver carry them):
// KERNEL_HEIGHT_M1 / KERNEL_WIDTH_M1 16 bits (a dilated extent of 1..65536), IFM_PAD_TOP /
// IFM_PAD_LEFT 7 bits, IFM_PAD_BOTTOM / IFM_PAD_RIGHT 8 bits, KERNEL_STRIDE a stride of 1..4
// (low bits 0/1, high bits 6/9) and a dilation of 1..2 per axis (bits 3/4), bit 2 the weight
// order, bit 5 the (Ethos-U85) decomposition, the rest reserved. Vela keeps inside them: it
// decomposes strides above 3 and dilations above 2 and refuses axes above 65536 and average
// pooling with padding over 8x8; unpadded pooling kernels are as wide as the IFM (1x197
// for a ViT's token pooling).
constexpr uint32_t kMaxKernelExtentM1 = 0xffff;
constexpr uint32_t kMaxPadTopLeft = 127;
constexpr uint32_t kMaxPadBottomRight = 255;
constexpr uint32_t kKernelStrideReservedBits = 0xfd80;  // bits 7-8 and 10-15

/// Fills the kernel's undilated size and padding from the KERNEL_*_M1 registers (dilated
/// extent minus one) once stride and dilation are set; NpuInvalidRegister for an extent that
/// is not a multiple of the dilation or a kernel/padding outside the fields above.
Error finish_kernel(uint32_t height_m1, uint32_t width_m1, uint32_t pad_top, uint32_t pad_left,
                    uint32_t pad_bottom, uint32_t pad_right, KernelGeometry* k);

/// KERNEL_STRIDE → stride, dilation and weight order (bit 5, the decomposition, is the
/// caller's); NpuInvalidRegister when a reserved bit is set.
Error decode_kernel_stride(uint32_t param, KernelGeometry* k, bool* part_kernel_first);

/// NpuInvalidRegister (with a log line naming `what`) for a scaling whose shift cannot be
/// applied: every shift field is 6 bits, but a rounding step at bit 63 overflows.
Error check_shift(const Scaling& s, const char* what);

}  // namespace kiln::vnpu
