// HostBuffer: heap memory for a host's allocators and planned buffers (kiln-run, the
// Python extension). Host-only by design: firmware places its pools statically.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <utility>

#include "runtime/core/result.h"
#include "runtime/platform/log.h"

namespace kiln::host {

/// malloc'ed memory, not zeroed: a program may reserve much more than it touches, and a
/// corrupted one more than the host has, which must become MemoryAllocationFailed (an
/// Error with a log line), not an abort or std::bad_alloc.
class HostBuffer {
 public:
  HostBuffer() = default;
  HostBuffer(HostBuffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}
  HostBuffer& operator=(HostBuffer&& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(size_, other.size_);
    return *this;
  }
  HostBuffer(const HostBuffer&) = delete;
  HostBuffer& operator=(const HostBuffer&) = delete;
  ~HostBuffer() { std::free(data_); }

  /// `size` bytes (at least 1 is allocated, so data() is never null); `what` names the
  /// buffer in the log line of a failure.
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
