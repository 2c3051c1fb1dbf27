#include "backends/arm/vnpu/fast_weight_decoder.h"

#include "runtime/platform/log.h"

namespace kiln::vnpu {
namespace {

constexpr size_t kHeaderBits = 256;
constexpr uint32_t kTableEntries = 16;

// Bit i of the stream is bit (i % 8) of byte i / 8; callers check the length first.
uint32_t bits_at(Span<const uint8_t> s, size_t pos, uint32_t count) {
  uint32_t v = 0;
  for (uint32_t i = 0; i < count; ++i, ++pos) v |= static_cast<uint32_t>((s[pos >> 3] >> (pos & 7)) & 1u) << i;
  return v;
}

int16_t unfold(uint32_t folded) {
  const int32_t magnitude = static_cast<int32_t>(folded >> 1);
  return static_cast<int16_t>((folded & 1u) != 0 ? -magnitude : magnitude);
}

}  // namespace

Error decode_fast_weight_stream(Span<const uint8_t> stream, Span<int16_t> out) {
  if (stream.size() * 8 < kHeaderBits) {
    KILN_LOG(Error, "fast weight stream of %zu bytes has no 32-byte header", stream.size());
    return Error::NpuWeightStreamInvalid;
  }
  const bool raw = bits_at(stream, 0, 1) != 0;
  const bool small_table = bits_at(stream, 1, 1) != 0;
  const int32_t zero_adjust = static_cast<int8_t>(bits_at(stream, 104, 8));
  int16_t table[kTableEntries];
  for (uint32_t i = 0; i < kTableEntries; ++i) table[i] = unfold(bits_at(stream, 112 + 9 * i, 9));
  const uint32_t code_bits = raw ? 8u : (small_table ? 2u : 4u);
  const uint64_t needed = kHeaderBits + uint64_t{code_bits} * out.size();
  if (needed > uint64_t{stream.size()} * 8) {
    KILN_LOG(Error, "fast weight stream of %zu bytes is too short for %zu %u-bit weights", stream.size(),
             out.size(), code_bits);
    return Error::NpuWeightStreamInvalid;
  }
  size_t pos = kHeaderBits;
  for (size_t i = 0; i < out.size(); ++i, pos += code_bits) {
    const uint32_t code = bits_at(stream, pos, code_bits);
    if (raw) {
      out[i] = static_cast<int16_t>(static_cast<int8_t>(code) - zero_adjust);
    } else {
      out[i] = table[code];
    }
  }
  return Error::Ok;
}

}  // namespace kiln::vnpu
