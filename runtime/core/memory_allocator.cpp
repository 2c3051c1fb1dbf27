#include "runtime/core/memory_allocator.h"

#include "runtime/platform/log.h"

namespace kiln {

void* MemoryAllocator::allocate(size_t size, size_t alignment) {
  if (alignment == 0 || (alignment & (alignment - 1)) != 0) {
    KILN_LOG(Error, "allocate: alignment %zu is not a power of two", alignment);
    return nullptr;
  }
  const uintptr_t start = reinterpret_cast<uintptr_t>(base_) + used_;
  const uintptr_t aligned = (start + alignment - 1) & ~(static_cast<uintptr_t>(alignment) - 1);
  const size_t padding = aligned - start;
  if (base_ == nullptr || padding > size_ - used_ || size > size_ - used_ - padding) {
    KILN_LOG(Error, "allocate: asked for %zu bytes (alignment %zu), %zu of %zu free", size,
             alignment, size_ - used_, size_);
    return nullptr;
  }
  used_ += padding + size;
  if (used_ > peak_) peak_ = used_;
  return reinterpret_cast<void*>(aligned);
}

}  // namespace kiln
