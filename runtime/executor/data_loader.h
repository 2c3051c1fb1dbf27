// DataLoader: where a Program's bytes come from (a buffer in flash, a file, ...).
//
// The program asks for byte ranges (the flatbuffer, each segment) instead of one
// whole file, so a loader can serve data in place (flash, mmap) without copying.
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/core/result.h"
#include "runtime/core/span.h"

namespace kiln {

class DataLoader {
 public:
  virtual ~DataLoader();

  /// Bytes [offset, offset + size) of the data. The bytes stay valid, unchanged, for
  /// the loader's lifetime. ProgramTruncated (or AccessFailed for an I/O failure) if
  /// the range does not lie inside the data; the check is overflow-safe.
  virtual Result<Span<const uint8_t>> load(size_t offset, size_t size) = 0;

  /// Total number of bytes available.
  virtual size_t size() const = 0;
};

}  // namespace kiln
