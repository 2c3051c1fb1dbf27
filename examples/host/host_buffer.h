// HostBuffer: heap memory for the runner's allocators and planned buffers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "runtime/core/result.h"
#include "runtime/platform/log.h"

namespace kiln::host {

/// Memory for an allocator or planned buffer: malloc'ed, not zeroed (a program may
/// reserve more than it touches), and a failure is an Error, not an abort.
class HostBuffer {
 public:
  HostBuffer() = default;
  HostBuffer(HostBuffer&& other) noexcept : data_(other.data_), size_(other.size_) {
    other.data_ = nullptr;
    other.size_ = 0;
  }
  HostBuffer(const HostBuffer&) = delete;
  HostBuffer& operator=(const HostBuffer&) = delete;
  HostBuffer& operator=(HostBuffer&&) = delete;
  ~HostBuffer() { std::free(data_); }

  static Result<HostBuffer> allocate(size_t size, const char* what) {
    HostBuffer buffer;
    buffer.data_ = static_cast<uint8_t*>(std::malloc(size == 0 ? 1 : size));
    if (buffer.data_ == nullptr) {
      KILN_LOG(Error, "the host cannot allocate %zu bytes for the %s", size, what);
      return Error::MemoryAllocationFailed;
    }
    buffer.size_ = size;
    return buffer;
  }

  uint8_t* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace kiln::host
