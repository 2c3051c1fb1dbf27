#include "backends/arm/vnpu/operation_observer.h"

#include "backends/arm/vnpu/feature_map.h"
#include "backends/arm/vnpu/ops/op_context.h"
#include "runtime/platform/log.h"

namespace kiln::vnpu {

uint32_t OfmView::element_size() const { return map_.elem_size(); }
bool OfmView::is_signed() const { return map_.is_signed(); }
size_t OfmView::nbytes() const { return size_t{height_} * width_ * depth_ * map_.elem_size(); }

Error OfmView::copy_nhwc(Span<uint8_t> out) const {
  if (out.size() < nbytes()) {
    KILN_LOG(Error, "OFM copy needs %zu bytes; %zu given", nbytes(), out.size());
    return Error::InvalidArgument;
  }
  const uint32_t size = map_.elem_size();
  uint8_t* p = out.data();
  for (uint32_t y = 0; y < height_; ++y) {
    for (uint32_t x = 0; x < width_; ++x) {
      for (uint32_t c = 0; c < depth_; ++c) {
        const uint32_t v = static_cast<uint32_t>(map_.read(y, x, c));
        for (uint32_t b = 0; b < size; ++b) *p++ = static_cast<uint8_t>(v >> (8 * b));
      }
    }
  }
  return Error::Ok;
}

void notify_operation_observer(OperationObserver& observer, size_t index, const OpRecord& record,
                               const OpDesc& op, Span<const Region> regions) {
  // A DMA, an output kept inside the NPU (chaining buffer, accumulators) or one that
  // cannot be bound has nothing in memory to show.
  if (op.kind == OpKind::Dma || op.ofm.storage != FmStorage::Memory || !op.acc_output) {
    observer.on_operation(index, record, nullptr);
    return;
  }
  uint32_t height = 0, width = 0, depth = 0;
  permuted_extent(op.transpose, op.ofm_height, op.ofm_width, op.ofm_depth, &height, &width, &depth);
  FeatureMap map;
  if (map.bind(op.ofm, "OFM", regions, height, width, depth, /*output=*/false) != Error::Ok) {
    observer.on_operation(index, record, nullptr);
    return;
  }
  const OfmView view(map, height, width, depth);
  observer.on_operation(index, record, &view);
}

}  // namespace kiln::vnpu
