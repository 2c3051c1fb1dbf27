// A bump allocator over the caller's work memory, reset before every operation. Keeps the
// execution path free of heap allocation: an operation that needs more scratch than the work
// memory has fails with OutOfResources and says how much it asked for.
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/core/span.h"

namespace kiln::vnpu {

class ScratchArena final {
 public:
  explicit ScratchArena(Span<uint8_t> memory) : memory_(memory) {}

  /// `count` objects of T, 16-byte aligned, or nullptr if they do not fit.
  template <typename T>
  T* allocate(size_t count) {
    size_t start = (used_ + 15) & ~static_cast<size_t>(15);
    if (count > (memory_.size() - start) / sizeof(T) || start > memory_.size()) return nullptr;
    used_ = start + count * sizeof(T);
    return reinterpret_cast<T*>(memory_.data() + start);
  }
  void reset() { used_ = 0; }
  /// Current fill level, to give back everything allocated after it with release().
  size_t mark() const { return used_; }
  void release(size_t mark) { used_ = mark; }
  size_t free_bytes() const { return used_ >= memory_.size() ? 0 : memory_.size() - used_; }
  size_t capacity() const { return memory_.size(); }

 private:
  Span<uint8_t> memory_;
  size_t used_ = 0;
};

}  // namespace kiln::vnpu
