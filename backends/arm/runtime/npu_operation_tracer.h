// NpuOperationTracer: turns the NPU operations of one Ethos-U delegate call into events of
// the method's EventTracer — a delegate profiling event per operation with the NPU's
// counters as its metadata (a JSON object: kind, macs, bytes_read, bytes_written, cycles —
// the virtual NPU device's estimate, 0 where the driver has none) and,
// when the tracer keeps intermediate values, the operation's output feature map.
#pragma once

#include <cstdint>

#include "backends/arm/runtime/npu_driver.h"
#include "runtime/executor/event_tracer.h"

namespace kiln::ethos_u {

class NpuOperationTracer final : public NpuOperationListener {
 public:
  /// Operations are timed from construction on (the first one's start). A null `tracer`
  /// makes an inert object (nothing is read or logged).
  explicit NpuOperationTracer(EventTracer* tracer);
  void on_npu_operation(const NpuOperation& operation) override;

 private:
  EventTracer* tracer_;
  uint64_t last_ticks_;
};

}  // namespace kiln::ethos_u
