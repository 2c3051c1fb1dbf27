#include "backends/arm/runtime/payload_parser.h"

#include <cstring>

#include "runtime/platform/log.h"

namespace kiln::ethos_u {
namespace {

constexpr char kStreamHeader[] = "vela_bin_stream";
constexpr char kStreamFooter[] = "vela_end_stream";
constexpr size_t kNameBytes = 16;
/// Bytes 16-19 of a header hold the data length, byte 20 the external flag.
constexpr size_t kLengthOffset = 16;
constexpr size_t kFlagOffset = 20;
/// A shape larger than this (elements) cannot fit any NPU region (32-bit addresses).
constexpr uint64_t kMaxIoElements = uint64_t{1} << 32;

/// The blocks between header and footer; each must appear once, in any order.
constexpr const char* kBlockNames[] = {"cmd_data", "weight_data", "scratch_size", "inputs",
                                       "outputs"};
constexpr size_t kNumBlockKinds = sizeof(kBlockNames) / sizeof(kBlockNames[0]);

uint32_t read_u32(const uint8_t* p) {
  // Little endian regardless of the host, and safe for any alignment.
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
         static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24;
}

int32_t read_i32(const uint8_t* p) {
  const uint32_t bits = read_u32(p);
  int32_t value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

PayloadIo read_io(Span<const uint8_t> bytes, size_t i) {
  const uint8_t* p = bytes.data() + i * kPayloadIoBytes;
  PayloadIo io;
  for (size_t d = 0; d < kPayloadIoDims; ++d) io.shape[d] = read_i32(p + 4 * d);
  io.element_size = read_i32(p + 24);
  io.offset = read_i32(p + 28);
  io.region = read_i32(p + 32);
  return io;
}

/// One block as found in the payload.
struct Block {
  /// The name (NUL-terminated inside the header).
  const char* name;
  Span<const uint8_t> data;
  /// Offset of the block's header in the payload, for messages.
  size_t offset;
  /// The name with anything unprintable replaced by '?', for messages.
  char printable[kNameBytes];
};

void make_printable(const char* name, char (&out)[kNameBytes]) {
  size_t i = 0;
  for (; i + 1 < kNameBytes && name[i] != '\0'; ++i) {
    out[i] = name[i] >= 0x20 && name[i] < 0x7f ? name[i] : '?';
  }
  out[i] = '\0';
}

/// Reads the block at `offset`; sets `*next` to the offset of the one after it.
Result<Block> read_block(Span<const uint8_t> payload, size_t offset, size_t* next) {
  const size_t remaining = payload.size() - offset;
  if (remaining < kPayloadBlockHeaderBytes) {
    KILN_LOG(Error, "ethos-u payload: block header at offset %zu needs %zu bytes, %zu left",
             offset, kPayloadBlockHeaderBytes, remaining);
    return Error::DelegatePayloadTruncated;
  }
  const uint8_t* header = payload.data() + offset;
  const char* raw_name = reinterpret_cast<const char*>(header);
  if (std::memchr(raw_name, '\0', kNameBytes) == nullptr) {
    KILN_LOG(Error, "ethos-u payload: block name at offset %zu is not NUL-terminated within %zu "
             "bytes", offset, kNameBytes);
    return Error::DelegatePayloadBadBlock;
  }
  Block block{raw_name, {}, offset, {}};
  make_printable(raw_name, block.printable);
  const char* name = block.printable;
  const uint8_t flag = header[kFlagOffset];
  if (flag > 1) {
    KILN_LOG(Error, "ethos-u payload: block '%s' at offset %zu has external flag %u (0 or 1)",
             name, offset, static_cast<unsigned>(flag));
    return Error::DelegatePayloadBadBlock;
  }
  if (flag == 1) {
    KILN_LOG(Error, "ethos-u payload: block '%s' at offset %zu refers to external named data; "
             "only inline blocks are supported", name, offset);
    return Error::DelegatePayloadExternalBlock;
  }
  // 64-bit arithmetic: a length near 4 GiB plus padding must not wrap on 32-bit targets.
  const uint64_t length = read_u32(header + kLengthOffset);
  const uint64_t padded = (length + kPayloadAlignment - 1) / kPayloadAlignment * kPayloadAlignment;
  const uint64_t available = remaining - kPayloadBlockHeaderBytes;
  if (padded > available) {
    KILN_LOG(Error, "ethos-u payload: block '%s' at offset %zu has %llu data bytes (%llu padded); "
             "%llu bytes left", name, offset, static_cast<unsigned long long>(length),
             static_cast<unsigned long long>(padded), static_cast<unsigned long long>(available));
    return Error::DelegatePayloadTruncated;
  }
  *next = offset + kPayloadBlockHeaderBytes + static_cast<size_t>(padded);
  block.data = {header + kPayloadBlockHeaderBytes, static_cast<size_t>(length)};
  return block;
}

Error check_io(const PayloadIo& io, const char* what, size_t i) {
  uint64_t numel = 1;
  for (size_t d = 0; d < kPayloadIoDims; ++d) {
    if (io.shape[d] < 0) {
      KILN_LOG(Error, "ethos-u payload: %s %zu has dim %zu = %d", what, i, d,
               static_cast<int>(io.shape[d]));
      return Error::DelegatePayloadBadIo;
    }
    numel *= static_cast<uint64_t>(io.shape[d]);
    if (numel > kMaxIoElements) {
      KILN_LOG(Error, "ethos-u payload: %s %zu has more than %llu elements", what, i,
               static_cast<unsigned long long>(kMaxIoElements));
      return Error::DelegatePayloadBadIo;
    }
  }
  if (io.element_size != 1 && io.element_size != 2 && io.element_size != 4) {
    KILN_LOG(Error, "ethos-u payload: %s %zu has element size %d (1, 2 or 4)", what, i,
             static_cast<int>(io.element_size));
    return Error::DelegatePayloadBadIo;
  }
  if (io.offset < 0 || io.region < 0) {
    KILN_LOG(Error, "ethos-u payload: %s %zu has offset %d in region %d", what, i,
             static_cast<int>(io.offset), static_cast<int>(io.region));
    return Error::DelegatePayloadBadIo;
  }
  return Error::Ok;
}

/// Checks an "inputs"/"outputs" block and returns the io descriptions after the count.
Error parse_io_block(const Block& block, const char* what, size_t* count, Span<const uint8_t>* io) {
  if (block.data.size() < 4) {
    KILN_LOG(Error, "ethos-u payload: '%s' block has %zu bytes; its count alone needs 4",
             block.printable, block.data.size());
    return Error::DelegatePayloadBadSize;
  }
  const int32_t n = read_i32(block.data.data());
  const uint64_t expected = 4 + static_cast<uint64_t>(n < 0 ? 0 : n) * kPayloadIoBytes;
  if (n < 0 || expected != block.data.size()) {
    KILN_LOG(Error, "ethos-u payload: '%s' block says %d %s (%llu bytes) but has %zu bytes",
             block.printable, static_cast<int>(n), what, static_cast<unsigned long long>(expected),
             block.data.size());
    return Error::DelegatePayloadBadSize;
  }
  *count = static_cast<size_t>(n);
  *io = {block.data.data() + 4, block.data.size() - 4};
  for (size_t i = 0; i < *count; ++i) KILN_TRY(check_io(read_io(*io, i), what, i));
  return Error::Ok;
}

Error store_block(const Block& block, Payload* out) {
  if (std::strcmp(block.name, "cmd_data") == 0) {
    if (block.data.size() % 4 != 0) {
      KILN_LOG(Error, "ethos-u payload: cmd_data has %zu bytes, not whole 32-bit words",
               block.data.size());
      return Error::DelegatePayloadBadSize;
    }
    out->command_data = block.data;
  } else if (std::strcmp(block.name, "weight_data") == 0) {
    out->weight_data = block.data;
  } else if (std::strcmp(block.name, "scratch_size") == 0) {
    if (block.data.size() != 4) {
      KILN_LOG(Error, "ethos-u payload: scratch_size block has %zu bytes, not 4",
               block.data.size());
      return Error::DelegatePayloadBadSize;
    }
    out->scratch_size = read_u32(block.data.data());
  } else if (std::strcmp(block.name, "inputs") == 0) {
    return parse_io_block(block, "inputs", &out->num_inputs, &out->input_bytes);
  } else {
    return parse_io_block(block, "outputs", &out->num_outputs, &out->output_bytes);
  }
  return Error::Ok;
}

/// Index of a known block name, or kNumBlockKinds.
size_t block_kind(const char* name) {
  for (size_t k = 0; k < kNumBlockKinds; ++k) {
    if (std::strcmp(name, kBlockNames[k]) == 0) return k;
  }
  return kNumBlockKinds;
}

}  // namespace

uint64_t PayloadIo::numel() const {
  uint64_t n = 1;
  for (size_t d = 0; d < kPayloadIoDims; ++d) n *= static_cast<uint64_t>(shape[d]);
  return n;
}

uint64_t PayloadIo::nbytes() const { return numel() * static_cast<uint64_t>(element_size); }

PayloadIo Payload::input(size_t i) const { return read_io(input_bytes, i); }
PayloadIo Payload::output(size_t i) const { return read_io(output_bytes, i); }

Result<Payload> parse_payload(Span<const uint8_t> payload) {
  if (payload.data() == nullptr && payload.size() > 0) return Error::InvalidArgument;
  if (reinterpret_cast<uintptr_t>(payload.data()) % 4 != 0) {
    KILN_LOG(Error, "ethos-u payload at %p is not 4-byte aligned (its command stream is read as "
             "32-bit words)", static_cast<const void*>(payload.data()));
    return Error::DelegatePayloadMisaligned;
  }
  size_t offset = 0;
  size_t next = 0;
  KILN_TRY_ASSIGN(const Block first, read_block(payload, offset, &next));
  if (std::strcmp(first.name, kStreamHeader) != 0) {
    KILN_LOG(Error, "ethos-u payload starts with block '%s', not '%s'", first.printable,
             kStreamHeader);
    return Error::DelegatePayloadBadBlock;
  }
  Payload out;
  bool seen[kNumBlockKinds] = {};
  for (offset = next; ; offset = next) {
    if (offset >= payload.size()) {
      KILN_LOG(Error, "ethos-u payload ends at offset %zu without a '%s' block", offset,
               kStreamFooter);
      return Error::DelegatePayloadTruncated;
    }
    KILN_TRY_ASSIGN(const Block block, read_block(payload, offset, &next));
    if (std::strcmp(block.name, kStreamFooter) == 0) break;
    const size_t kind = block_kind(block.name);
    if (kind == kNumBlockKinds || seen[kind]) {
      KILN_LOG(Error, "ethos-u payload: %s block '%s' at offset %zu",
               kind == kNumBlockKinds ? "unknown" : "repeated", block.printable, offset);
      return Error::DelegatePayloadBadBlock;
    }
    seen[kind] = true;
    KILN_TRY(store_block(block, &out));
  }
  for (size_t k = 0; k < kNumBlockKinds; ++k) {
    if (!seen[k]) {
      KILN_LOG(Error, "ethos-u payload has no '%s' block", kBlockNames[k]);
      return Error::DelegatePayloadMissingBlock;
    }
  }
  if (out.command_data.size() == 0) {
    KILN_LOG(Error, "ethos-u payload: cmd_data block is empty");
    return Error::DelegatePayloadBadSize;
  }
  return out;
}

}  // namespace kiln::ethos_u
