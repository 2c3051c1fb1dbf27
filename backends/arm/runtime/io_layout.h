// Layout at the delegate boundary: how a program tensor's memory maps onto the buffer the
// NPU reads or writes.
//
// The NPU's buffer is a dense array in the order of the payload's io shape. ExecuTorch
// lowers the NCHW <-> NHWC transposes into the NPU graph, so its io shapes are the
// program's (NCHW) shapes and a plain copy is right. A payload whose io shape is the NHWC
// form of a 4-D NCHW tensor needs a permute on the CPU; a channels-last program tensor
// (dim order 0,2,3,1) is NHWC in memory and is copied as is into such a buffer. When both
// readings fit a contiguous tensor (C == H == W), the plain copy wins, as in ExecuTorch's
// runtime, unless the program says its NPU buffers are NHWC (Kiln's compile spec
// "io_layout" = "nhwc": Kiln leaves the boundary transposes to the CPU).
// Shapes are compared with their size-1 dims dropped: Vela pads io shapes to 6 dims and
// its 1s can sit between real dims ((1, 1, 1, 16, 1, 64) for a [1, 16, 64] tensor); the
// remaining dims, in order, must equal the tensor's (or its NHWC reading's).
#pragma once

#include <cstddef>
#include <cstdint>

#include "backends/arm/runtime/payload_parser.h"
#include "runtime/core/result.h"
#include "runtime/core/tensor.h"

namespace kiln::ethos_u {

enum class BoundaryCopy : uint8_t {
  /// The tensor's memory has the NPU buffer's element order: memcpy.
  Direct,
  /// Tensor memory NCHW (contiguous), NPU buffer NHWC.
  ProgramNchwNpuNhwc,
  /// Tensor memory NHWC (channels-last dim order), NPU buffer NCHW.
  ProgramNhwcNpuNchw,
};

/// The copy that maps `tensor` onto `io`; `npu_is_nhwc` settles the ambiguous case in
/// favour of the NHWC reading. DelegatePayloadIoMismatch (logged, naming `what` and
/// `index`) if the dtype does not match the element size (int8/uint8/bool: 1, int16: 2,
/// int32: 4), the element counts differ, or no layout maps one onto the other.
Result<BoundaryCopy> choose_boundary_copy(const Tensor& tensor, const PayloadIo& io,
                                          bool npu_is_nhwc, const char* what, size_t index);

/// Copies the tensor's data into the NPU buffer `npu` (tensor.nbytes() bytes).
void copy_to_npu(const Tensor& tensor, BoundaryCopy copy, uint8_t* npu);

/// Copies the NPU buffer `npu` into the tensor's data.
void copy_from_npu(const uint8_t* npu, BoundaryCopy copy, const Tensor& tensor);

}  // namespace kiln::ethos_u
