// FileDataLoader: reads a program file into memory (host builds only).
//
// The whole file goes into one 16-byte-aligned heap buffer at construction; load()
// then serves ranges from it without further I/O. This is the one place where the
// runtime allocates from the heap, and it happens before any method runs.
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/core/result.h"
#include "runtime/executor/data_loader.h"

namespace kiln {

class FileDataLoader final : public DataLoader {
 public:
  /// Reads `path`. AccessFailed, with a log line naming the path and the system's
  /// reason, if the file cannot be opened or read; MemoryAllocationFailed if the heap
  /// cannot hold it.
  static Result<FileDataLoader> from(const char* path);

  FileDataLoader(FileDataLoader&& other) noexcept;
  FileDataLoader& operator=(FileDataLoader&& other) noexcept;
  FileDataLoader(const FileDataLoader&) = delete;
  FileDataLoader& operator=(const FileDataLoader&) = delete;
  ~FileDataLoader() override;

  Result<Span<const uint8_t>> load(size_t offset, size_t size) override;
  size_t size() const override { return size_; }

 private:
  FileDataLoader(uint8_t* data, size_t size) : data_(data), size_(size) {}

  uint8_t* data_;
  size_t size_;
};

}  // namespace kiln
