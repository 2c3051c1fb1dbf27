// The Ethos-U programmer's model as data: register offsets, fields and values of the
// Ethos-U55, U65 and U85, for the register-level driver (backends/arm/runtime) and the
// virtual NPU's register-accurate device (backends/arm/vnpu/device) alike — one owner, so
// that the driver and the device cannot disagree about an offset.
//
// Facts from Arm's public Ethos-U core driver (its ethosu55/65/85 interface headers and
// device code). Registers every Ethos-U has at the same place are plain constants; what
// differs between the architectures (the memory configuration registers, where the PMU
// lives and how many event counters it has, the CONFIG layout, the address width) is one
// ArchRegisters table per architecture, looked up by the product number in CONFIG.
//
// Offsets are bytes from the NPU's base address; every register is 32 bits wide, 64-bit
// ones (QBASE, BASEPn, PMCCNTR) are a low word and a high word 4 bytes apart.
#pragma once

#include <cstdint>

namespace kiln::ethos_u::regs {

// ---- Registers at the same offset on every Ethos-U ----

/// Product and architecture version (read only; fields in namespace id).
constexpr uint32_t kId = 0x000;
/// Operating state, interrupt and fault bits (read only; fields in namespace status).
constexpr uint32_t kStatus = 0x004;
/// Commands: start, clear IRQ, clock/power enables (fields in namespace cmd).
constexpr uint32_t kCmd = 0x008;
/// Soft reset request with the security and privilege level to reset into.
constexpr uint32_t kReset = 0x00C;
/// Command stream base address (bus address, low and high word).
constexpr uint32_t kQbase = 0x010;
constexpr uint32_t kQbaseHi = 0x014;
/// Byte offset of the command the NPU reads next (read only).
constexpr uint32_t kQread = 0x018;
/// Memory configuration (0-3, as a REGIONCFG entry) the command stream is read through.
constexpr uint32_t kQconfig = 0x01C;
/// Command stream length in bytes.
constexpr uint32_t kQsize = 0x020;
/// The security and privilege level the NPU runs at (read only; fields in namespace prot).
constexpr uint32_t kProt = 0x024;
/// Hardware configuration: MACs, command stream version, product (read only).
constexpr uint32_t kConfig = 0x028;
/// Two bits per region (base pointer): the memory configuration the region is read and
/// written through.
constexpr uint32_t kRegionCfg = 0x03C;
/// Base pointers (regions) 0-7: BASEP<n> low word at basep_lo(n), high word 4 bytes on.
constexpr uint32_t kNumBasePointers = 8;
constexpr uint32_t basep_lo(uint32_t n) { return 0x080 + 8 * n; }
constexpr uint32_t basep_hi(uint32_t n) { return 0x084 + 8 * n; }
/// Memory configurations REGIONCFG and QCONFIG can name.
constexpr uint32_t kNumMemoryConfigs = 4;

// ---- PMU registers, as offsets from the architecture's PMCR (ArchRegisters::pmcr) ----
namespace pmu {
/// Control (fields below).
constexpr uint32_t kPmcr = 0x00;
/// Counter enables: write 1s to set / clear (bit n: PMEVCNTR<n>, bit 31: PMCCNTR).
constexpr uint32_t kPmcntenset = 0x04;
constexpr uint32_t kPmcntenclr = 0x08;
/// Overflow flags, same bit layout; write 1s to set / clear.
constexpr uint32_t kPmovsset = 0x0C;
constexpr uint32_t kPmovsclr = 0x10;
/// Overflow interrupt enables, same bit layout; write 1s to set / clear.
constexpr uint32_t kPmintset = 0x14;
constexpr uint32_t kPmintclr = 0x18;
/// The 48-bit cycle counter: low word, high word (bits 32-47).
constexpr uint32_t kPmccntrLo = 0x20;
constexpr uint32_t kPmccntrHi = 0x24;
/// Events that start and stop the cycle counter (fields below).
constexpr uint32_t kPmccntrCfg = 0x28;
/// AXI channel filter of the bandwidth events (fields below).
constexpr uint32_t kPmcaxiChan = 0x2C;

/// PMCR fields.
constexpr uint32_t kPmcrCountEnable = 1u << 0;
constexpr uint32_t kPmcrEventCounterReset = 1u << 1;
constexpr uint32_t kPmcrCycleCounterReset = 1u << 2;
/// NPU_OP_PMU_MASK in the command stream may gate the counters.
constexpr uint32_t kPmcrMaskEnable = 1u << 3;
/// Number of event counters (read only), bits 11-15.
constexpr uint32_t kPmcrNumEventCountersShift = 11;
/// PMCNTEN/PMOVS/PMINT bit of the cycle counter.
constexpr uint32_t kCycleCounterBit = 1u << 31;
/// The cycle counter is 48 bits wide; event counters 32.
constexpr uint64_t kCycleCounterMask = (uint64_t{1} << 48) - 1;
/// PMCCNTR_CFG: start event bits 0-9, stop event bits 16-25.
constexpr uint32_t kCycleStartShift = 0;
constexpr uint32_t kCycleStopShift = 16;
/// PMEVTYPER<n>: the event number, bits 0-9.
constexpr uint32_t kEventTypeMask = 0x3ff;
/// PMCAXI_CHAN: channel bits 0-3, counter select bits 8-9, channel filter enable bit 10.
constexpr uint32_t kAxiChannelMask = 0xf;
constexpr uint32_t kAxiChannelFilterEnable = 1u << 10;
}  // namespace pmu

/// PMU event numbers Kiln counts (the same numbers on every architecture; the U85 calls
/// AXI0/AXI1 "SRAM"/"EXT").
namespace event {
/// Never counts.
constexpr uint32_t kNone = 0;
/// Every NPU clock cycle.
constexpr uint32_t kCycle = 17;
/// Cycles the NPU is doing work (not idle).
constexpr uint32_t kNpuActive = 35;
/// Read data beats received on AXI port 0 (SRAM) / port 1 (external).
constexpr uint32_t kAxi0ReadBeats = 130;
constexpr uint32_t kAxi1ReadBeats = 386;
/// Write data beats sent on AXI port 0 (SRAM) / port 1 (external).
constexpr uint32_t kAxi0WriteBeats = 135;
constexpr uint32_t kAxi1WriteBeats = 391;
}  // namespace event

/// ID fields: version_status 0-3, version_minor 4-7, version_major 8-11 (the rNpN release),
/// product_major 12-15, architecture patch 16-19, minor 20-27, major 28-31.
namespace id {
constexpr uint32_t version_status(uint32_t v) { return v & 0xf; }
constexpr uint32_t version_minor(uint32_t v) { return (v >> 4) & 0xf; }
constexpr uint32_t version_major(uint32_t v) { return (v >> 8) & 0xf; }
constexpr uint32_t product_major(uint32_t v) { return (v >> 12) & 0xf; }
constexpr uint32_t arch_patch(uint32_t v) { return (v >> 16) & 0xf; }
constexpr uint32_t arch_minor(uint32_t v) { return (v >> 20) & 0xff; }
constexpr uint32_t arch_major(uint32_t v) { return v >> 28; }
}  // namespace id

/// CONFIG fields every architecture has: log2(MACs per cycle) bits 0-3, command stream
/// version 4-7, custom DMA 27, product 28-31. The rest is per architecture (ConfigLayout).
namespace config {
constexpr uint32_t macs_log2(uint32_t v) { return v & 0xf; }
constexpr uint32_t stream_version(uint32_t v) { return (v >> 4) & 0xf; }
constexpr uint32_t product(uint32_t v) { return v >> 28; }
constexpr uint32_t kMacsShift = 0, kStreamVersionShift = 4, kProductShift = 28;
}  // namespace config

/// STATUS bits.
namespace status {
/// 1 while the NPU runs a command stream.
constexpr uint32_t kRunning = 1u << 0;
/// The NPU's interrupt is raised (cleared by CMD.clear_irq).
constexpr uint32_t kIrqRaised = 1u << 1;
/// A bus abort stopped the NPU (cleared by reset only).
constexpr uint32_t kBusError = 1u << 2;
/// A soft reset is in progress: only STATUS can be read, writes are ignored.
constexpr uint32_t kResetInProgress = 1u << 3;
/// The command stream could not be parsed (cleared by reset only).
constexpr uint32_t kCmdParseError = 1u << 4;
/// The NPU reached the end of its command stream (NPU_OP_STOP).
constexpr uint32_t kCmdEndReached = 1u << 5;
/// A PMU counter overflowed with its interrupt enabled (cleared by CMD.clear_irq).
constexpr uint32_t kPmuIrqRaised = 1u << 6;
/// Ethos-U55/U65: the weight decoder met a stream it cannot decompress.
constexpr uint32_t kWeightDecoderFault = 1u << 7;
/// ECC fault in an internal RAM.
constexpr uint32_t kEccFault = 1u << 8;
/// Ethos-U85: a branch to an invalid command stream offset.
constexpr uint32_t kBranchFault = 1u << 9;
/// Bus abort details: interface bit 11, channel bits 12-15 (as PMCAXI_CHAN numbers).
constexpr uint32_t kFaultingInterfaceShift = 11;
constexpr uint32_t kFaultingChannelShift = 12;
/// Bits 16-31: the OR of the NPU_OP_IRQ masks since they were last cleared.
constexpr uint32_t kIrqHistoryShift = 16;
/// The value at power-on: a reset in progress.
constexpr uint32_t kResetValue = kResetInProgress;
}  // namespace status

/// CMD bits.
namespace cmd {
/// Write 1: start the command stream at QBASE (the NPU must be stopped).
constexpr uint32_t kTransitionToRunning = 1u << 0;
/// Write 1: clear STATUS.irq_raised (and pmu_irq_raised).
constexpr uint32_t kClearIrq = 1u << 1;
/// Let the clock / power Q-channel gate the NPU when idle (kept by the driver).
constexpr uint32_t kClockQEnable = 1u << 2;
constexpr uint32_t kPowerQEnable = 1u << 3;
/// Write 1: stop after the commands already started.
constexpr uint32_t kStopRequest = 1u << 4;
/// Bits 16-31: write 1s to clear those bits of STATUS' IRQ history.
constexpr uint32_t kClearIrqHistoryShift = 16;
/// The clock and power enables a driver writes back with every command.
constexpr uint32_t kClockPowerMask = kClockQEnable | kPowerQEnable;
/// The value at power-on: both Q-channels enabled.
constexpr uint32_t kResetValue = kClockQEnable | kPowerQEnable;
}  // namespace cmd

/// RESET and PROT: privilege level bit 0 (1 = privileged), security level bit 1 (1 =
/// non-secure). RESET requests the levels; PROT shows the ones in force.
namespace prot {
constexpr uint32_t kPrivileged = 1u << 0;
constexpr uint32_t kNonSecure = 1u << 1;
}  // namespace prot

/// REGIONCFG: memory configuration of region n in bits 2n..2n+1.
constexpr uint32_t region_config(uint32_t regioncfg, uint32_t region) {
  return (regioncfg >> (2 * region)) & 3u;
}

/// Ethos-U55/U65 AXI_LIMIT<k> fields (memory configuration k): max beats 0-1, memory type
/// 4-7, outstanding reads - 1 16-20, outstanding writes - 1 24-27.
namespace axi_limit {
constexpr uint32_t kMaxBeatsShift = 0, kMemTypeShift = 4, kMaxReadsM1Shift = 16,
                   kMaxWritesM1Shift = 24;
}  // namespace axi_limit

/// Ethos-U85 MEM_ATTR<k> fields (memory configuration k): memory domain 0-1, AXI port 2
/// (0 SRAM, 1 external), memory type 4-7. AXI_SRAM / AXI_EXT fields: outstanding reads - 1
/// 0-5, outstanding writes - 1 8-12, max beats 16-17.
namespace mem_attr {
constexpr uint32_t kDomainShift = 0, kPortShift = 2, kMemTypeShift = 4;
constexpr uint32_t kMaxReadsM1Shift = 0, kMaxWritesM1Shift = 8, kMaxBeatsShift = 16;
}  // namespace mem_attr

/// CONFIG fields that differ by architecture; a shift of kNoField means "not in CONFIG".
constexpr uint32_t kNoField = 0xff;
struct ConfigLayout {
  /// Ethos-U55/U65: SHRAM KiB (all cores), bits 8-15.
  uint32_t shram_kib_shift;
  /// Ethos-U85: log2 of SRAM AXI ports (bits 8-9), external ports (bit 10), weight
  /// decoders = cores (bits 12-13).
  uint32_t sram_ports_log2_shift, ext_ports_log2_shift, cores_log2_shift;
};

/// Which AXI port a memory configuration (REGIONCFG/QCONFIG value) uses.
struct PortSelect {
  /// Ethos-U85: bit `port_shift` of MEM_ATTR<k> names the port. Ethos-U55/U65: the port
  /// is fixed by the configuration number (fixed_port).
  bool from_mem_attr;
  uint32_t fixed_port[kNumMemoryConfigs];
};

/// One architecture's registers where they differ.
struct ArchRegisters {
  /// CONFIG.product / the COP1 config word's product field.
  uint32_t product;
  /// "Ethos-U55" (logs).
  const char* name;
  /// Width of bus addresses (QBASE, BASEPn): 32 on the U55, 40 on the U65 and U85.
  uint32_t address_bits;
  /// LOCK (a scratch register the hardware never interprets), or 0 where there is none.
  uint32_t lock;
  /// First of four memory configuration registers: AXI_LIMIT0-3 (U55/U65) or MEM_ATTR0-3
  /// (U85), 4 bytes apart.
  uint32_t memory_config0;
  /// Ethos-U85: AXI_SRAM and AXI_EXT (per-port limits); 0 where there are none.
  uint32_t axi_sram, axi_ext;
  PortSelect ports;
  /// PMCR, and the first PMEVCNTR / PMEVTYPER (4 bytes apart each).
  uint32_t pmcr, pmevcntr0, pmevtyper0;
  /// Event counters the PMU has.
  uint32_t num_event_counters;
  /// End of the register window (every register is below it).
  uint32_t window_bytes;
  /// Bytes one AXI data beat carries (the width of the NPU's AXI ports).
  uint32_t axi_bytes_per_beat;
  ConfigLayout config;
  /// The ID register's value: the architecture and product release the public interface
  /// headers describe (reset value).
  uint32_t id;
  /// The command stream version CONFIG reports.
  uint32_t stream_version;
  /// STATUS bit for a weight stream that does not decode (the U85 has no weight decoder
  /// fault bit: it is a command stream error there).
  uint32_t weight_fault_status;
};

constexpr ArchRegisters kEthosU55 = {
    0, "Ethos-U55", 32, 0x02C, 0x040, 0, 0, {false, {0, 0, 1, 1}},
    0x180, 0x300, 0x380, 4, 0x1000, 8,
    {8, kNoField, kNoField, kNoField}, 0x10104201u, 0, status::kWeightDecoderFault};
constexpr ArchRegisters kEthosU65 = {
    1, "Ethos-U65", 40, 0x02C, 0x040, 0, 0, {false, {0, 0, 1, 1}},
    0x180, 0x300, 0x380, 4, 0x1000, 16,
    {8, kNoField, kNoField, kNoField}, 0x10066001u, 0, status::kWeightDecoderFault};
constexpr ArchRegisters kEthosU85 = {
    2, "Ethos-U85", 40, 0, 0x040, 0x050, 0x054, {true, {0, 0, 0, 0}},
    0x1180, 0x1300, 0x1380, 8, 0x1400, 16,
    {kNoField, 8, 10, 12}, 0x20007001u, 1, status::kCmdParseError};

/// The table of CONFIG.product `product`, or nullptr for a product Kiln does not know.
constexpr const ArchRegisters* arch_registers(uint32_t product) {
  return product == 0 ? &kEthosU55 : product == 1 ? &kEthosU65 : product == 2 ? &kEthosU85 : nullptr;
}

/// The AXI port (0 or 1) memory configuration `config` uses, given MEM_ATTR<config>.
constexpr uint32_t port_of_memory_config(const ArchRegisters& arch, uint32_t config,
                                         uint32_t mem_attr_value) {
  return arch.ports.from_mem_attr ? (mem_attr_value >> mem_attr::kPortShift) & 1u
                                  : arch.ports.fixed_port[config & 3u];
}

/// Base pointers, QBASE and the memory a region starts at must be multiples of this.
constexpr uint32_t kBaseAlignment = 16;

}  // namespace kiln::ethos_u::regs
