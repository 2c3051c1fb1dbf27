// The memory the device's NPU can address: ranges of bus addresses, each backed by host
// memory the device reads and writes. Everything the NPU touches goes through here, so the
// device never reaches outside what it was given: a bus address in no range is a bus error,
// and a region extends from its base pointer only to the end of the range holding it.
#pragma once

#include <cstddef>
#include <cstdint>

#include "backends/arm/vnpu/virtual_npu.h"
#include "runtime/core/error.h"
#include "runtime/core/span.h"

namespace kiln::vnpu::device {

/// `size` bytes at bus address `bus_address`, read and written at `host`.
struct MemoryRange {
  uint64_t bus_address = 0;
  uint8_t* host = nullptr;
  size_t size = 0;
  /// A write here is a bus error (the program's weights, the command stream).
  bool read_only = false;
};

/// Ranges one device holds (a board's memory map has a handful).
constexpr size_t kMaxMemoryRanges = 16;

class BusMemory final {
 public:
  /// Replaces the memory map. InvalidArgument (logged) for more than kMaxMemoryRanges
  /// ranges, a null host pointer under a nonzero size, a range that wraps the 64-bit bus or
  /// overlaps another, or a host pointer whose offset within a word differs from its bus
  /// address's (the NPU reads command words at word-aligned bus addresses).
  Error set(Span<const MemoryRange> ranges);

  /// The range holding bus address `address`, or nullptr.
  const MemoryRange* find(uint64_t address) const;

  /// The region a base pointer of `base` gives: from `base` to the end of its range, or
  /// {nullptr, 0} (every access a bus error) when no range holds it.
  Region region_at(uint64_t base) const;

  /// The `bytes` bytes at `address` as words, when `address` is word aligned and they lie
  /// in one range; false otherwise.
  bool words_at(uint64_t address, uint64_t bytes, Span<const uint32_t>* out) const;

 private:
  MemoryRange ranges_[kMaxMemoryRanges];
  size_t count_ = 0;
};

}  // namespace kiln::vnpu::device
