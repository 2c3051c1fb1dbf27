// The register-accurate device through its C interface, as a driver sees it: reset values
// and the reset sequence, the register window, CMD, running command streams through
// QBASE/BASEPn, STATUS for every way a stream ends, the interrupt, the memory boundary and
// injected faults. Expected CONFIG values are Vela's (its COP1 configuration words).
#include "backends/arm/vnpu/device/ethos_u_device.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "device_harness.h"
#include "stream_builder.h"
#include "u85_stream_builder.h"

extern "C" int kiln_device_c_api_smoke(void);  // ethos_u_device_c_api.c

namespace kiln::vnpu::device::testing {
namespace {

using vnpu::testing::StreamBuilder;
using vnpu::testing::U85StreamBuilder;
using u55::Cmd0;
using u55::Cmd1;
namespace status = regs::status;

/// DMA `length` bytes from weights+src to scratch+dst, then STOP.
std::vector<uint32_t> dma_stream(uint32_t src, uint32_t dst, uint32_t length, bool stop = true) {
  StreamBuilder s;
  s.cmd0(Cmd0::Dma0SrcRegion, 0).cmd0(Cmd0::Dma0DstRegion, 1);
  s.cmd1(Cmd1::Dma0Src, src).cmd1(Cmd1::Dma0Dst, dst).cmd1(Cmd1::Dma0Len, length).cmd0(Cmd0::OpDmaStart);
  if (stop) s.cmd0(Cmd0::OpStop, 0xffff);
  return s.words;
}

TEST(EthosUDevice, UsableFromC) { EXPECT_EQ(kiln_device_c_api_smoke(), 0); }

TEST(EthosUDevice, ConfigAndIdAreWhatVelaCompilesForAndTheHeadersDescribe) {
  // CONFIG of each target = the configuration word Vela 5.2 writes into its COP1 payload.
  const struct {
    const char* target;
    uint32_t config, id;
  } kTargets[] = {
      {"ethos-u55-32", 0x00001005u, 0x10104201u},   {"ethos-u55-64", 0x00001006u, 0x10104201u},
      {"ethos-u55-128", 0x00001807u, 0x10104201u},  {"ethos-u55-256", 0x00003008u, 0x10104201u},
      {"ethos-u65-256", 0x10003008u, 0x10066001u},  {"ethos-u65-512", 0x10006009u, 0x10066001u},
      {"ethos-u85-128", 0x20000117u, 0x20007001u},  {"ethos-u85-256", 0x20000118u, 0x20007001u},
      {"ethos-u85-512", 0x20001119u, 0x20007001u},  {"ethos-u85-1024", 0x2000251au, 0x20007001u},
      {"ethos-u85-2048", 0x2000261bu, 0x20007001u},
  };
  for (const auto& t : kTargets) {
    DeviceHarness npu;
    ASSERT_TRUE(npu.create(t.target)) << t.target;
    EXPECT_EQ(npu.read(regs::kConfig), t.config) << t.target;
    EXPECT_EQ(npu.read(regs::kId), t.id) << t.target;
  }
}

TEST(EthosUDevice, PowerOnResetValues) {
  DeviceHarness npu;
  ASSERT_TRUE(npu.create("ethos-u55-128", /*reset_reads=*/2));
  // A power-on reset in progress: STATUS says so, everything else reads 0, writes are lost.
  EXPECT_EQ(npu.read(regs::kStatus), status::kResetInProgress);
  EXPECT_EQ(npu.read(regs::kId), 0u);
  npu.write(regs::kQsize, 64);
  EXPECT_EQ(npu.read(regs::kStatus), status::kResetInProgress);
  EXPECT_EQ(npu.read(regs::kStatus), 0u);
  EXPECT_EQ(npu.read(regs::kQsize), 0u);
  EXPECT_EQ(npu.read(regs::kCmd), regs::cmd::kClockQEnable | regs::cmd::kPowerQEnable);
  EXPECT_EQ(npu.read(regs::kProt), 0u);
  EXPECT_EQ(npu.read(regs::kQread), 0u);
  EXPECT_EQ(npu.read(regs::kEthosU55.pmcr), 4u << regs::pmu::kPmcrNumEventCountersShift);
  DeviceHarness u85;
  ASSERT_TRUE(u85.create("ethos-u85-256"));
  EXPECT_EQ(u85.read(regs::kEthosU85.pmcr), 8u << regs::pmu::kPmcrNumEventCountersShift);
}

TEST(EthosUDevice, SoftResetTakesTheRequestedLevelsAndClearsTheRegisters) {
  DeviceHarness npu;
  ASSERT_TRUE(npu.create("ethos-u55-128", /*reset_reads=*/3));
  while (npu.read(regs::kStatus) & status::kResetInProgress) {
  }
  npu.write(regs::kQbase, 0x1230);
  npu.write(regs::kRegionCfg, 0x25);
  npu.write(regs::kReset, regs::prot::kPrivileged | regs::prot::kNonSecure);
  int reads = 0;
  while (npu.read(regs::kStatus) & status::kResetInProgress) ++reads;
  EXPECT_EQ(reads, 3);
  EXPECT_EQ(npu.read(regs::kProt), regs::prot::kPrivileged | regs::prot::kNonSecure);
  EXPECT_EQ(npu.read(regs::kQbase), 0u);
  EXPECT_EQ(npu.read(regs::kRegionCfg), 0u);
}

TEST(EthosUDevice, RegisterWindowAndUnnamedOffsets) {
  DeviceHarness npu;
  ASSERT_TRUE(npu.create("ethos-u55-128"));
  uint32_t value = 7;
  EXPECT_EQ(kiln_npu_device_read(npu.device(), 0x2, &value), KILN_NPU_DEVICE_BAD_OFFSET);
  EXPECT_EQ(kiln_npu_device_read(npu.device(), 0x1000, &value), KILN_NPU_DEVICE_BAD_OFFSET);  // U55 window: 4 KiB
  EXPECT_EQ(kiln_npu_device_write(npu.device(), 0x1001, 0), KILN_NPU_DEVICE_BAD_OFFSET);
  EXPECT_EQ(npu.read(0x0FC0), 0u);  // inside the window, not modelled: reads zero
  npu.write(regs::kId, 5);          // read-only
  EXPECT_EQ(npu.read(regs::kId), 0x10104201u);
  npu.write(regs::kEthosU55.lock, 0xabcd);
  EXPECT_EQ(npu.read(regs::kEthosU55.lock), 0xabcdu);
  // Bus addresses: 32 bits on the U55 (high words read as zero), 40 on the U65/U85.
  npu.write(regs::basep_hi(3), 0xffffffffu);
  EXPECT_EQ(npu.read(regs::basep_hi(3)), 0u);
  DeviceHarness u85;
  ASSERT_TRUE(u85.create("ethos-u85-128"));
  u85.write(regs::basep_hi(3), 0xffffffffu);
  EXPECT_EQ(u85.read(regs::basep_hi(3)), 0xffu);
  EXPECT_EQ(kiln_npu_device_read(u85.device(), 0x13FC, &value), KILN_NPU_DEVICE_OK);  // its PMU is at 0x1180+
}

TEST(EthosUDevice, RunsAStreamThroughTheRegistersAndInterrupts) {
  DeviceHarness npu;
  ASSERT_TRUE(npu.create());
  for (size_t i = 0; i < kWeightBytes; ++i) npu.weights()[i] = static_cast<uint8_t>(i * 3);
  const std::vector<uint32_t> words = dma_stream(16, 100, 32);
  const uint32_t s = npu.run(words);
  EXPECT_EQ(s & (status::kRunning | status::kIrqRaised | status::kCmdEndReached),
            status::kIrqRaised | status::kCmdEndReached);
  EXPECT_EQ(npu.read(regs::kQread), words.size() * 4);
  EXPECT_TRUE(std::equal(npu.weights() + 16, npu.weights() + 48, npu.scratch() + 100));
  EXPECT_EQ(npu.raised, 1);
  npu.write(regs::kCmd, regs::cmd::kClockPowerMask | regs::cmd::kClearIrq);
  EXPECT_EQ(npu.read(regs::kStatus) & status::kIrqRaised, 0u);
  EXPECT_EQ(npu.lowered, 1);
  // A new QSIZE clears cmd_end_reached; the stream runs again.
  npu.write(regs::kQsize, static_cast<uint32_t>(words.size() * 4));
  EXPECT_EQ(npu.read(regs::kStatus) & status::kCmdEndReached, 0u);
  EXPECT_NE(npu.run(words) & status::kCmdEndReached, 0u);
  EXPECT_TRUE(npu.guards_intact());
}

TEST(EthosUDevice, ARegionEndsWhereItsMemoryRangeEnds) {
  DeviceHarness npu;
  ASSERT_TRUE(npu.create());
  // BASEP1 512 bytes into the 1 KiB scratch: region 1 has 512 bytes; a DMA to 500..516
  // crosses the end of the range and is a bus abort, not a write past it.
  const uint32_t s = npu.run(dma_stream(0, 500, 16), kScratchBus + 512);
  EXPECT_NE(s & status::kBusError, 0u);
  EXPECT_EQ(s & (status::kRunning | status::kCmdEndReached), 0u);
  EXPECT_NE(s & status::kIrqRaised, 0u);
  EXPECT_TRUE(npu.guards_intact());
  for (size_t i = 0; i < kScratchBytes; ++i) ASSERT_EQ(npu.scratch()[i], 0xee) << i;
}

TEST(EthosUDevice, AddressesOutsideTheMemoryAreBusErrors) {
  DeviceHarness npu;
  ASSERT_TRUE(npu.create());
  EXPECT_NE(npu.run(dma_stream(0, 0, 16), /*basep1=*/0x900000) & status::kBusError, 0u);
  npu.write(regs::kReset, 0);
  // A command stream that is not in the memory: nothing is read; QREAD stays 0.
  npu.write(regs::kQbase, 0x5000);
  npu.write(regs::kQsize, 16);
  npu.write(regs::kCmd, regs::cmd::kTransitionToRunning);
  const uint32_t s = npu.read(regs::kStatus);
  EXPECT_NE(s & status::kBusError, 0u);
  EXPECT_EQ((s >> status::kFaultingChannelShift) & 0xfu, 0u);  // the command read
  EXPECT_EQ(npu.read(regs::kQread), 0u);
  npu.write(regs::kReset, 0);
  // A QBASE range that runs past the end of its memory range.
  npu.write(regs::kQbase, static_cast<uint32_t>(kStreamBus + kStreamWords * 4 - 8));
  npu.write(regs::kQsize, 16);
  npu.write(regs::kCmd, regs::cmd::kTransitionToRunning);
  EXPECT_NE(npu.read(regs::kStatus) & status::kBusError, 0u);
}

TEST(EthosUDevice, AWriteToReadOnlyMemoryIsABusError) {
  DeviceHarness npu;
  ASSERT_TRUE(npu.create());
  StreamBuilder s;  // scratch -> weights
  s.cmd0(Cmd0::Dma0SrcRegion, 1).cmd0(Cmd0::Dma0DstRegion, 0);
  s.cmd1(Cmd1::Dma0Src, 0).cmd1(Cmd1::Dma0Dst, 0).cmd1(Cmd1::Dma0Len, 16).cmd0(Cmd0::OpDmaStart).cmd0(Cmd0::OpStop);
  std::fill(npu.weights(), npu.weights() + kWeightBytes, 0x11);
  EXPECT_NE(npu.run(s.words) & status::kBusError, 0u);
  for (size_t i = 0; i < kWeightBytes; ++i) ASSERT_EQ(npu.weights()[i], 0x11);
}

TEST(EthosUDevice, MalformedStreamsAreParseErrorsAtTheirCommand) {
  DeviceHarness npu;
  ASSERT_TRUE(npu.create());
  std::vector<uint32_t> words = dma_stream(0, 0, 4, /*stop=*/false);
  const size_t bad = words.size();
  words.push_back(0x0007);  // no such operation
  words.push_back(0x0000);
  const uint32_t s = npu.run(words);
  EXPECT_NE(s & status::kCmdParseError, 0u);
  EXPECT_EQ(s & status::kCmdEndReached, 0u);
  EXPECT_EQ(npu.read(regs::kQread), bad * 4);
  // A fault is latched until reset: a start is refused.
  npu.write(regs::kCmd, regs::cmd::kClearIrq);
  npu.write(regs::kCmd, regs::cmd::kTransitionToRunning);
  EXPECT_EQ(npu.raised, 1);
  npu.write(regs::kReset, 0);
  EXPECT_NE(npu.run(dma_stream(0, 0, 4)) & status::kCmdEndReached, 0u);
}

TEST(EthosUDevice, AStreamWithoutStopEndsWithItsEndNotReached) {
  DeviceHarness npu;
  ASSERT_TRUE(npu.create());
  const std::vector<uint32_t> words = dma_stream(0, 0, 4, /*stop=*/false);
  const uint32_t s = npu.run(words);
  EXPECT_EQ(s & (status::kCmdEndReached | status::kRunning | status::kBusError | status::kCmdParseError), 0u);
  EXPECT_NE(s & status::kIrqRaised, 0u);
  EXPECT_EQ(npu.read(regs::kQread), words.size() * 4);
}

TEST(EthosUDevice, AWeightStreamThatDoesNotDecodeIsTheWeightDecodersFault) {
  // The per-channel scale record is valid (shift 62), the weight stream empty.
  StreamBuilder conv;
  conv.ifm(1, 0, 1, 1, 1).ofm(1, 128, 1, 1, 1).unit_output_stage();
  conv.cmd0(Cmd0::WeightRegion, 1).cmd1(Cmd1::WeightBase, 256).cmd1(Cmd1::WeightLength, 64);
  conv.cmd0(Cmd0::ScaleRegion, 1).cmd1(Cmd1::ScaleBase, 512).cmd1(Cmd1::ScaleLength, 10);
  conv.cmd0(Cmd0::OfmBlkDepthM1, 7).cmd0(Cmd0::OpConv).cmd0(Cmd0::OpStop);
  DeviceHarness npu;
  ASSERT_TRUE(npu.create());
  std::fill(npu.scratch(), npu.scratch() + kScratchBytes, 0);
  npu.scratch()[512 + 9] = 62;
  EXPECT_NE(npu.run(conv.words) & status::kWeightDecoderFault, 0u);
}

TEST(EthosUDevice, IrqHistoryCollectsNpuOpIrqMasks) {
  DeviceHarness npu;
  ASSERT_TRUE(npu.create());
  std::vector<uint32_t> words = {0x0001u | (0x0003u << 16), 0x0001u | (0x0100u << 16)};
  const std::vector<uint32_t> rest = dma_stream(0, 0, 4);
  words.insert(words.end(), rest.begin(), rest.end());
  EXPECT_EQ(npu.run(words) >> status::kIrqHistoryShift, 0x0103u);
  npu.write(regs::kCmd, (0x0001u << regs::cmd::kClearIrqHistoryShift) | regs::cmd::kClearIrq);
  EXPECT_EQ(npu.read(regs::kStatus) >> status::kIrqHistoryShift, 0x0102u);
}

TEST(EthosUDevice, AHungStreamRunsUntilResetOrStop) {
  DeviceHarness npu;
  ASSERT_TRUE(npu.create());
  ASSERT_EQ(kiln_npu_device_inject_fault(npu.device(), KILN_NPU_FAULT_HANG, 0), KILN_NPU_DEVICE_OK);
  for (int i = 0; i < 3; ++i) {
    const uint32_t s = i == 0 ? npu.run(dma_stream(0, 0, 4)) : npu.read(regs::kStatus);
    EXPECT_EQ(s & (status::kRunning | status::kIrqRaised), status::kRunning);
  }
  EXPECT_EQ(npu.raised, 0);
  npu.write(regs::kQbase, 0x40);  // ignored while running
  EXPECT_EQ(npu.read(regs::kQbase), kStreamBus);
  npu.write(regs::kCmd, regs::cmd::kStopRequest);
  EXPECT_EQ(npu.read(regs::kStatus) & (status::kRunning | status::kIrqRaised | status::kCmdEndReached),
            status::kIrqRaised);
  // The fault was one shot; a reset also ends a hung stream.
  ASSERT_EQ(kiln_npu_device_inject_fault(npu.device(), KILN_NPU_FAULT_HANG, 0), KILN_NPU_DEVICE_OK);
  npu.write(regs::kReset, 0);
  EXPECT_NE(npu.run(dma_stream(0, 0, 4)) & status::kRunning, 0u);
  npu.write(regs::kReset, 0);
  EXPECT_EQ(npu.read(regs::kStatus) & status::kRunning, 0u);
  EXPECT_NE(npu.run(dma_stream(0, 0, 4)) & status::kCmdEndReached, 0u);
}

TEST(EthosUDevice, ASlowStreamCompletesAfterItsStatusReads) {
  DeviceHarness npu;
  ASSERT_TRUE(npu.create());
  ASSERT_EQ(kiln_npu_device_inject_fault(npu.device(), KILN_NPU_FAULT_SLOW, 3), KILN_NPU_DEVICE_OK);
  EXPECT_NE(npu.run(dma_stream(0, 0, 4)) & status::kRunning, 0u);  // read 1
  EXPECT_NE(npu.read(regs::kStatus) & status::kRunning, 0u);         // read 2
  EXPECT_EQ(npu.raised, 0);
  EXPECT_NE(npu.read(regs::kStatus) & status::kRunning, 0u);  // read 3: completes after it
  EXPECT_EQ(npu.raised, 1);
  EXPECT_EQ(npu.read(regs::kStatus) & (status::kRunning | status::kCmdEndReached), status::kCmdEndReached);
}

TEST(EthosUDevice, ABranchLoopNeverCompletes) {
  DeviceHarness npu;
  ASSERT_TRUE(npu.create("ethos-u85-256", 0, /*max_commands=*/10000));
  U85StreamBuilder loop;
  loop.dma(0, 0, 1, 0, 4).branch(0);
  const uint32_t s = npu.run(loop.words);
  EXPECT_EQ(s & (status::kRunning | status::kIrqRaised), status::kRunning);
  npu.write(regs::kReset, 0);
  EXPECT_EQ(npu.read(regs::kStatus) & status::kRunning, 0u);
}

TEST(EthosUDevice, RefusesBadConfigurations) {
  alignas(64) unsigned char storage[8192];
  std::vector<uint8_t> work(kInternalMemoryBytes);
  kiln_npu_device_config config = {};
  config.target = "ethos-u55-129";
  config.work_memory = work.data();
  config.work_memory_bytes = work.size();
  kiln_npu_device* device = nullptr;
  EXPECT_EQ(kiln_npu_device_create(storage, sizeof(storage), &config, &device), KILN_NPU_DEVICE_INVALID_ARGUMENT);
  config.target = "ethos-u55-128";
  EXPECT_EQ(kiln_npu_device_create(storage, 8, &config, &device), KILN_NPU_DEVICE_INVALID_ARGUMENT);
  EXPECT_EQ(kiln_npu_device_create(storage + 1, sizeof(storage) - 1, &config, &device),
            KILN_NPU_DEVICE_INVALID_ARGUMENT);
  uint8_t memory[64];
  const kiln_npu_memory_range overlapping[] = {{0x100, memory, 32, 0}, {0x110, memory + 32, 32, 0}};
  config.memory = overlapping;
  config.num_memory = 2;
  EXPECT_EQ(kiln_npu_device_create(storage, sizeof(storage), &config, &device), KILN_NPU_DEVICE_INVALID_ARGUMENT);
  config.num_memory = 1;
  ASSERT_EQ(kiln_npu_device_create(storage, sizeof(storage), &config, &device), KILN_NPU_DEVICE_OK);
  EXPECT_EQ(kiln_npu_device_set_memory(device, overlapping, 2), KILN_NPU_DEVICE_INVALID_ARGUMENT);
  EXPECT_EQ(kiln_npu_device_inject_fault(device, static_cast<kiln_npu_fault>(9), 0), KILN_NPU_DEVICE_INVALID_ARGUMENT);
}

}  // namespace
}  // namespace kiln::vnpu::device::testing
