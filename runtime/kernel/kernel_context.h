// KernelContext: what a kernel may ask of the runtime while it runs.
#pragma once

#include <cstddef>

#include "runtime/core/error.h"
#include "runtime/core/memory_allocator.h"

namespace kiln {

class KernelContext final {
 public:
  explicit KernelContext(MemoryAllocator* temp_allocator) : temp_(temp_allocator) {}

  /// Marks the kernel as failed; the method stops and returns `error`.
  void fail(Error error) { failure_ = error; }
  Error failure_state() const { return failure_; }

  /// Scratch memory valid until the kernel returns (the temp allocator is reset after
  /// every kernel). nullptr, with a log line, if the temp allocator is missing or full.
  void* allocate_temp(size_t size, size_t alignment = MemoryAllocator::kDefaultAlignment);

 private:
  MemoryAllocator* temp_;
  Error failure_ = Error::Ok;
};

}  // namespace kiln
