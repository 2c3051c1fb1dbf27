// The header in front of an XNNPACK delegate payload: where its XNNGraph flatbuffer and
// its constant data are. Layout (little-endian, 30 bytes): 4 bytes (unused, so that the
// magic sits where a flatbuffer's file identifier would), magic "XH00", u16 header length,
// u32 flatbuffer offset, u32 flatbuffer size, u32 constant data offset, u64 constant data
// size. A payload without the magic is a bare flatbuffer (older files) with no constant data.
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/core/result.h"
#include "runtime/core/span.h"

namespace kiln {
namespace xnnpack {

struct PayloadSections {
  Span<const uint8_t> flatbuffer;
  Span<const uint8_t> constant_data;
};

/// Splits `payload` into its sections. Errors (logged with the numbers):
/// DelegatePayloadTruncated (header or a section past the payload's end),
/// DelegatePayloadBadBlock (header length not 30).
Result<PayloadSections> split_payload(Span<const uint8_t> payload);

}  // namespace xnnpack
}  // namespace kiln
