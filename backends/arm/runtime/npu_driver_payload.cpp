#include "backends/arm/runtime/npu_driver_payload.h"

#include "runtime/platform/log.h"

namespace kiln::ethos_u {
namespace {

/// Driver action ids: low 8 bits of an action's first word (parameter in bits 16-31).
enum class Action : uint32_t { Config = 1, CommandStream = 2, ReadRegisters = 3, DumpShram = 4, Nop = 5 };

}  // namespace

Result<DriverPayload> parse_driver_payload(Span<const uint32_t> words) {
  DriverPayload payload;
  if (words.empty() || words[0] != kDriverPayloadMagic) {
    payload.commands = words;
    return payload;
  }
  bool has_stream = false;
  size_t i = 1;
  while (i < words.size()) {
    const uint32_t tag = words[i];
    switch (static_cast<Action>(tag & 0xffu)) {
      case Action::Config:
        if (words.size() - i < 3) {
          KILN_LOG(Error, "driver payload word %zu: the configuration action misses its words", i);
          return Error::NpuStreamTruncated;
        }
        payload.has_config = true;
        payload.config = words[i + 1];
        payload.id = words[i + 2];
        i += 3;
        break;
      case Action::CommandStream: {
        // Length in words: bits 16-31, and 8-15 above them.
        const size_t length = (size_t{(tag >> 8) & 0xffu} << 16) | (tag >> 16);
        if (length > words.size() - i - 1) {
          KILN_LOG(Error, "driver payload word %zu: a command stream of %zu words, %zu left", i, length,
                   words.size() - i - 1);
          return Error::NpuStreamTruncated;
        }
        if (has_stream) {
          KILN_LOG(Error, "driver payload word %zu: a second command stream (one is supported)", i);
          return Error::NotSupported;
        }
        payload.commands = {words.data() + i + 1, length};
        has_stream = true;
        i += 1 + length;
        break;
      }
      case Action::ReadRegisters:
      case Action::DumpShram:
      case Action::Nop:
        ++i;  // debug actions and padding: nothing for an inference to do
        break;
      default:
        KILN_LOG(Error, "driver payload word %zu: unknown action 0x%02x", i, tag & 0xffu);
        return Error::NpuUnknownCommand;
    }
  }
  if (!has_stream) {
    KILN_LOG(Error, "driver payload of %zu words holds no command stream", words.size());
    return Error::NpuStreamTruncated;
  }
  return payload;
}

}  // namespace kiln::ethos_u
