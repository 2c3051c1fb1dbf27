#include "backends/arm/vnpu/device/cycle_estimate.h"

namespace kiln::vnpu::device {
namespace {

uint64_t ceil_div(uint64_t a, uint64_t b) { return a / b + (a % b != 0 ? 1 : 0); }

}  // namespace

uint64_t operation_cycles(const CycleModel& model, const OpRecord& record) {
  const uint64_t macs_per_cycle = model.macs_per_cycle > 0 ? model.macs_per_cycle : 1;
  uint64_t compute = 0;
  switch (static_cast<OpKind>(record.kind)) {
    case OpKind::Conv:
    case OpKind::Depthwise:
      compute = ceil_div(record.macs, macs_per_cycle);
      break;
    case OpKind::Dma:
      break;
    default: {
      const uint64_t elements_per_cycle = macs_per_cycle >= kMacsPerElement ? macs_per_cycle / kMacsPerElement : 1;
      compute = ceil_div(record.macs, elements_per_cycle);
      break;
    }
  }
  const uint64_t transfer = transfer_cycles(model, record.bytes_read + record.bytes_written);
  return (compute > transfer ? compute : transfer) + kOperationSetupCycles;
}

uint64_t transfer_cycles(const CycleModel& model, uint64_t bytes) {
  return ceil_div(bytes, model.bytes_per_cycle > 0 ? model.bytes_per_cycle : 1);
}

}  // namespace kiln::vnpu::device
