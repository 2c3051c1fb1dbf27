// What every operation implementation gets: the registers, the regions, the internal memory
// (LUTs), work memory, the architecture, and the record to fill (MACs, bytes).
// One file per operation kind in this folder implements run_<kind>(OpContext&).
#pragma once

#include <cstdint>

#include "backends/arm/vnpu/feature_map.h"
#include "backends/arm/vnpu/output_stage.h"
#include "backends/arm/vnpu/register_file.h"
#include "backends/arm/vnpu/scratch_arena.h"
#include "backends/arm/vnpu/virtual_npu.h"
#include "runtime/core/error.h"
#include "runtime/core/span.h"

namespace kiln::vnpu {

struct OpContext {
  const RegisterFile& regs;
  Span<const Region> regions;
  /// SHRAM image; LUTs live at lut_offset + 256 * n.
  Span<uint8_t> internal_memory;
  size_t lut_offset;
  ScratchArena& scratch;
  const Config& config;
  /// The cmd0 parameter of the operation command (pooling/elementwise mode).
  uint16_t param;
  /// MACs/element steps this operation may still use before the stream's budget runs out.
  uint64_t work_budget;
  OpRecord record;
  /// Counters of bytes per region (region index, kMaxRegions = internal memory).
  uint64_t* bytes_read;
  uint64_t* bytes_written;
};

/// Builds the output stage (rounding, zero point, clipping, LUT) from the registers and the
/// OFM type. NpuInvalidRegister for a LUT activation that cannot be used.
Error make_output_stage(const OpContext& ctx, const FeatureMap& ofm, OutputStage* stage);

/// Logical OFM height/width/depth from the registers.
struct OfmShape {
  uint32_t height, width, depth;
};
OfmShape ofm_shape(const RegisterFile& regs);

/// Kernel geometry: undilated size, stride, dilation, padding.
struct KernelGeometry {
  uint32_t height, width;        // undilated taps
  uint32_t stride_y, stride_x;
  uint32_t dilation_y, dilation_x;
  int32_t pad_top, pad_left, pad_bottom, pad_right;
  bool part_kernel_first;
};
Error kernel_geometry(const RegisterFile& regs, KernelGeometry* k);

/// Charges `work` steps to the budget; NpuWorkLimitExceeded if it does not fit.
Error charge_work(OpContext& ctx, uint64_t work, const char* what);

/// Reads the 10-byte scale/bias entries for `count` channels of the op (SCALE_REGION/BASE/
/// LENGTH) into bias/scale/shift arrays from scratch.
struct ChannelScales {
  const int64_t* bias;
  const uint32_t* scale;
  const uint8_t* shift;
};
Error read_channel_scales(OpContext& ctx, uint32_t count, ChannelScales* out);

Error run_conv(OpContext& ctx);
Error run_depthwise(OpContext& ctx);
Error run_pool(OpContext& ctx);
Error run_elementwise(OpContext& ctx);
Error run_dma(OpContext& ctx);

}  // namespace kiln::vnpu
