// How much work memory an operation can take from the scratch arena, worked out from its
// decoded registers alone (no region is read): what VirtualNpu::work_memory_bytes() adds
// up over a stream so that a runtime can size the work memory from the program before the
// first inference. An upper bound of what the op's implementation allocates (the sum of
// every allocation any of its paths makes, with alignment); keep it next to the
// allocations it mirrors (ifm_rows, op_common, weight_layout, weight_decoder, depthwise).
#pragma once

#include <cstdint>

#include "backends/arm/vnpu/op_desc.h"

namespace kiln::vnpu {

struct ScratchBound {
  /// Bytes from the bottom of the arena, given back when the next operation starts.
  uint64_t operation = 0;
  /// Bytes from the top that stay for the following operations of a chain (Ethos-U85
  /// chaining buffers, kept accumulators).
  uint64_t kept = 0;
};

/// `weights_left_to_count`: what is left of the stream's budget of weights counted slot by
/// slot (Config::max_counted_weights); counting an operation's weights takes them from it,
/// and past the budget its weight slots are bounded from its shape instead.
ScratchBound scratch_bound(const OpDesc& op, uint64_t* weights_left_to_count);

}  // namespace kiln::vnpu
