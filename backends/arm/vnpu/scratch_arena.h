// A two-ended bump allocator over the caller's work memory. The bottom end holds an
// operation's scratch and is reset before every operation; the top end holds what the NPU
// keeps between operations (Ethos-U85 chaining buffers and kept accumulators) until
// release_persistent(). Keeps the execution path free of heap allocation: an operation that
// needs more than the work memory has fails with OutOfResources and says how much.
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/core/span.h"

namespace kiln::vnpu {

class ScratchArena final {
 public:
  explicit ScratchArena(Span<uint8_t> memory) : memory_(memory), top_(memory.size()) {}

  /// `count` objects of T from the bottom, 16-byte aligned, or nullptr if they do not fit.
  template <typename T>
  T* allocate(size_t count) {
    const size_t start = (used_ + 15) & ~static_cast<size_t>(15);
    if (start > top_ || count > (top_ - start) / sizeof(T)) return nullptr;
    used_ = start + count * sizeof(T);
    note_peak();
    return reinterpret_cast<T*>(memory_.data() + start);
  }
  /// `count` objects of T from the top, kept across reset(), or nullptr.
  template <typename T>
  T* allocate_persistent(size_t count) {
    if (count > top_ / sizeof(T)) return nullptr;
    const size_t start = (top_ - count * sizeof(T)) & ~static_cast<size_t>(15);
    if (start < used_) return nullptr;
    top_ = start;
    note_peak();
    return reinterpret_cast<T*>(memory_.data() + start);
  }
  void reset() { used_ = 0; }
  void release_persistent() { top_ = memory_.size(); }
  /// Current fill level, to give back everything allocated after it with release().
  size_t mark() const { return used_; }
  void release(size_t mark) { used_ = mark; }
  size_t free_bytes() const { return used_ >= top_ ? 0 : top_ - used_; }
  size_t capacity() const { return memory_.size(); }
  /// The most the arena has held at once (both ends), since it was made.
  size_t peak_bytes() const { return peak_; }

 private:
  void note_peak() {
    const size_t held = used_ + (memory_.size() - top_);
    if (held > peak_) peak_ = held;
  }

  Span<uint8_t> memory_;
  size_t used_ = 0;
  size_t top_;
  size_t peak_ = 0;
};

}  // namespace kiln::vnpu
