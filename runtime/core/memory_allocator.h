// MemoryAllocator: a bump allocator over a caller-provided buffer.
//
// The runtime never calls malloc on the execution path: the method allocator holds
// everything built at init (values, tensors, argument lists) and the temp allocator
// gives kernels scratch space and is reset after every kernel.
#pragma once

#include <cstddef>
#include <cstdint>

namespace kiln {

class MemoryAllocator {
 public:
  static constexpr size_t kDefaultAlignment = 16;

  MemoryAllocator(uint8_t* base, size_t size) : base_(base), size_(size) {}
  virtual ~MemoryAllocator() = default;

  /// `size` bytes aligned to `alignment` (a power of two), or nullptr with a log line
  /// that says how many bytes were asked for and how many were free.
  virtual void* allocate(size_t size, size_t alignment = kDefaultAlignment);

  template <typename T>
  T* allocate_list(size_t count) {
    if (count != 0 && count > SIZE_MAX / sizeof(T)) return nullptr;
    return static_cast<T*>(allocate(count * sizeof(T), alignof(T) > 8 ? alignof(T) : 8));
  }

  /// Frees everything at once.
  virtual void reset() { used_ = 0; }

  size_t size() const { return size_; }
  size_t used() const { return used_; }
  size_t free_bytes() const { return size_ - used_; }
  /// The most bytes ever in use (including alignment padding) since construction.
  size_t peak() const { return peak_; }

 private:
  uint8_t* base_;
  size_t size_;
  size_t used_ = 0;
  size_t peak_ = 0;
};

}  // namespace kiln
