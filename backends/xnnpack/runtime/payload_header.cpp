#include "backends/xnnpack/runtime/payload_header.h"

#include <cstring>

#include "runtime/platform/log.h"

namespace kiln {
namespace xnnpack {
namespace {

constexpr size_t kHeaderLength = 30;
constexpr size_t kMagicOffset = 4;
constexpr char kMagic[4] = {'X', 'H', '0', '0'};

uint64_t read_le(const uint8_t* p, size_t bytes) {
  uint64_t value = 0;
  for (size_t i = 0; i < bytes; ++i) value |= static_cast<uint64_t>(p[i]) << (8 * i);
  return value;
}

bool fits(uint64_t offset, uint64_t size, size_t total) {
  return offset <= total && size <= total - offset;
}

}  // namespace

Result<PayloadSections> split_payload(Span<const uint8_t> payload) {
  const uint8_t* p = payload.data();
  if (payload.size() < kMagicOffset + sizeof(kMagic)) {
    KILN_LOG(Error, "XNNPACK payload is %zu bytes: too short for a header or a flatbuffer",
             payload.size());
    return Error::DelegatePayloadTruncated;
  }
  if (std::memcmp(p + kMagicOffset, kMagic, sizeof(kMagic)) != 0) {
    // No header: the whole payload is the flatbuffer (its identifier is checked later).
    return PayloadSections{payload, Span<const uint8_t>()};
  }
  if (payload.size() < kHeaderLength) {
    KILN_LOG(Error, "XNNPACK payload header: %zu bytes, the header needs %zu", payload.size(),
             kHeaderLength);
    return Error::DelegatePayloadTruncated;
  }
  const uint64_t header_length = read_le(p + 8, 2);
  if (header_length != kHeaderLength) {
    KILN_LOG(Error, "XNNPACK payload header says it is %llu bytes; this version reads %zu",
             static_cast<unsigned long long>(header_length), kHeaderLength);
    return Error::DelegatePayloadBadBlock;
  }
  const uint64_t fb_offset = read_le(p + 10, 4);
  const uint64_t fb_size = read_le(p + 14, 4);
  const uint64_t data_offset = read_le(p + 18, 4);
  const uint64_t data_size = read_le(p + 22, 8);
  if (!fits(fb_offset, fb_size, payload.size()) || fb_size == 0) {
    KILN_LOG(Error, "XNNPACK payload: flatbuffer [%llu, +%llu) does not fit the %zu-byte payload",
             static_cast<unsigned long long>(fb_offset), static_cast<unsigned long long>(fb_size),
             payload.size());
    return Error::DelegatePayloadTruncated;
  }
  if (!fits(data_offset, data_size, payload.size())) {
    KILN_LOG(Error, "XNNPACK payload: constant data [%llu, +%llu) does not fit the %zu-byte payload",
             static_cast<unsigned long long>(data_offset),
             static_cast<unsigned long long>(data_size), payload.size());
    return Error::DelegatePayloadTruncated;
  }
  return PayloadSections{Span<const uint8_t>(p + fb_offset, static_cast<size_t>(fb_size)),
                         Span<const uint8_t>(p + data_offset, static_cast<size_t>(data_size))};
}

}  // namespace xnnpack
}  // namespace kiln
