// What every operation implementation gets: the decoded operation, the regions, the
// internal memory (LUTs), the state the NPU keeps between operations (chaining buffers,
// accumulators), work memory, and the record to fill (MACs, bytes).
// One file per operation kind in this folder implements run_<kind>(OpContext&).
#pragma once

#include <cstdint>

#include "backends/arm/vnpu/feature_map.h"
#include "backends/arm/vnpu/op_desc.h"
#include "backends/arm/vnpu/output_stage.h"
#include "backends/arm/vnpu/scratch_arena.h"
#include "backends/arm/vnpu/virtual_npu.h"
#include "runtime/core/error.h"
#include "runtime/core/span.h"

namespace kiln::vnpu {

/// Data the NPU holds between operations (Ethos-U85): the chaining buffers of the current
/// chain and the accumulators an operation kept for the next one. The memory comes from the
/// persistent end of the scratch arena and is released when an operation starts that uses
/// neither.
struct NpuState {
  struct Buffer {
    uint8_t* data = nullptr;
    ElemType type = ElemType::S8;
    uint32_t height = 0, width = 0, depth = 0;
  };
  Buffer chain[8];
  /// Kept accumulators (int64 per element), height x width x depth of the OFM that kept them.
  Buffer accumulators;
  /// COND_STATUS result flag: the first element the last operation wrote is non-zero.
  bool condition = false;

  void release() { *this = NpuState(); }
};

struct OpContext {
  const OpDesc& op;
  Span<const Region> regions;
  /// The internal memory: SHRAM (Ethos-U55/U65) or LUT memory (Ethos-U85).
  Span<uint8_t> internal_memory;
  ScratchArena& scratch;
  NpuState& state;
  const Config& config;
  /// MACs/element steps this operation may still use before the stream's budget runs out.
  uint64_t work_budget;
  OpRecord record;
  /// Counters of bytes per region (region index, kMaxRegions = internal memory).
  uint64_t* bytes_read;
  uint64_t* bytes_written;
};

/// Builds the output stage (zero point, table, clipping) for the op's OFM type.
Error make_output_stage(const OpContext& ctx, OutputStage* stage);

/// Charges `work` steps to the budget; NpuWorkLimitExceeded if it does not fit.
Error charge_work(OpContext& ctx, uint64_t work, const char* what);

/// Per-channel bias and scaling of `count` OFM channels (from the scale records when the
/// op scales per channel, else bias 0 and the global scale), in scratch memory.
struct ChannelScales {
  const int64_t* bias;
  const Scaling* scale;
};
Error read_channel_scales(OpContext& ctx, uint32_t count, ChannelScales* out);

/// Binds an input of the op: a region, or the chaining buffer it names. `height/width/depth`
/// is the extent the op reads.
Error bind_input(OpContext& ctx, const FmDesc& fm, const char* name, uint32_t height, uint32_t width,
                 uint32_t depth, FeatureMap* map);
/// Binds the op's OFM: a region (with the op's transpose/reverse), a new chaining buffer,
/// or nothing when the accumulators are kept (storage None; *bound = false).
Error bind_output(OpContext& ctx, FeatureMap* map, bool* bound);
/// The accumulators an op starts from (AccSource Keep/Ifm2): nullptr for Reset. The
/// element (y, x, c) of an OFM of the op's extent is at [((y * w) + x) * d + c].
Error initial_accumulators(OpContext& ctx, const int64_t** acc);
/// Where an op that keeps its accumulators (acc_output false) stores them.
Error kept_accumulators(OpContext& ctx, int64_t** acc);
/// Counts the bytes of an input/output map for the counters.
void count_read(OpContext& ctx, const FeatureMap& map, uint64_t bytes);
void count_written(OpContext& ctx, const FeatureMap& map, uint64_t bytes);

Error run_conv(OpContext& ctx);
Error run_depthwise(OpContext& ctx);
Error run_pool(OpContext& ctx);
Error run_elementwise(OpContext& ctx);
Error run_resize(OpContext& ctx);
Error run_dma(OpContext& ctx);

}  // namespace kiln::vnpu
