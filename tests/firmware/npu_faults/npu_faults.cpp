// Firmware test: the register-level Ethos-U driver on the board's NPU, reached through its
// register window (on QEMU the device model behind the MPU register trap), meets every
// fault it must name — each followed by an inference that works on the same driver:
//   a bus error part-way through a stream, an interrupt that never comes (timeout), an
//   invalid command, a stream compiled for another product and for another MAC count, a
//   region outside the NPU's memory, a misaligned base, and an NPU already busy.
// The streams are built here from the programmer's model (COP1 payloads of DMA commands)
// so that each test breaks one thing. Exit 0 when every case gets its named error and
// every following inference copies its data; 1 otherwise (the log says which).
#include <cstdint>
#include <cstdio>
#include <cstring>

#include "backends/arm/registers/ethos_u_registers.h"
#include "backends/arm/runtime/ethos_u_hardware_driver.h"
#include "backends/arm/runtime/npu_identity.h"
#include "backends/arm/runtime/npu_memory_config.h"
#include "backends/arm/runtime/npu_register_port.h"
#include "examples/arm/platform/board.h"
#include "examples/arm/platform/board_npu.h"
#include "examples/arm/platform/npu_device_model.h"
#include "examples/arm/platform/register_trap.h"
#include "runtime/core/error.h"

// The NPU this firmware is built for (the device model is made as this one): the board's
// family (the build defines NPU_FAULTS_ETHOS_U85 for a board with an Ethos-U85).
#if NPU_FAULTS_ETHOS_U85
extern "C" const char* const kiln_embedded_npu_target = "ethos-u85-256";
#else
extern "C" const char* const kiln_embedded_npu_target = "ethos-u55-128";
#endif

namespace {

using kiln::Error;
namespace eu = kiln::ethos_u;
namespace regs = kiln::ethos_u::regs;

/// COP1 configuration words (CONFIG's layout: MACs/cycle log2, SHRAM size or ports,
/// product) and the stream's architecture ID, as Vela writes them.
constexpr uint32_t kU55_128 = 0x00001807u, kU55_256 = 0x00001808u, kVelaU55Id = 0x10066001u;
constexpr uint32_t kU85_128 = 0x20000117u, kU85_256 = 0x20000118u, kVelaU85Id = 0x20007000u;
/// This NPU's configuration, one of another product, one of the same product with other MACs.
#if NPU_FAULTS_ETHOS_U85
constexpr uint32_t kThis = kU85_256, kThisId = kVelaU85Id;
constexpr uint32_t kOtherProduct = kU55_128, kOtherProductId = kVelaU55Id;
constexpr uint32_t kOtherMacs = kU85_128;
constexpr uint32_t kProduct = 2;  // CONFIG.product of the Ethos-U85
constexpr const char* kOtherProductName = "Ethos-U55-128";
constexpr const char* kOtherMacsName = "Ethos-U85-128";
#else
constexpr uint32_t kThis = kU55_128, kThisId = kVelaU55Id;
constexpr uint32_t kOtherProduct = kU85_256, kOtherProductId = kVelaU85Id;
constexpr uint32_t kOtherMacs = kU55_256;
constexpr uint32_t kProduct = 0;  // CONFIG.product of the Ethos-U55
constexpr const char* kOtherProductName = "Ethos-U85-256";
constexpr const char* kOtherMacsName = "Ethos-U55-256";
#endif

constexpr uint32_t kWeightBytes = 256, kScratchBytes = 1024;
constexpr size_t kMaxWords = 64;

// The NPU reads and writes only the board's NPU-visible memory: DDR here.
#define NPU_VISIBLE __attribute__((section(".bss.kiln_ddr.npu_faults"), aligned(16)))
NPU_VISIBLE uint8_t g_weights[kWeightBytes];
NPU_VISIBLE uint8_t g_scratch[kScratchBytes];
NPU_VISIBLE uint32_t g_payload[kMaxWords];
NPU_VISIBLE uint32_t g_busy_payload[kMaxWords];
/// Memory the NPU cannot reach (the DTCM: not NPU-visible in the board file).
alignas(16) uint8_t g_cpu_only[64];

/// A stream under construction: the COP1 header, then register commands.
struct Stream {
  uint32_t* words;
  size_t count = 0;
  explicit Stream(uint32_t* storage, uint32_t config, uint32_t id) : words(storage) {
    // "COP1", version, config, id, three NOPs, then the command stream action: 8 words, so
    // the commands start 32 bytes in (16-byte aligned, as QBASE must be).
    const uint32_t header[] = {0x31504f43u, 0x00100001u, config, id, 5u, 5u, 5u, 2u};
    for (uint32_t w : header) words[count++] = w;
  }
  Stream& cmd0(uint32_t code, uint32_t param) {
    words[count++] = code | (param << 16);
    return *this;
  }
  Stream& cmd1(uint32_t code, uint32_t value) {
    words[count++] = code | 0x4000u;
    words[count++] = value;
    return *this;
  }
  /// One DMA of `length` bytes from region `src_region` + src to region 1 + dst (on the
  /// Ethos-U85 as one unit of `length` bytes: DMA0_SIZE0 = 1).
  Stream& dma(uint32_t src_region, uint32_t src, uint32_t dst, uint32_t length) {
    cmd0(0x130, src_region).cmd0(0x131, 1).cmd1(0x030, src).cmd1(0x031, dst).cmd1(0x032, length);
    if (kProduct == 2) cmd0(0x132, 1);
    return cmd0(0x010, 0);
  }
  Stream& stop() { return cmd0(0x000, 0xffff); }
  /// The payload: the action word gets the command count.
  eu::NpuInvocation invocation(const eu::NpuRegion* regions, size_t num_regions) {
    words[7] = (static_cast<uint32_t>(count - 8) << 16) | 2u;
    eu::NpuInvocation invocation;
    invocation.command_stream = {words, count};
    invocation.regions = {regions, num_regions};
    return invocation;
  }
};

eu::NpuRegion g_regions[2] = {{g_weights, kWeightBytes, true}, {g_scratch, kScratchBytes, false}};

eu::EthosUHardwareDriver* g_driver = nullptr;
int g_failures = 0;

void on_npu_irq(void* driver) { static_cast<eu::EthosUHardwareDriver*>(driver)->handle_irq(); }

void check(bool ok, const char* what) {
  board_printf("%s [npu faults] %s\n", ok ? "I" : "E", what);
  if (!ok) ++g_failures;
}

/// A good inference: 64 bytes of weights DMA-ed into the scratch at 256.
void expect_inference_works(const char* after) {
  for (uint32_t i = 0; i < kWeightBytes; ++i) g_weights[i] = static_cast<uint8_t>(i * 7u + 3u);
  std::memset(g_scratch, 0, sizeof(g_scratch));
  Stream stream(g_payload, kThis, kThisId);
  stream.dma(0, 0, 256, 64).stop();
  eu::NpuCounters counters;
  const Error error = g_driver->invoke(stream.invocation(g_regions, 2), &counters);
  const bool copied = std::memcmp(g_scratch + 256, g_weights, 64) == 0;
  char line[160];
  std::snprintf(line, sizeof(line), "next inference after %s: %s, data %s, PMU %llu cycles, %llu AXI read beats",
                after, kiln::error_name(error), copied ? "copied" : "NOT copied",
                static_cast<unsigned long long>(counters.cycles),
                static_cast<unsigned long long>(counters.axi_read_beats));
  check(error == Error::Ok && copied && counters.cycles > 0 && counters.axi_read_beats > 0, line);
}

void expect_error(Error got, Error expected, const char* fault) {
  char line[160];
  std::snprintf(line, sizeof(line), "%s: %s (expected %s)", fault, kiln::error_name(got), kiln::error_name(expected));
  check(got == expected, line);
  expect_inference_works(fault);
}

}  // namespace

