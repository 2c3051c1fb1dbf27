#include "backends/arm/runtime/npu_operation_tracer.h"

#include <cstdio>

#include "runtime/platform/platform.h"

namespace kiln::ethos_u {
namespace {

/// The dtype of an NPU feature map of `element_size` bytes.
ScalarType ofm_dtype(uint32_t element_size, bool is_signed) {
  if (element_size == 1) return is_signed ? ScalarType::Char : ScalarType::Byte;
  if (element_size == 2) return is_signed ? ScalarType::Short : ScalarType::UInt16;
  return ScalarType::Int;
}

}  // namespace

NpuOperationTracer::NpuOperationTracer(EventTracer* tracer)
    : tracer_(tracer), last_ticks_(tracer != nullptr ? kiln_pal_current_ticks() : 0) {}

void NpuOperationTracer::on_npu_operation(const NpuOperation& operation) {
  if (tracer_ == nullptr) return;
  const uint64_t end = kiln_pal_current_ticks();
  char metadata[160];
  const int length = std::snprintf(
      metadata, sizeof(metadata),
      "{\"kind\":\"%s\",\"macs\":%llu,\"bytes_read\":%llu,\"bytes_written\":%llu,\"cycles\":%llu}",
      operation.kind, static_cast<unsigned long long>(operation.macs),
      static_cast<unsigned long long>(operation.bytes_read),
      static_cast<unsigned long long>(operation.bytes_written), static_cast<unsigned long long>(operation.cycles));
  DelegateEvent event;
  event.index = static_cast<int32_t>(operation.index);
  event.name = operation.kind;
  event.start_ticks = last_ticks_;
  event.end_ticks = end;
  if (length > 0 && static_cast<size_t>(length) < sizeof(metadata)) {
    event.metadata = {reinterpret_cast<const uint8_t*>(metadata), static_cast<size_t>(length)};
  }
  tracer_->log_delegate_event(event);
  if (operation.copy_ofm != nullptr && tracer_->logs_values()) {
    const int32_t sizes[4] = {1, static_cast<int32_t>(operation.ofm_height),
                              static_cast<int32_t>(operation.ofm_width),
                              static_cast<int32_t>(operation.ofm_depth)};
    const Span<uint8_t> room = tracer_->log_tensor_in_place(
        ofm_dtype(operation.ofm_element_size, operation.ofm_signed), {sizes, 4},
        static_cast<int32_t>(operation.index), operation.kind);
    // The tracer gave room for exactly this tensor (or none): a copy that still fails leaves
    // the logged value unfilled, which must not fail the inference being traced.
    if (room.size() > 0) (void)operation.copy_ofm(operation.ofm_source, room);
  }
  // What the tracing itself took is not the next operation's time.
  last_ticks_ = kiln_pal_current_ticks();
}

}  // namespace kiln::ethos_u
