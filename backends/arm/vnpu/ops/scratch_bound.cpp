#include "backends/arm/vnpu/ops/scratch_bound.h"

#include "backends/arm/vnpu/ops/wrapping.h"
#include "backends/arm/vnpu/weight_decoder.h"
#include "backends/arm/vnpu/weight_layout.h"

namespace kiln::vnpu {
namespace {

// ScratchArena aligns every allocation to 16 bytes. Sums and products saturate: 16-bit
// register fields multiply past 2^64, and such a bound must stay too large, not wrap.
uint64_t aligned(uint64_t bytes) { return bytes > UINT64_MAX - 15u ? UINT64_MAX : (bytes + 15u) & ~uint64_t{15}; }
uint64_t add(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }
uint64_t mul(uint64_t a, uint64_t b) { return saturating_mul(a, b); }

uint64_t ofm_elements(const OpDesc& op) { return mul(uint64_t{op.ofm_height} * op.ofm_width, op.ofm_depth); }

// IfmRows::init: a ring of (dilated kernel height + 1) padded rows of int16, the row each
// slot holds, a pointer per kernel row.
uint64_t ifm_rows_bytes(const OpDesc& op) {
  const KernelGeometry& k = op.kernel;
  const uint64_t span = uint64_t{k.height - 1} * k.dilation_y + 1;
  const uint64_t padded_width = uint64_t{op.ofm_width - 1} * k.stride_x + uint64_t{k.width - 1} * k.dilation_x + 1;
  const uint64_t depth = op.kind == OpKind::Depthwise ? op.ofm_depth : op.ifm_depth;
  const uint64_t ring = aligned(mul(mul(mul(padded_width, depth), span + 1), sizeof(int16_t)));
  return add(add(ring, aligned(span * sizeof(int32_t))), aligned(uint64_t{k.height} * sizeof(void*)));
}

// load_dense_weights: the dense [ofm][ky][kx][ifm] int16 weights, the decoded stream slots
// and one slice of the compressed-stream decoder.
uint64_t weight_bytes(const OpDesc& op, uint64_t* weights_left_to_count) {
  if (op.weights_from_ifm2) return 0;
  WeightShape shape;
  shape.ofm_depth = op.ofm_depth;
  shape.kernel_height = op.kernel.height;
  shape.kernel_width = op.kernel.width;
  shape.ifm_depth = op.kind == OpKind::Depthwise ? 1u : op.ifm_depth;
  shape.ifm_bits = elem_bytes(op.ifm.type) * 8u;
  shape.stride_y = op.kernel.stride_y;
  shape.stride_x = op.kernel.stride_x;
  shape.dilation_y = op.kernel.dilation_y;
  shape.dilation_x = op.kernel.dilation_x;
  const uint64_t dense = mul(mul(shape.ofm_depth, uint64_t{shape.kernel_height} * shape.kernel_width), shape.ifm_depth);
  // Counting the slots walks the stream order, in time linear in the weights: past the
  // stream's budget (kCountedWeightsPerStream) they are bounded instead: both depths rounded
  // up to the largest block (128), the kernel doubled for the sub-kernel padding.
  const uint64_t blocks = uint64_t{(shape.ofm_depth + 127u) / 128u * 128u} * ((shape.ifm_depth + 127u) / 128u * 128u);
  uint64_t slots = 0;
  if (dense <= *weights_left_to_count) {
    *weights_left_to_count -= dense;
    slots = decoded_weight_slots(op.weights, shape);
  } else {
    slots = mul(mul(blocks, uint64_t{shape.kernel_height} * shape.kernel_width), 2u);
  }
  return add(add(aligned(mul(dense, sizeof(int16_t))), aligned(mul(slots, sizeof(int16_t)))), kWeightSliceScratchBytes);
}

}  // namespace

ScratchBound scratch_bound(const OpDesc& op, uint64_t* weights_left_to_count) {
  ScratchBound b;
  if (op.kind == OpKind::Dma) return b;
  const uint64_t n = ofm_elements(op);
  // read_channel_scales: a bias and a scaling per OFM channel.
  b.operation = add(aligned(uint64_t{op.ofm_depth} * sizeof(int64_t)),
                    aligned(uint64_t{op.ofm_depth} * sizeof(Scaling)));
  // initial_accumulators from IFM2.
  if (op.acc_source == AccSource::Ifm2) b.operation = add(b.operation, aligned(mul(n, sizeof(int64_t))));
  if (op.kind == OpKind::Conv || op.kind == OpKind::Depthwise) {
    b.operation = add(b.operation, add(weight_bytes(op, weights_left_to_count), ifm_rows_bytes(op)));
    if (op.kind == OpKind::Depthwise) {
      // The weights transposed to [tap][channel] and a row of int32 accumulators.
      const uint64_t taps = uint64_t{op.kernel.height} * op.kernel.width;
      b.operation = add(b.operation, add(aligned(mul(mul(taps, op.ofm_depth), sizeof(int16_t))),
                                         aligned(uint64_t{op.ofm_depth} * sizeof(int32_t))));
    }
  }
  // kept_accumulators and a chaining buffer come from the top (16 more for its alignment).
  if (!op.acc_output) b.kept = add(aligned(mul(n, sizeof(int64_t))), 16u);
  if (op.ofm.storage == FmStorage::Chained) b.kept = add(b.kept, add(aligned(mul(n, elem_bytes(op.ofm.type))), 16u));
  return b;
}

}  // namespace kiln::vnpu
