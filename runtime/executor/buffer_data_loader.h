// BufferDataLoader: serves a program that is already in memory (flash, a host array).
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/executor/data_loader.h"

namespace kiln {

class BufferDataLoader final : public DataLoader {
 public:
  /// `data` must stay valid and unchanged while the loader (and any Program loaded from
  /// it) is in use. It should be 16-byte aligned: Program::load rejects data that is
  /// not 8-byte aligned, because tensors and lists point straight into it.
  BufferDataLoader(const void* data, size_t size)
      : data_(static_cast<const uint8_t*>(data)), size_(size) {}

  Result<Span<const uint8_t>> load(size_t offset, size_t size) override;
  size_t size() const override { return size_; }

 private:
  const uint8_t* data_;
  size_t size_;
};

}  // namespace kiln
