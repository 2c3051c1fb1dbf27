// The register-level driver against the virtual NPU's register-accurate device, its real
// partner: identification, a run with its cache maintenance and PMU counts, and every fault
// the driver must name — each followed by an inference that works on the same driver.
#include "backends/arm/runtime/ethos_u_hardware_driver.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

#include "backends/arm/runtime/ethos_u_backend.h"
#include "tests/cpp/ethos_u/npu_test_board.h"
#include "tests/cpp/vnpu/stream_builder.h"

namespace kiln_test {
namespace {

using kiln::Error;
using kiln::ethos_u::NpuCounters;
namespace regs = kiln::ethos_u::regs;
using kiln::vnpu::testing::StreamBuilder;
using kiln::vnpu::u55::Cmd0;
using kiln::vnpu::u55::Cmd1;

constexpr uint32_t kU55_128 = 0x00001807u, kVelaId = 0x10066001u;

/// A valid inference: DMA 64 bytes of weights into the scratch at 256.
std::vector<uint32_t> good_payload() { return cop1_payload(kU55_128, kVelaId, dma_commands(0, 0, 256, 64)); }

/// Runs the good payload and checks its result.
void expect_inference_works(NpuTestBoard& board) {
  for (size_t i = 0; i < NpuTestBoard::kWeightBytes; ++i) board.weights()[i] = static_cast<uint8_t>(i ^ 0x5a);
  std::fill(board.scratch(), board.scratch() + NpuTestBoard::kScratchBytes, 0);
  ASSERT_EQ(board.driver().invoke(board.invocation(good_payload()), nullptr), Error::Ok);
  EXPECT_TRUE(std::equal(board.weights(), board.weights() + 64, board.scratch() + 256));
}

TEST(EthosUHardwareDriver, InitResetsAndIdentifiesTheNpu) {
  NpuTestBoard board("ethos-u65-512");
  EXPECT_FALSE(board.driver().is_available());
  CapturedLog log;
  ASSERT_EQ(board.driver().init(), Error::Ok);
  EXPECT_TRUE(board.driver().is_available());
  EXPECT_STREQ(board.driver().identity().arch->name, "Ethos-U65");
  EXPECT_EQ(board.driver().identity().macs, 512u);
  EXPECT_EQ(board.driver().identity().config, 0x10006009u);
  EXPECT_TRUE(log.contains("Ethos-U65 with 512 MACs/cycle, 96 KiB SHRAM"));
  EXPECT_TRUE(log.contains("architecture 1.0.6"));
  EXPECT_EQ(board.driver().region_alignment(), 16u);
  EXPECT_STREQ(board.driver().name(), "ethos-u");
  // The reset took the configured levels: secure and privileged.
  uint32_t prot = 0;
  ASSERT_EQ(kiln_npu_device_read(board.device(), regs::kProt, &prot), KILN_NPU_DEVICE_OK);
  EXPECT_EQ(prot, regs::prot::kPrivileged);
}

TEST(EthosUHardwareDriver, InvokeBeforeInitIsRefused) {
  NpuTestBoard board;
  EXPECT_EQ(board.driver().invoke(board.invocation(good_payload()), nullptr), Error::InvalidState);
  const kiln::ethos_u::EthosUBackend backend(&board.driver());
  EXPECT_FALSE(backend.is_available());
}

TEST(EthosUHardwareDriver, AResetThatNeverCompletesIsNamed) {
  NpuTestBoard board("ethos-u55-128", /*reset_reads=*/50);
  board.config().reset_polls = 10;
  board.rebuild_driver();
  EXPECT_EQ(board.driver().init(), Error::NpuResetFailed);
  EXPECT_FALSE(board.driver().is_available());
  board.config().reset_polls = 100;
  board.rebuild_driver();
  EXPECT_EQ(board.driver().init(), Error::Ok);
}

TEST(EthosUHardwareDriver, RunsAStreamWithCacheMaintenanceAndPmuCounts) {
  NpuTestBoard board;
  ASSERT_EQ(board.driver().init(), Error::Ok);
  for (size_t i = 0; i < NpuTestBoard::kWeightBytes; ++i) board.weights()[i] = static_cast<uint8_t>(i);
  const std::vector<uint32_t> payload = good_payload();
  NpuCounters counters;
  counters.macs = 99;
  ASSERT_EQ(board.driver().invoke(board.invocation(payload), &counters), Error::Ok);
  EXPECT_TRUE(std::equal(board.weights(), board.weights() + 64, board.scratch() + 256));
  // Cleaned: the command stream (after the 32-byte payload header) and both regions;
  // invalidated: the writable region only.
  ASSERT_EQ(board.cleaned.size(), 3u);
  EXPECT_EQ(board.cleaned[0].data, board.payload() + 8);
  EXPECT_EQ(board.cleaned[0].bytes, (payload.size() - 8) * 4);
  EXPECT_EQ(board.cleaned[1].data, board.weights());
  EXPECT_EQ(board.cleaned[2].data, board.scratch());
  ASSERT_EQ(board.invalidated.size(), 1u);
  EXPECT_EQ(board.invalidated[0].data, board.scratch());
  EXPECT_EQ(board.invalidated[0].bytes, NpuTestBoard::kScratchBytes);
  // The PMU by the device's documented estimate: a DMA of 64 + 64 bytes on an 8-byte port
  // is 16 cycles + 32 setup; the fetch of 10 command words (40 bytes) is 5 more. Beats:
  // 64 bytes read and 64 written (8 each), plus 5 beats of commands read.
  EXPECT_EQ(counters.active_cycles, 48u);
  EXPECT_EQ(counters.cycles, 53u);
  EXPECT_EQ(counters.axi_read_beats, 8u + 5u);
  EXPECT_EQ(counters.axi_write_beats, 8u);
  EXPECT_EQ(counters.macs, 0u);  // a PMU has no MAC count: the driver leaves it at zero
}

TEST(EthosUHardwareDriver, WaitsThroughTheBoardsWaitHook) {
  NpuTestBoard board;
  board.use_wait_hook();
  board.wait_reads_status = true;
  ASSERT_EQ(board.driver().init(), Error::Ok);
  ASSERT_EQ(kiln_npu_device_inject_fault(board.device(), KILN_NPU_FAULT_SLOW, 4), KILN_NPU_DEVICE_OK);
  expect_inference_works(board);
  EXPECT_GE(board.waits, 3);
}

TEST(EthosUHardwareDriver, ABusErrorPartWayThroughAStreamIsNamedAndRecovered) {
  // The device's bus reaches 512 of the scratch's 1024 bytes: the driver's window (the
  // board's memory map) says more than the hardware has.
  NpuTestBoard board("ethos-u55-128", 2, /*scratch_on_bus=*/512);
  ASSERT_EQ(board.driver().init(), Error::Ok);
  std::vector<uint32_t> commands = dma_commands(0, 0, 0, 16, /*stop=*/false);  // fine
  const std::vector<uint32_t> beyond = dma_commands(0, 0, 600, 16);           // past the bus
  commands.insert(commands.end(), beyond.begin(), beyond.end());
  CapturedLog log;
  NpuCounters counters;
  EXPECT_EQ(board.driver().invoke(board.invocation(cop1_payload(kU55_128, kVelaId, commands)), &counters),
            Error::NpuBusError);
  EXPECT_TRUE(log.contains("bus abort"));
  // The PMU counted the work done before the fault: the first DMA, 32 bytes = 4 cycles + 32.
  EXPECT_EQ(counters.active_cycles, 36u);
  expect_inference_works(board);
}

TEST(EthosUHardwareDriver, AnInvalidCommandIsAParseError) {
  NpuTestBoard board;
  ASSERT_EQ(board.driver().init(), Error::Ok);
  std::vector<uint32_t> commands = dma_commands(0, 0, 0, 16, /*stop=*/false);
  commands.push_back(0x0007);  // no such operation
  commands.push_back(0xffff0000u);
  EXPECT_EQ(board.driver().invoke(board.invocation(cop1_payload(kU55_128, kVelaId, commands)), nullptr),
            Error::NpuCommandStreamParseError);
  expect_inference_works(board);
}

TEST(EthosUHardwareDriver, AStreamWithoutItsEndIsNamed) {
  NpuTestBoard board;
  ASSERT_EQ(board.driver().init(), Error::Ok);
  EXPECT_EQ(board.driver().invoke(board.invocation(cop1_payload(kU55_128, kVelaId, dma_commands(0, 0, 0, 16, false))),
                                  nullptr),
            Error::NpuEndOfStreamNotReached);
  expect_inference_works(board);
}

TEST(EthosUHardwareDriver, AnInterruptThatNeverComesTimesOutAndResets) {
  NpuTestBoard board;
  ASSERT_EQ(board.driver().init(), Error::Ok);
  ASSERT_EQ(kiln_npu_device_inject_fault(board.device(), KILN_NPU_FAULT_HANG, 0), KILN_NPU_DEVICE_OK);
  CapturedLog log;
  EXPECT_EQ(board.driver().invoke(board.invocation(good_payload()), nullptr), Error::NpuTimeout);
  EXPECT_TRUE(log.contains("no completion interrupt"));
  uint32_t status = 0;
  ASSERT_EQ(kiln_npu_device_read(board.device(), regs::kStatus, &status), KILN_NPU_DEVICE_OK);
  EXPECT_EQ(status & regs::status::kRunning, 0u);  // the reset stopped it
  expect_inference_works(board);
}

TEST(EthosUHardwareDriver, ABusyNpuIsRefusedUntilItsJobEnds) {
  NpuTestBoard board;
  ASSERT_EQ(board.driver().init(), Error::Ok);
  // Another master starts a long job on the NPU.
  const std::vector<uint32_t> payload = good_payload();
  board.invocation(payload);
  ASSERT_EQ(kiln_npu_device_inject_fault(board.device(), KILN_NPU_FAULT_SLOW, 3), KILN_NPU_DEVICE_OK);
  kiln_npu_device* device = board.device();
  kiln_npu_device_write(device, regs::kQbase, static_cast<uint32_t>(NpuTestBoard::kPayloadBus + 32));
  kiln_npu_device_write(device, regs::kQsize, static_cast<uint32_t>((payload.size() - 8) * 4));
  kiln_npu_device_write(device, regs::kCmd, regs::cmd::kTransitionToRunning);
  EXPECT_EQ(board.driver().invoke(board.invocation(payload), nullptr), Error::NpuBusy);
  uint32_t status = regs::status::kRunning;
  while ((status & regs::status::kRunning) != 0) kiln_npu_device_read(device, regs::kStatus, &status);
  expect_inference_works(board);
}

TEST(EthosUHardwareDriver, AStreamForAnotherNpuIsRefusedNamingBoth) {
  NpuTestBoard board("ethos-u55-128");
  ASSERT_EQ(board.driver().init(), Error::Ok);
  {
    CapturedLog log;
    EXPECT_EQ(board.driver().invoke(board.invocation(cop1_payload(0x20000118u, 0x20007000u, dma_commands(0, 0, 0, 4))),
                                    nullptr),
              Error::NpuConfigMismatch);
    EXPECT_TRUE(log.contains("compiled for Ethos-U85 with 256 MACs/cycle"));
    EXPECT_TRUE(log.contains("this NPU is Ethos-U55 with 128 MACs/cycle"));
  }
  // Same product, other MACs; another SHRAM size; a newer architecture.
  EXPECT_EQ(board.driver().invoke(board.invocation(cop1_payload(0x3008u, kVelaId, dma_commands(0, 0, 0, 4))), nullptr),
            Error::NpuConfigMismatch);
  EXPECT_EQ(board.driver().invoke(board.invocation(cop1_payload(0x3007u, kVelaId, dma_commands(0, 0, 0, 4))), nullptr),
            Error::NpuConfigMismatch);
  EXPECT_EQ(board.driver().invoke(board.invocation(cop1_payload(kU55_128, 0x10266001u, dma_commands(0, 0, 0, 4))),
                                  nullptr),
            Error::NpuConfigMismatch);
  // The program's target name is checked too, COP1 or not.
  EXPECT_EQ(board.driver().invoke(board.invocation(good_payload(), "ethos-u55-256"), nullptr), Error::NpuConfigMismatch);
  EXPECT_EQ(board.driver().invoke(board.invocation(dma_commands(0, 0, 0, 4), "ethos-u85-128"), nullptr),
            Error::NpuConfigMismatch);
  EXPECT_EQ(board.driver().invoke(board.invocation(good_payload(), "ethos-u55-128"), nullptr), Error::Ok);
  expect_inference_works(board);
}

TEST(EthosUHardwareDriver, ARegionOutsideTheBoardsMemoryIsRefused) {
  NpuTestBoard board;
  ASSERT_EQ(board.driver().init(), Error::Ok);
  std::vector<uint8_t> elsewhere(256);
  kiln::ethos_u::NpuInvocation invocation = board.invocation(good_payload());
  kiln::ethos_u::NpuRegion regions[2] = {board.regions()[0], {elsewhere.data(), elsewhere.size(), false}};
  invocation.regions = {regions, 2};
  EXPECT_EQ(board.driver().invoke(invocation, nullptr), Error::NpuRegionOutsideMemory);
  // A region that starts inside a window but runs past its end.
  regions[1] = {board.scratch() + 512, NpuTestBoard::kScratchBytes, false};
  EXPECT_EQ(board.driver().invoke(invocation, nullptr), Error::NpuRegionOutsideMemory);
  // A command stream outside the NPU's memory.
  std::vector<uint32_t> copy = good_payload();
  kiln::ethos_u::NpuInvocation outside = board.invocation(good_payload());
  outside.command_stream = {copy.data(), copy.size()};
  EXPECT_EQ(board.driver().invoke(outside, nullptr), Error::NpuRegionOutsideMemory);
  expect_inference_works(board);
}

TEST(EthosUHardwareDriver, AMisalignedBaseIsRefused) {
  NpuTestBoard board;
  ASSERT_EQ(board.driver().init(), Error::Ok);
  kiln::ethos_u::NpuInvocation invocation = board.invocation(good_payload());
  kiln::ethos_u::NpuRegion regions[2] = {board.regions()[0], {board.scratch() + 4, 512, false}};
  invocation.regions = {regions, 2};
  CapturedLog log;
  EXPECT_EQ(board.driver().invoke(invocation, nullptr), Error::NpuMisalignedBase);
  EXPECT_TRUE(log.contains("region 1 starts at bus address 0x20004"));
  // A command stream 4 bytes off: one NOP fewer in the payload header.
  std::vector<uint32_t> payload = good_payload();
  payload.erase(payload.begin() + 4);
  EXPECT_EQ(board.driver().invoke(board.invocation(payload), nullptr), Error::NpuMisalignedBase);
  expect_inference_works(board);
}

TEST(EthosUHardwareDriver, AWeightStreamThatDoesNotDecodeIsNamed) {
  NpuTestBoard board;
  ASSERT_EQ(board.driver().init(), Error::Ok);
  // A 1x1 convolution in region 1 whose scale record is valid and whose weights are empty.
  StreamBuilder conv;
  conv.ifm(1, 0, 1, 1, 1).ofm(1, 128, 1, 1, 1).unit_output_stage();
  conv.cmd0(Cmd0::WeightRegion, 1).cmd1(Cmd1::WeightBase, 256).cmd1(Cmd1::WeightLength, 64);
  conv.cmd0(Cmd0::ScaleRegion, 1).cmd1(Cmd1::ScaleBase, 512).cmd1(Cmd1::ScaleLength, 10);
  conv.cmd0(Cmd0::OfmBlkDepthM1, 7).cmd0(Cmd0::OpConv).cmd0(Cmd0::OpStop, 0xffff);
  std::fill(board.scratch(), board.scratch() + NpuTestBoard::kScratchBytes, 0);
  board.scratch()[512 + 9] = 62;
  EXPECT_EQ(board.driver().invoke(board.invocation(cop1_payload(kU55_128, kVelaId, conv.words)), nullptr),
            Error::NpuWeightStreamInvalid);
  expect_inference_works(board);
}

TEST(EthosUHardwareDriver, AnEthosU85RunsAtItsOwnOffsets) {
  NpuTestBoard board("ethos-u85-256");
  ASSERT_EQ(board.driver().init(), Error::Ok);
  // DMA on the U85: DMA0_SIZE0 = 1 unit of `length` bytes.
  std::vector<uint32_t> commands = dma_commands(0, 0, 256, 64, /*stop=*/false);
  commands.insert(commands.end() - 1, 0x132u | (1u << 16));
  commands.push_back(0xffff0000u);
  for (size_t i = 0; i < 64; ++i) board.weights()[i] = static_cast<uint8_t>(200 - i);
  NpuCounters counters;
  ASSERT_EQ(board.driver().invoke(board.invocation(cop1_payload(0x20000118u, 0x20007000u, commands)), &counters),
            Error::Ok);
  EXPECT_TRUE(std::equal(board.weights(), board.weights() + 64, board.scratch() + 256));
  // 16-byte beats: 128 bytes = 8 cycles + 32; 11 command words = 3 beats.
  EXPECT_EQ(counters.active_cycles, 40u);
  EXPECT_EQ(counters.cycles, 43u);
  EXPECT_EQ(counters.axi_read_beats, 4u + 3u);
  EXPECT_EQ(counters.axi_write_beats, 4u);
}

}  // namespace
}  // namespace kiln_test
