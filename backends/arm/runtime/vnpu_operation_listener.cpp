#include "backends/arm/runtime/vnpu_operation_listener.h"

namespace kiln::ethos_u {
namespace {

Error copy_ofm(const void* source, Span<uint8_t> out) {
  return static_cast<const vnpu::OfmView*>(source)->copy_nhwc(out);
}

}  // namespace

const char* npu_operation_kind_name(uint16_t kind) {
  switch (static_cast<vnpu::OpKind>(kind)) {
    case vnpu::OpKind::Conv: return "conv";
    case vnpu::OpKind::Depthwise: return "depthwise";
    case vnpu::OpKind::Pool: return "pool";
    case vnpu::OpKind::Elementwise: return "elementwise";
    case vnpu::OpKind::Resize: return "resize";
    case vnpu::OpKind::Dma: return "dma";
  }
  return "op";
}

void VnpuOperationListener::on_operation(size_t index, const vnpu::OpRecord& record, const vnpu::OfmView* ofm) {
  NpuOperation operation;
  operation.index = static_cast<uint32_t>(index);
  operation.kind = npu_operation_kind_name(record.kind);
  operation.macs = record.macs;
  operation.bytes_read = record.bytes_read;
  operation.bytes_written = record.bytes_written;
  operation.cycles = record.cycles;
  if (ofm != nullptr) {
    operation.ofm_height = ofm->height();
    operation.ofm_width = ofm->width();
    operation.ofm_depth = ofm->depth();
    operation.ofm_element_size = ofm->element_size();
    operation.ofm_signed = ofm->is_signed();
    operation.copy_ofm = &copy_ofm;
    operation.ofm_source = ofm;
  }
  listener_->on_npu_operation(operation);
}

void add_model_counters(const vnpu::Counters& model, NpuCounters* counters) {
  counters->operations = model.operations;
  counters->chained_operations = model.chained_operations;
  counters->dma_transfers = model.dma_transfers;
  counters->macs = model.macs;
  counters->element_ops = model.element_ops;
  counters->commands = model.commands;
  for (size_t r = 0; r <= kNpuMaxRegions; ++r) {
    counters->bytes_read[r] = model.bytes_read[r];
    counters->bytes_written[r] = model.bytes_written[r];
  }
}

}  // namespace kiln::ethos_u