int main() {
  if (board_npu_start() != 0) return KILN_EXIT_RUNTIME_ERROR;
  kiln_npu_device* model = board_npu_device_model();
  if (model == nullptr) {
    board_printf("E [npu faults] the board has no NPU device model: fault injection needs one\n");
    return KILN_EXIT_RUNTIME_ERROR;
  }
  static eu::MmioRegisterPort port(KILN_BOARD_NPU_BASE);
  static const eu::NpuMemoryWindow memory[] = {
      {KILN_BOARD_NPU_VISIBLE_REGION_0_BASE, KILN_BOARD_NPU_VISIBLE_REGION_0_BASE, KILN_BOARD_NPU_VISIBLE_REGION_0_BYTES},
#if KILN_BOARD_NPU_VISIBLE_REGION_COUNT > 1
      {KILN_BOARD_NPU_VISIBLE_REGION_1_BASE, KILN_BOARD_NPU_VISIBLE_REGION_1_BASE, KILN_BOARD_NPU_VISIBLE_REGION_1_BYTES},
#endif
  };
  eu::EthosUDriverConfig config;
  config.base_address = KILN_BOARD_NPU_BASE;
  config.irq_number = KILN_BOARD_NPU_IRQ;
  eu::set_default_memory_config(kProduct, &config);
  config.npu_memory = {memory, sizeof(memory) / sizeof(memory[0])};
  config.wait_for_interrupt = &board_npu_wait_for_interrupt;
  config.clean_dcache = &board_dcache_clean;
  config.invalidate_dcache = &board_dcache_invalidate;
  config.timeout_us = 50u * 1000u;  // a hung NPU is given up after 50 ms
  static eu::EthosUHardwareDriver driver(port, config);
  g_driver = &driver;
  board_npu_set_irq_handler(&on_npu_irq, &driver);
  const Error initialized = driver.init();
  char identity[256];
  eu::describe_npu(driver.identity(), identity, sizeof(identity));
  board_printf("I [npu faults] NPU from its ID/CONFIG registers: %s (init: %s)\n", identity,
               kiln::error_name(initialized));
  if (initialized != Error::Ok) return KILN_EXIT_RUNTIME_ERROR;

  expect_inference_works("init");

  {  // A bus error part-way: a good DMA, then one to an address no memory answers.
    Stream stream(g_payload, kThis, kThisId);
    stream.dma(0, 0, 0, 16).dma(0, 0, 0x30000000u, 16).stop();
    expect_error(driver.invoke(stream.invocation(g_regions, 2), nullptr), Error::NpuBusError,
                 "bus error part-way through a stream");
  }
  {  // The interrupt never comes: the NPU hangs until the driver's timeout resets it.
    kiln_npu_device_inject_fault(model, KILN_NPU_FAULT_HANG, 0);
    Stream stream(g_payload, kThis, kThisId);
    stream.dma(0, 0, 256, 64).stop();
    expect_error(driver.invoke(stream.invocation(g_regions, 2), nullptr), Error::NpuTimeout,
                 "interrupt that never comes");
  }
  {  // An operation code the NPU does not have.
    Stream stream(g_payload, kThis, kThisId);
    stream.dma(0, 0, 0, 16);
    stream.words[stream.count++] = 0x0007u;
    stream.words[stream.count++] = 0xffff0000u;
    expect_error(driver.invoke(stream.invocation(g_regions, 2), nullptr), Error::NpuCommandStreamParseError,
                 "invalid command");
  }
  {  // Compiled for another product, and for this product with other MACs/cycle.
    char what[80];
    Stream product(g_payload, kOtherProduct, kOtherProductId);
    product.dma(0, 0, 256, 64).stop();
    std::snprintf(what, sizeof(what), "stream for another product (%s)", kOtherProductName);
    expect_error(driver.invoke(product.invocation(g_regions, 2), nullptr), Error::NpuConfigMismatch, what);
    Stream macs(g_payload, kOtherMacs, kThisId);
    macs.dma(0, 0, 256, 64).stop();
    std::snprintf(what, sizeof(what), "stream for another configuration (%s)", kOtherMacsName);
    expect_error(driver.invoke(macs.invocation(g_regions, 2), nullptr), Error::NpuConfigMismatch, what);
  }
  {  // A region in memory the NPU cannot reach, and a base pointer 4 bytes off.
    const eu::NpuRegion outside[2] = {g_regions[0], {g_cpu_only, sizeof(g_cpu_only), false}};
    Stream stream(g_payload, kThis, kThisId);
    stream.dma(0, 0, 0, 16).stop();
    expect_error(driver.invoke(stream.invocation(outside, 2), nullptr), Error::NpuRegionOutsideMemory,
                 "region outside the NPU's memory");
    const eu::NpuRegion misaligned[2] = {g_regions[0], {g_scratch + 4, 512, false}};
    Stream again(g_payload, kThis, kThisId);
    again.dma(0, 0, 0, 16).stop();
    expect_error(driver.invoke(again.invocation(misaligned, 2), nullptr), Error::NpuMisalignedBase,
                 "misaligned region base");
  }
  {  // Busy: another master started a long job (it completes after 3 STATUS reads).
    Stream other(g_busy_payload, kThis, kThisId);
    other.dma(0, 0, 512, 16).stop();
    other.invocation(g_regions, 2);
    kiln_npu_device_inject_fault(model, KILN_NPU_FAULT_SLOW, 3);
    volatile uint32_t* npu = reinterpret_cast<volatile uint32_t*>(KILN_BOARD_NPU_BASE);
    for (uint32_t n = 0; n < 2; ++n) {
      npu[regs::basep_lo(n) / 4] = static_cast<uint32_t>(reinterpret_cast<uintptr_t>(g_regions[n].data));
      npu[regs::basep_hi(n) / 4] = 0;
    }
    npu[regs::kQbase / 4] = static_cast<uint32_t>(reinterpret_cast<uintptr_t>(g_busy_payload + 8));
    npu[regs::kQbaseHi / 4] = 0;
    npu[regs::kQsize / 4] = static_cast<uint32_t>((other.count - 8) * 4);
    npu[regs::kCmd / 4] = regs::cmd::kClockPowerMask | regs::cmd::kTransitionToRunning;
    Stream stream(g_payload, kThis, kThisId);
    stream.dma(0, 0, 256, 64).stop();
    const Error busy = driver.invoke(stream.invocation(g_regions, 2), nullptr);
    while ((npu[regs::kStatus / 4] & regs::status::kRunning) != 0) {
    }
    expect_error(busy, Error::NpuBusy, "NPU already busy at start");
  }

  board_printf("%s [npu faults] %d failure(s); %llu register accesses trapped\n", g_failures == 0 ? "I" : "E",
               g_failures, static_cast<unsigned long long>(register_trap_accesses()));
  return g_failures == 0 ? KILN_EXIT_OK : KILN_EXIT_RUNTIME_ERROR;
}
