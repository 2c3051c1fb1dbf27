// OperationObserver: an optional hook that shows the caller every operation the virtual
// NPU completes, together with the output feature map it wrote. Debugging tools use it:
// the Ethos-U delegate's ETDump events per NPU operation, kiln.devtools' per-layer
// numerics (each operation's output against the TOSA reference model's).
//
// Kept apart from the interpreter: run() makes one call per operation when an observer
// is set (VirtualNpu::set_operation_observer), and none otherwise.
#pragma once

#include <cstddef>
#include <cstdint>

#include "backends/arm/vnpu/virtual_npu.h"
#include "runtime/core/error.h"
#include "runtime/core/span.h"

namespace kiln::vnpu {

class FeatureMap;
struct OpDesc;

/// The output feature map an operation has just written (in its region, in the NPU's
/// layout: tiles, NHWC or NHCWB16 bricks; an Ethos-U85 transposed OFM has its memory
/// extent). Valid only during on_operation().
class OfmView final {
 public:
  explicit OfmView(const FeatureMap& map, uint32_t height, uint32_t width, uint32_t depth)
      : map_(map), height_(height), width_(width), depth_(depth) {}
  uint32_t height() const { return height_; }
  uint32_t width() const { return width_; }
  uint32_t depth() const { return depth_; }
  /// 1, 2 or 4.
  uint32_t element_size() const;
  bool is_signed() const;
  /// Bytes of the dense copy: height * width * depth * element_size.
  size_t nbytes() const;
  /// Copies the feature map into `out` as dense NHWC, little-endian elements.
  /// InvalidArgument if `out` is smaller than nbytes().
  Error copy_nhwc(Span<uint8_t> out) const;

 private:
  const FeatureMap& map_;
  uint32_t height_, width_, depth_;
};

class OperationObserver {
 public:
  virtual ~OperationObserver() = default;
  /// Operation `index` (counting every operation and DMA of the run, like the op records)
  /// has completed: `record` as run() reports it, `ofm` its output (nullptr for a DMA, or
  /// when the output cannot be read back).
  virtual void on_operation(size_t index, const OpRecord& record, const OfmView* ofm) = 0;
};

/// For the interpreter (virtual_npu.cpp): binds the OFM the decoded operation wrote and
/// calls `observer`.
void notify_operation_observer(OperationObserver& observer, size_t index, const OpRecord& record,
                               const OpDesc& op, Span<const Region> regions);

}  // namespace kiln::vnpu
