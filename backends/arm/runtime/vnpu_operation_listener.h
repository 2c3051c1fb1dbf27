// Passes the virtual NPU's per-operation notifications (vnpu::OperationObserver) on to a
// delegate's NpuOperationListener, in the driver interface's terms (NpuOperation): how the
// tracing of VirtualNpuDriver and of the host's virtual NPU device reaches ETDump; and the
// virtual NPU's own totals as NpuCounters.
#pragma once

#include <cstddef>

#include "backends/arm/runtime/npu_driver.h"
#include "backends/arm/vnpu/operation_observer.h"
#include "backends/arm/vnpu/virtual_npu.h"

namespace kiln::ethos_u {

class VnpuOperationListener final : public vnpu::OperationObserver {
 public:
  /// `listener` must outlive the notifications.
  explicit VnpuOperationListener(NpuOperationListener* listener) : listener_(listener) {}
  void on_operation(size_t index, const vnpu::OpRecord& record, const vnpu::OfmView* ofm) override;

 private:
  NpuOperationListener* listener_;
};

/// The virtual NPU's own totals (operations, MACs, commands, bytes per region: what a PMU
/// does not count) written into `counters`; the PMU fields are left as they are.
void add_model_counters(const vnpu::Counters& model, NpuCounters* counters);

/// "conv", "depthwise", "pool", "elementwise", "resize", "dma" for an OpRecord kind.
const char* npu_operation_kind_name(uint16_t kind);

}  // namespace kiln::ethos_u
