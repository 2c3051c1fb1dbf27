#include "runtime/core/hierarchical_allocator.h"

#include <cinttypes>

#include "runtime/platform/log.h"

namespace kiln {

Result<void*> HierarchicalAllocator::get_offset_address(uint32_t index, size_t offset,
                                                        size_t size) const {
  if (index >= buffers_.size()) {
    KILN_LOG(Error, "planned buffer %" PRIu32 " requested; %zu provided", index, buffers_.size());
    return Error::NotFound;
  }
  const Span<uint8_t> buffer = buffers_[index];
  if (offset > buffer.size() || size > buffer.size() - offset) {
    KILN_LOG(Error, "planned buffer %" PRIu32 ": bytes [%zu, %zu) requested; buffer holds %zu", index,
             offset, offset + size, buffer.size());
    return Error::MemoryAllocationFailed;
  }
  return static_cast<void*>(buffer.data() + offset);
}

}  // namespace kiln
