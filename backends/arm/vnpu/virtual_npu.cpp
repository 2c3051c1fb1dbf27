// The command interpreter: unwraps the COP1 driver payload, decodes command words, keeps the
// register file, follows branches and dispatches operations. What a command means comes from
// the configuration's ArchLayer (arch.h); the loop itself is the same for every Ethos-U.
#include "backends/arm/vnpu/virtual_npu.h"

#include <cstring>

#include "backends/arm/vnpu/arch.h"
#include "backends/arm/vnpu/commands.h"
#include "backends/arm/vnpu/operation_observer.h"
#include "backends/arm/vnpu/ops/op_context.h"
#include "backends/arm/vnpu/ops/scratch_bound.h"
#include "backends/arm/vnpu/register_file.h"
#include "backends/arm/vnpu/scratch_arena.h"
#include "runtime/platform/log.h"

namespace kiln::vnpu {
namespace {

// Operations that only order work (everything here completes in order) or control the PMU.
constexpr uint32_t kOpStop = 0x000, kOpIrq = 0x001, kOpDmaStart = 0x010, kOpDmaWait = 0x011,
                   kOpKernelWait = 0x012, kOpPmuMask = 0x013;

struct RunState {
  RegisterFile regs;
  Counters counters;
  Span<OpRecord> records;
  size_t num_records = 0;
  uint32_t internal_bytes = 0;
  uint64_t work_left = 0;
  NpuState npu;
  OperationObserver* observer = nullptr;
  StreamEnd end;
  /// Sizing (work_memory_bytes): what the chain keeps so far, the most scratch seen.
  uint64_t kept_bytes = 0;
  uint64_t peak_bytes = 0;
  uint64_t weights_left_to_count = 0;  // sizing: set from Config::max_counted_weights
};

struct RunContext {
  const ArchLayer& arch;
  const Config& config;
  Span<const Region> regions;
  Span<uint8_t> internal;
  ScratchArena& scratch;
  RunState& st;
  /// Size the operations instead of running them (work_memory_bytes).
  bool sizing = false;
};

// Sizing: what the operation would take from the scratch, on top of what the chain keeps
// (released under the same condition as in run_operation).
void size_operation(RunState& st, const OpDesc& op, bool is_dma) {
  if (!is_dma && op.ifm.storage != FmStorage::Chained && op.ifm2.storage != FmStorage::Chained &&
      op.acc_source != AccSource::Keep) {
    st.kept_bytes = 0;
  }
  const ScratchBound b = scratch_bound(op, &st.weights_left_to_count);
  // Saturating: a bound past 2^64 stays too large to grant.
  const auto add = [](uint64_t a, uint64_t c) { return a > UINT64_MAX - c ? UINT64_MAX : a + c; };
  const uint64_t held = add(add(st.kept_bytes, b.operation), b.kept);
  if (held > st.peak_bytes) st.peak_bytes = held;
  st.kept_bytes = add(st.kept_bytes, b.kept);
  if (is_dma) {
    ++st.counters.dma_transfers;
  } else {
    ++st.counters.operations;
  }
}

// Runs one operation: decode, release the NPU's kept state if the op does not use it,
// dispatch, count.
Error run_operation(RunContext& rc, uint32_t index, uint32_t code, uint16_t param) {
  RunState& st = rc.st;
  const bool is_dma = code == kOpDmaStart;
  if (!is_dma && st.counters.operations >= rc.config.max_operations) {
    KILN_LOG(Error, "command %u: more than %llu operations", index,
             static_cast<unsigned long long>(rc.config.max_operations));
    return Error::NpuWorkLimitExceeded;
  }
  OpDesc op;
  Error err = rc.arch.decode(DecodeInput{st.regs, code, param, rc.config, st.internal_bytes}, &op);
  if (err != Error::Ok) {
    KILN_LOG(Error, "command %u: %s (param 0x%04x) has invalid registers: %s", index, rc.arch.cmd0_name(code),
             param, error_name(err));
    return err;
  }
  if (rc.sizing) {
    size_operation(st, op, is_dma);
    return Error::Ok;
  }
  rc.scratch.reset();
  if (!is_dma && op.ifm.storage != FmStorage::Chained && op.ifm2.storage != FmStorage::Chained &&
      op.acc_source != AccSource::Keep) {
    // A new chain or an op on its own: nothing the NPU kept is needed any more.
    st.npu.release();
    rc.scratch.release_persistent();
  }
  const Span<uint8_t> internal(rc.internal.data(), st.internal_bytes);
  OpContext ctx{op, rc.regions, internal, rc.scratch, st.npu, rc.config, st.work_left,
                OpRecord{}, st.counters.bytes_read, st.counters.bytes_written};
  ctx.record.kind = static_cast<uint16_t>(code);
  ctx.record.mode = (op.kind == OpKind::Pool || op.kind == OpKind::Elementwise || op.kind == OpKind::Resize) ? param : 0;
  ctx.record.command_index = index;
  switch (op.kind) {
    case OpKind::Conv: err = run_conv(ctx); break;
    case OpKind::Depthwise: err = run_depthwise(ctx); break;
    case OpKind::Pool: err = run_pool(ctx); break;
    case OpKind::Elementwise: err = run_elementwise(ctx); break;
    case OpKind::Resize: err = run_resize(ctx); break;
    default: err = run_dma(ctx); break;
  }
  if (err != Error::Ok) {
    KILN_LOG(Error, "command %u: %s (param 0x%04x) failed: %s", index, rc.arch.cmd0_name(code), param,
             error_name(err));
    return err;
  }
  st.work_left = ctx.work_budget;
  if (is_dma) {
    ++st.counters.dma_transfers;
  } else {
    ++st.counters.operations;
    if (ctx.record.chained != 0) ++st.counters.chained_operations;
    if (op.kind == OpKind::Conv || op.kind == OpKind::Depthwise) {
      st.counters.macs += ctx.record.macs;
    } else {
      st.counters.element_ops += ctx.record.macs;
    }
  }
  if (st.num_records < st.records.size()) st.records[st.num_records] = ctx.record;
  if (st.observer != nullptr) notify_operation_observer(*st.observer, st.num_records, ctx.record, op, rc.regions);
  ++st.num_records;
  return Error::Ok;
}

Error run_commands(RunContext& rc, Span<const uint32_t> words) {
  RunState& st = rc.st;
  RegisterFile& regs = st.regs;
  size_t i = 0;
  while (i < words.size()) {
    const uint32_t index = static_cast<uint32_t>(i);
    st.end.words_read = index;
    const uint32_t word = words[i];
    const uint32_t code = word & kCodeMask;
    const uint16_t param = static_cast<uint16_t>(word >> 16);
    const uint32_t payload_size = (word >> 14) & 3u;
    if (++st.counters.commands > rc.config.max_commands) {
      KILN_LOG(Error, "command %u: more than %llu commands (a branch that loops?)", index,
               static_cast<unsigned long long>(rc.config.max_commands));
      return Error::NpuWorkLimitExceeded;
    }
    if ((word & kReservedMask) != 0 || payload_size > 1) {
      KILN_LOG(Error, "command %u: word 0x%08x has reserved bits or payload size %u set", index, word, payload_size);
      return Error::NpuUnknownCommand;
    }
    if (payload_size == 1) {
      const char* name = rc.arch.cmd1_name(code);
      if (i + 1 >= words.size()) {
        KILN_LOG(Error, "command %u: %s (0x%03x) misses its payload word", index, name != nullptr ? name : "?", code);
        return Error::NpuStreamTruncated;
      }
      if (name == nullptr) {
        KILN_LOG(Error, "command %u: unknown %s cmd1 opcode 0x%03x", index, rc.arch.name, code);
        return Error::NpuUnknownCommand;
      }
      const uint32_t payload = words[i + 1];
      if (code < kFirstCmd1Operation) {
        regs.set_cmd1(code, param, payload);
        i += 2;
        continue;
      }
      // NPU_OP_BRANCH: parameter bit 0 = take it only if the last operation's result flag
      // is set; payload = target byte offset in this command stream.
      const bool conditional = (param & 1u) != 0;
      if (rc.sizing || (conditional && !st.npu.condition)) {
        i += 2;
        continue;
      }
      if (payload % 4 != 0 || payload / 4 >= words.size()) {
        KILN_LOG(Error, "command %u: branch target 0x%x lies outside the %zu-word command stream", index, payload,
                 words.size());
        return Error::NpuInvalidRegister;
      }
      ++st.counters.branches;
      i = payload / 4;
      continue;
    }
    ++i;
    const char* name = rc.arch.cmd0_name(code);
    if (name == nullptr) {
      KILN_LOG(Error, "command %u: unknown %s cmd0 opcode 0x%03x (word 0x%08x)", index, rc.arch.name, code, word);
      return Error::NpuUnknownCommand;
    }
    if (code >= kFirstCmd0Register) {
      regs.set_cmd0(code, param);
      continue;
    }
    if (code == kOpStop) {
      st.end.stop_reached = true;
      st.end.words_read = static_cast<uint32_t>(i);
      return Error::Ok;
    }
    if (code == kOpIrq) st.end.irq_mask = static_cast<uint16_t>(st.end.irq_mask | param);
    if (code == kOpIrq || code == kOpDmaWait || code == kOpKernelWait || code == kOpPmuMask) continue;
    Error err = run_operation(rc, index, code, param);
    if (err != Error::Ok) return err;
  }
  st.end.words_read = static_cast<uint32_t>(words.size());
  return Error::Ok;
}

const char* product_name(uint32_t product) {
  switch (product) {
    case 0: return "Ethos-U55";
    case 1: return "Ethos-U65";
    case 2: return "Ethos-U85";
    default: return "an unknown NPU";
  }
}

// Walks the COP1 driver actions; runs each CmdStream action.
Error run_driver_payload(RunContext& rc, Span<const uint32_t> words) {
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
      if (product != rc.arch.product) {
        KILN_LOG(Error, "COP1 stream was compiled for %s (product %u); this virtual NPU is configured as %s", 
                 product_name(product), product, rc.arch.name);
        return Error::NpuConfigMismatch;
      }
      StreamConfig sc;
      Error err = rc.arch.read_config_word(cfg, rc.config, &sc);
      if (err != Error::Ok) return err;
      rc.st.internal_bytes = sc.internal_bytes <= rc.internal.size() ? sc.internal_bytes
                                                                      : static_cast<uint32_t>(rc.internal.size());
      i += 3;
    } else if (action == static_cast<uint32_t>(DriverAction::CmdStream)) {
      const size_t length = (size_t{(tag >> 8) & 0xffu} << 16) | (tag >> 16);
      if (length > words.size() - i - 1) {
        KILN_LOG(Error, "COP1 word %zu: command stream of %zu words, only %zu left", i, length, words.size() - i - 1);
        return Error::NpuStreamTruncated;
      }
      Error err = run_commands(rc, Span<const uint32_t>(words.data() + i + 1, length));
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

bool parse_unsigned(const char* p, int* value) {
  int v = 0;
  if (*p == '\0') return false;
  for (; *p != '\0'; ++p) {
    if (*p < '0' || *p > '9' || v > 100000) return false;
    v = v * 10 + (*p - '0');
  }
  *value = v;
  return true;
}

}  // namespace

const ArchLayer& arch_layer(Arch arch) {
  switch (arch) {
    case Arch::EthosU65: return u55::kU65Layer;
    case Arch::EthosU85: return u85::kLayer;
    default: return u55::kU55Layer;
  }
}

bool config_from_target_name(const char* name, Config* config) {
  if (name == nullptr) return false;
  // Vela's targets and the cores it configures for each.
  struct Target {
    const char* prefix;
    Arch arch;
    int macs, cores;
  };
  static constexpr Target kTargets[] = {
      {"ethos-u55-", Arch::EthosU55, 32, 1},   {"ethos-u55-", Arch::EthosU55, 64, 1},
      {"ethos-u55-", Arch::EthosU55, 128, 1},  {"ethos-u55-", Arch::EthosU55, 256, 1},
      {"ethos-u65-", Arch::EthosU65, 256, 1},  {"ethos-u65-", Arch::EthosU65, 512, 2},
      {"ethos-u85-", Arch::EthosU85, 128, 1},  {"ethos-u85-", Arch::EthosU85, 256, 1},
      {"ethos-u85-", Arch::EthosU85, 512, 2},  {"ethos-u85-", Arch::EthosU85, 1024, 4},
      {"ethos-u85-", Arch::EthosU85, 2048, 4},
  };
  int macs = 0;
  if (std::strlen(name) <= 10 || !parse_unsigned(name + 10, &macs)) return false;
  for (const Target& t : kTargets) {
    if (std::strncmp(name, t.prefix, 10) == 0 && macs == t.macs) {
      config->arch = t.arch;
      config->macs = t.macs;
      config->cores = t.cores;
      return true;
    }
  }
  return false;
}

Error work_memory_bytes(const Config& config, Span<const uint32_t> stream, uint64_t* bytes) {
  *bytes = 0;
  if (config.cores < 1 || config.cores > 4 || config.macs < 1) {
    KILN_LOG(Error, "NPU configuration with %d MACs on %d cores does not exist", config.macs, config.cores);
    return Error::NpuConfigMismatch;
  }
  // Nothing is read or written: the internal memory and the scratch are never touched.
  ScratchArena no_scratch(Span<uint8_t>(nullptr, 0));
  RunState st;
  const ArchLayer& arch = arch_layer(config.arch);
  const uint32_t default_bytes = arch.default_internal_bytes(config);
  st.internal_bytes =
      default_bytes <= kInternalMemoryBytes ? default_bytes : static_cast<uint32_t>(kInternalMemoryBytes);
  st.work_left = config.max_macs;
  st.weights_left_to_count = config.max_counted_weights;
  RunContext rc{arch, config, Span<const Region>(), Span<uint8_t>(nullptr, kInternalMemoryBytes), no_scratch, st,
                /*sizing=*/true};
  const Error err =
      !stream.empty() && stream[0] == kCop1Magic ? run_driver_payload(rc, stream) : run_commands(rc, stream);
  if (err != Error::Ok) return err;
  *bytes = st.peak_bytes > UINT64_MAX - kInternalMemoryBytes ? UINT64_MAX : kInternalMemoryBytes + st.peak_bytes;
  return Error::Ok;
}

VirtualNpu::VirtualNpu(const Config& config, Span<uint8_t> work_memory)
    : config_(config), work_memory_(work_memory) {}

Error VirtualNpu::run(Span<const uint32_t> stream, Span<const Region> regions, Counters* counters,
                      Span<OpRecord> op_records, size_t* num_records) {
  return run_stream(StreamKind::DriverPayloadOrRegisters, stream, regions, counters, op_records,
                    num_records, nullptr);
}

Error VirtualNpu::run_registers(Span<const uint32_t> words, Span<const Region> regions,
                                Counters* counters, Span<OpRecord> op_records, size_t* num_records,
                                StreamEnd* end) {
  return run_stream(StreamKind::Registers, words, regions, counters, op_records, num_records, end);
}

Error VirtualNpu::run_stream(StreamKind kind, Span<const uint32_t> stream, Span<const Region> regions,
                             Counters* counters, Span<OpRecord> op_records, size_t* num_records,
                             StreamEnd* end) {
  if (end != nullptr) *end = StreamEnd();
  if (work_memory_.size() < kInternalMemoryBytes) {
    KILN_LOG(Error, "work memory of %zu bytes is smaller than the internal memory (%zu)",
             work_memory_.size(), kInternalMemoryBytes);
    return Error::OutOfResources;
  }
  if (config_.cores < 1 || config_.cores > 4 || config_.macs < 1) {
    KILN_LOG(Error, "NPU configuration with %d MACs on %d cores does not exist", config_.macs, config_.cores);
    return Error::NpuConfigMismatch;
  }
  if (regions.size() > kMaxRegions) regions = Span<const Region>(regions.data(), kMaxRegions);
  Span<uint8_t> internal(work_memory_.data(), kInternalMemoryBytes);
  std::memset(internal.data(), 0, internal.size());
  ScratchArena scratch(Span<uint8_t>(work_memory_.data() + kInternalMemoryBytes,
                                     work_memory_.size() - kInternalMemoryBytes));
  RunState st;
  st.records = op_records;
  const ArchLayer& arch = arch_layer(config_.arch);
  const uint32_t default_bytes = arch.default_internal_bytes(config_);
  st.internal_bytes = default_bytes <= internal.size() ? default_bytes : static_cast<uint32_t>(internal.size());
  st.observer = observer_;
  st.work_left = config_.max_macs;
  RunContext rc{arch, config_, regions, internal, scratch, st};
  Error err;
  if (kind == StreamKind::DriverPayloadOrRegisters && !stream.empty() && stream[0] == kCop1Magic) {
    err = run_driver_payload(rc, stream);
  } else {
    err = run_commands(rc, stream);
  }
  st.counters.work_memory_used = kInternalMemoryBytes + scratch.peak_bytes();
  if (counters != nullptr) *counters = st.counters;
  if (num_records != nullptr) *num_records = st.num_records;
  if (end != nullptr) *end = st.end;
  return err;
}

}  // namespace kiln::vnpu
