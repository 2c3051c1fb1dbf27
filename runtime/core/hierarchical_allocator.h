// HierarchicalAllocator: the planned buffers a method's tensors are placed in.
//
// Memory planning (AOT) assigns each non-constant tensor a buffer id and an offset.
// The caller provides one buffer per id, sized from MethodMeta; this class turns
// (buffer, offset, size) into an address after checking the bounds.
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/core/result.h"
#include "runtime/core/span.h"

namespace kiln {

class HierarchicalAllocator final {
 public:
  /// `buffers[i]` backs planned buffer i (the program's memory id i + 1).
  explicit HierarchicalAllocator(Span<Span<uint8_t>> buffers) : buffers_(buffers) {}

  /// Address of [offset, offset + size) in buffer `index`, or MemoryAllocationFailed
  /// (with a log line naming the sizes) if it does not fit, NotFound for a bad index.
  Result<void*> get_offset_address(uint32_t index, size_t offset, size_t size) const;

  size_t num_buffers() const { return buffers_.size(); }
  Span<uint8_t> buffer(size_t index) const { return buffers_[index]; }

 private:
  Span<Span<uint8_t>> buffers_;
};

}  // namespace kiln
