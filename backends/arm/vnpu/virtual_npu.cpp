// The command interpreter: unwraps the COP1 driver payload, decodes command words, keeps the
// register file and dispatches operations.
#include "backends/arm/vnpu/virtual_npu.h"

#include <cstring>

#include "backends/arm/vnpu/commands.h"
#include "backends/arm/vnpu/ops/op_context.h"
#include "backends/arm/vnpu/register_file.h"
#include "backends/arm/vnpu/scratch_arena.h"
#include "runtime/platform/log.h"

namespace kiln::vnpu {
namespace {

// SHRAM per core in KiB for each configuration (Ethos-U55 TRM / Vela's architecture table).
uint32_t default_shram_kib(const Config& config) {
  if (config.arch == Arch::EthosU65) return 48;
  if (config.macs >= 256) return 48;
  if (config.macs >= 128) return 24;
  return 16;
}

uint32_t log2_u32(uint32_t v) {
  uint32_t r = 0;
  while ((1u << (r + 1)) <= v && r < 31) ++r;
  return r;
}

struct RunState {
  RegisterFile regs;
  Counters counters;
  Span<OpRecord> records;
  size_t num_records = 0;
  uint32_t shram_bytes = 0;
  uint64_t work_left = 0;
};

}  // namespace

VirtualNpu::VirtualNpu(const Config& config, Span<uint8_t> work_memory)
    : config_(config), work_memory_(work_memory) {}

bool config_from_target_name(const char* name, Config* config) {
  if (name == nullptr) return false;
  Arch arch;
  if (std::strncmp(name, "ethos-u55-", 10) == 0) {
    arch = Arch::EthosU55;
  } else if (std::strncmp(name, "ethos-u65-", 10) == 0) {
    arch = Arch::EthosU65;
  } else {
    return false;
  }
  int macs = 0;
  for (const char* p = name + 10; *p != '\0'; ++p) {
    if (*p < '0' || *p > '9' || macs > 100000) return false;
    macs = macs * 10 + (*p - '0');
  }
  const bool valid = arch == Arch::EthosU55 ? (macs == 32 || macs == 64 || macs == 128 || macs == 256)
                                            : (macs == 256 || macs == 512);
  if (!valid) return false;
  config->arch = arch;
  config->macs = macs;
  return true;
}

namespace {

Error run_commands(const Config& config, Span<const uint32_t> words, Span<const Region> regions,
                   Span<uint8_t> internal, ScratchArena& scratch, RunState& st) {
  RegisterFile& regs = st.regs;
  size_t i = 0;
  while (i < words.size()) {
    const uint32_t index = static_cast<uint32_t>(i);
    const uint32_t word = words[i];
    const uint32_t code = word & kCodeMask;
    const uint16_t param = static_cast<uint16_t>(word >> 16);
    const uint32_t payload_size = (word >> 14) & 3u;
    if (++st.counters.commands > config.max_commands) {
      KILN_LOG(Error, "command %u: more than %llu commands", index,
               static_cast<unsigned long long>(config.max_commands));
      return Error::NpuWorkLimitExceeded;
    }
    if ((word & kReservedMask) != 0 || payload_size > 1) {
      KILN_LOG(Error, "command %u: word 0x%08x has reserved bits or payload size %u set", index,
               word, payload_size);
      return Error::NpuUnknownCommand;
    }
    if (payload_size == 1) {
      if (i + 1 >= words.size()) {
        KILN_LOG(Error, "command %u: %s (0x%03x) misses its payload word", index,
                 cmd1_name(code), code);
        return Error::NpuStreamTruncated;
      }
      if (!is_known_cmd1(code)) {
        KILN_LOG(Error, "command %u: unknown cmd1 opcode 0x%03x", index, code);
        return Error::NpuUnknownCommand;
      }
      regs.set_cmd1(code, param, words[i + 1]);
      i += 2;
      continue;
    }
    ++i;
    if (!is_known_cmd0(code)) {
      KILN_LOG(Error, "command %u: unknown cmd0 opcode 0x%03x (word 0x%08x)", index, code, word);
      return Error::NpuUnknownCommand;
    }
    if (code >= 0x100) {
      regs.set_cmd0(code, param);
      continue;
    }
    const Cmd0 op = static_cast<Cmd0>(code);
    if (op == Cmd0::OpStop) return Error::Ok;
    if (op == Cmd0::OpIrq || op == Cmd0::OpDmaWait || op == Cmd0::OpKernelWait ||
        op == Cmd0::OpPmuMask) {
      continue;  // Synchronisation and PMU control: everything here completes in order.
    }
    const bool is_dma = op == Cmd0::OpDmaStart;
    if (!is_dma && st.counters.operations >= config.max_operations) {
      KILN_LOG(Error, "command %u: more than %llu operations", index,
               static_cast<unsigned long long>(config.max_operations));
      return Error::NpuWorkLimitExceeded;
    }
    scratch.reset();
    const size_t lut_offset = st.shram_bytes >= 2048 ? st.shram_bytes - 2048 : 0;
    // Only this configuration's SHRAM exists: a DMA past its end is an error, not a write
    // into memory the NPU does not have (Vela 5.2 emits one for some u55-32/64 LUTs).
    const Span<uint8_t> shram(internal.data(), st.shram_bytes < internal.size() ? st.shram_bytes : internal.size());
    OpContext ctx{regs, regions, shram, lut_offset, scratch, config, param, st.work_left,
                  OpRecord{}, st.counters.bytes_read, st.counters.bytes_written};
    ctx.record.kind = static_cast<uint16_t>(code);
    ctx.record.mode = (op == Cmd0::OpPool || op == Cmd0::OpElementwise) ? param : 0;
    ctx.record.command_index = index;
    Error err;
    switch (op) {
      case Cmd0::OpConv: err = run_conv(ctx); break;
      case Cmd0::OpDepthwise: err = run_depthwise(ctx); break;
      case Cmd0::OpPool: err = run_pool(ctx); break;
      case Cmd0::OpElementwise: err = run_elementwise(ctx); break;
      default: err = run_dma(ctx); break;
    }
    if (err != Error::Ok) {
      KILN_LOG(Error, "command %u: %s (param 0x%04x) failed: %s", index, cmd0_name(code), param,
               error_name(err));
      return err;
    }
    st.work_left = ctx.work_budget;
    if (is_dma) {
      ++st.counters.dma_transfers;
    } else {
      ++st.counters.operations;
      if (op == Cmd0::OpConv || op == Cmd0::OpDepthwise) {
        st.counters.macs += ctx.record.macs;
      } else {
        st.counters.element_ops += ctx.record.macs;
      }
    }
    if (st.num_records < st.records.size()) st.records[st.num_records] = ctx.record;
    ++st.num_records;
  }
  return Error::Ok;
}

// Walks the COP1 driver actions; runs each CmdStream action.
Error run_driver_payload(const Config& config, Span<const uint32_t> words,
                         Span<const Region> regions, Span<uint8_t> internal,
                         ScratchArena& scratch, RunState& st) {
  size_t i = 1;  // after the fourcc
  bool ran = false;
  while (i < words.size()) {
    const uint32_t tag = words[i];
    const uint32_t action = tag & 0xffu;
    if (action == static_cast<uint32_t>(DriverAction::Nop)) {
      ++i;
    } else if (action == static_cast<uint32_t>(DriverAction::Config)) {
      if (i + 2 >= words.size()) {
        KILN_LOG(Error, "COP1 word %zu: config action misses its two words", i);
        return Error::NpuStreamTruncated;
      }
      const uint32_t cfg = words[i + 1];
      const uint32_t product = cfg >> 28;
      const uint32_t macs_log2 = cfg & 0xfu;
      const uint32_t shram_kib = (cfg >> 8) & 0xffu;
      const uint32_t want_product = config.arch == Arch::EthosU65 ? 1u : 0u;
      if (product > 1) {
        // Not a U55 (0) or U65 (1) stream: say so instead of quoting MAC counts.
        KILN_LOG(Error, "COP1 stream is for NPU product %u: ethos-u85 command streams are not "
                 "supported by the virtual NPU (U55/U65 only)", product);
        return Error::NpuConfigMismatch;
      }
      if (product != want_product || macs_log2 != log2_u32(static_cast<uint32_t>(config.macs))) {
        KILN_LOG(Error,
                 "COP1 stream was compiled for product %u with %u MACs/cycle; this NPU is "
                 "product %u with %d",
                 product, 1u << macs_log2, want_product, config.macs);
        return Error::NpuConfigMismatch;
      }
      if (shram_kib > 0 && size_t{shram_kib} * 1024u <= internal.size()) {
        st.shram_bytes = shram_kib * 1024u;
      }
      i += 3;
    } else if (action == static_cast<uint32_t>(DriverAction::CmdStream)) {
      const size_t length = (size_t{(tag >> 8) & 0xffu} << 16) | (tag >> 16);
      if (length > words.size() - i - 1) {
        KILN_LOG(Error, "COP1 word %zu: command stream of %zu words, only %zu left", i, length,
                 words.size() - i - 1);
        return Error::NpuStreamTruncated;
      }
      Error err = run_commands(config, Span<const uint32_t>(words.data() + i + 1, length), regions,
                               internal, scratch, st);
      if (err != Error::Ok) return err;
      ran = true;
      i += 1 + length;
    } else if (action == static_cast<uint32_t>(DriverAction::ReadApb) ||
               action == static_cast<uint32_t>(DriverAction::DumpShram)) {
      ++i;  // Debug actions: nothing to read back from a virtual NPU.
    } else {
      KILN_LOG(Error, "COP1 word %zu: unknown driver action 0x%02x", i, action);
      return Error::NpuUnknownCommand;
    }
  }
  if (!ran) {
    KILN_LOG(Error, "COP1 payload of %zu words has no command stream", words.size());
    return Error::NpuStreamTruncated;
  }
  return Error::Ok;
}

}  // namespace

Error VirtualNpu::run(Span<const uint32_t> stream, Span<const Region> regions, Counters* counters,
                      Span<OpRecord> op_records, size_t* num_records) {
  if (work_memory_.size() < kInternalMemoryBytes) {
    KILN_LOG(Error, "work memory of %zu bytes is smaller than the internal memory (%zu)",
             work_memory_.size(), kInternalMemoryBytes);
    return Error::OutOfResources;
  }
  if (regions.size() > kMaxRegions) regions = Span<const Region>(regions.data(), kMaxRegions);
  Span<uint8_t> internal(work_memory_.data(), kInternalMemoryBytes);
  std::memset(internal.data(), 0, internal.size());
  ScratchArena scratch(Span<uint8_t>(work_memory_.data() + kInternalMemoryBytes,
                                     work_memory_.size() - kInternalMemoryBytes));
  RunState st;
  st.records = op_records;
  st.shram_bytes = default_shram_kib(config_) * 1024u;
  st.work_left = config_.max_macs;
  Error err;
  if (!stream.empty() && stream[0] == kCop1Magic) {
    err = run_driver_payload(config_, stream, regions, internal, scratch, st);
  } else {
    err = run_commands(config_, stream, regions, internal, scratch, st);
  }
  if (counters != nullptr) *counters = st.counters;
  if (num_records != nullptr) *num_records = st.num_records;
  return err;
}

}  // namespace kiln::vnpu
