// Decoder of the Ethos-U85 "fast" weight format (FWD), written from the format: a 256-bit
// header (bit 0 raw mode, bit 1 small table, bits 104-111 a signed zero adjustment, bits
// 112-255 sixteen 9-bit table entries, each a magnitude shifted left by one with the sign in
// bit 0), then one code per weight: 2-bit table indices (small table), 4-bit table indices,
// or raw bytes (weight + zero adjustment, modulo 256). The section is padded to 256 bits.
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/core/error.h"
#include "runtime/core/span.h"

namespace kiln::vnpu {

/// Decodes `out.size()` weights from `stream`. NpuWeightStreamInvalid (with a log line) if
/// the stream is shorter than its header and codes, or a code indexes an unused entry.
Error decode_fast_weight_stream(Span<const uint8_t> stream, Span<int16_t> out);

}  // namespace kiln::vnpu
