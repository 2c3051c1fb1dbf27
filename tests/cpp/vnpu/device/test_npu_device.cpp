// EthosUDevice beyond the C interface: the PMU as a driver programs it (counters counting
// the documented cycle estimate and the AXI beats of each port the memory configuration
// selects) and the side channel the host's tools read (operation records with their cycle
// estimate, the observer, the model's totals).
#include "backends/arm/vnpu/device/npu_device.h"

#include <gtest/gtest.h>

#include <vector>

#include "backends/arm/vnpu/operation_observer.h"
#include "device_harness.h"
#include "stream_builder.h"
#include "u85_stream_builder.h"

namespace kiln::vnpu::device::testing {
namespace {

using vnpu::testing::StreamBuilder;
using vnpu::testing::U85StreamBuilder;
using u55::Cmd0;
using u55::Cmd1;
namespace pmu = regs::pmu;
namespace event = regs::event;

/// DMA 64 bytes from the weights (region 0) into the scratch (region 1), then STOP: 10
/// command words.
std::vector<uint32_t> copy_64() {
  StreamBuilder s;
  s.cmd0(Cmd0::Dma0SrcRegion, 0).cmd0(Cmd0::Dma0DstRegion, 1);
  s.cmd1(Cmd1::Dma0Src, 0).cmd1(Cmd1::Dma0Dst, 0).cmd1(Cmd1::Dma0Len, 64).cmd0(Cmd0::OpDmaStart);
  s.cmd0(Cmd0::OpStop, 0xffff);
  return s.words;
}

void start_pmu(DeviceHarness& npu, const regs::ArchRegisters& arch) {
  npu.write(arch.pmcr + pmu::kPmcr, pmu::kPmcrEventCounterReset | pmu::kPmcrCycleCounterReset);
  npu.write(arch.pmevtyper0 + 0, event::kNpuActive);
  npu.write(arch.pmevtyper0 + 4, event::kAxi0ReadBeats);
  npu.write(arch.pmevtyper0 + 8, event::kAxi0WriteBeats);
  npu.write(arch.pmevtyper0 + 12, event::kAxi1ReadBeats);
  npu.write(arch.pmcr + pmu::kPmcntenset, 0xfu | pmu::kCycleCounterBit);
  npu.write(arch.pmcr + pmu::kPmcr, pmu::kPmcrCountEnable);
}

TEST(EthosUDevicePmu, CountsTheCycleEstimateAndTheBeatsOfEachPort) {
  DeviceHarness npu;
  ASSERT_TRUE(npu.create("ethos-u55-128"));
  const regs::ArchRegisters& arch = regs::kEthosU55;
  npu.write(regs::kRegionCfg, 2u << 0);  // region 0 through configuration 2: AXI1; region 1 AXI0
  npu.write(regs::kQconfig, 0);          // the command stream through AXI0
  start_pmu(npu, arch);
  const std::vector<uint32_t> words = copy_64();
  ASSERT_NE(npu.run(words) & regs::status::kCmdEndReached, 0u);
  // The formula of cycle_estimate.h, by hand: a DMA moves 64 + 64 bytes over an 8-byte
  // port: 16 cycles, + 32 setup = 48 active; the cycle counter adds the fetch of 10 words
  // (40 bytes: 5 beats).
  EXPECT_EQ(npu.read(arch.pmevcntr0 + 0), 48u);
  EXPECT_EQ(npu.read(arch.pmevcntr0 + 4), 5u);  // AXI0 reads: the command stream
  EXPECT_EQ(npu.read(arch.pmevcntr0 + 8), 8u);   // AXI0 writes: 64 bytes into the scratch
  EXPECT_EQ(npu.read(arch.pmevcntr0 + 12), 8u);  // AXI1 reads: 64 bytes of weights
  EXPECT_EQ(npu.read(arch.pmcr + pmu::kPmccntrLo), 48u + 5u);
  EXPECT_EQ(npu.read(arch.pmcr + pmu::kPmccntrHi), 0u);
  // Counting again adds; a disabled counter and PMCR.cnt_en = 0 stop it.
  npu.write(regs::kCmd, regs::cmd::kClearIrq);
  npu.write(arch.pmcr + pmu::kPmcntenclr, 1u);
  ASSERT_NE(npu.run(words) & regs::status::kCmdEndReached, 0u);
  EXPECT_EQ(npu.read(arch.pmevcntr0 + 0), 48u);
  EXPECT_EQ(npu.read(arch.pmevcntr0 + 8), 16u);
  npu.write(arch.pmcr + pmu::kPmcr, 0);
  ASSERT_NE(npu.run(words) & regs::status::kCmdEndReached, 0u);
  EXPECT_EQ(npu.read(arch.pmevcntr0 + 8), 16u);
}

TEST(EthosUDevicePmu, TheU85CountsItsEightCountersAtItsOffsets) {
  DeviceHarness npu;
  ASSERT_TRUE(npu.create("ethos-u85-256"));
  const regs::ArchRegisters& arch = regs::kEthosU85;
  npu.write(arch.memory_config0 + 8, 1u << regs::mem_attr::kPortShift);  // configuration 2: EXT port
  npu.write(regs::kRegionCfg, 2u << 0);
  start_pmu(npu, arch);
  npu.write(arch.pmevtyper0 + 28, event::kCycle);
  npu.write(arch.pmcr + pmu::kPmcntenset, 1u << 7);
  U85StreamBuilder s;
  s.dma(0, 0, 1, 0, 64).stop();  // 11 command words
  ASSERT_NE(npu.run(s.words) & regs::status::kCmdEndReached, 0u);
  // 16-byte beats: 128 bytes moved = 8 cycles + 32 setup; 44 command bytes = 3 beats.
  EXPECT_EQ(npu.read(arch.pmevcntr0 + 0), 40u);
  EXPECT_EQ(npu.read(arch.pmevcntr0 + 4), 3u);   // SRAM reads: the command stream
  EXPECT_EQ(npu.read(arch.pmevcntr0 + 8), 4u);   // SRAM writes: the scratch
  EXPECT_EQ(npu.read(arch.pmevcntr0 + 12), 4u);  // EXT reads: the weights (MEM_ATTR2's port)
  EXPECT_EQ(npu.read(arch.pmevcntr0 + 28), 43u);
  EXPECT_EQ(npu.read(arch.pmcr + pmu::kPmccntrLo), 43u);
}

TEST(EthosUDevicePmu, AnOverflowWithItsInterruptEnabledRaisesThePmuInterrupt) {
  DeviceHarness npu;
  ASSERT_TRUE(npu.create("ethos-u55-128"));
  const regs::ArchRegisters& arch = regs::kEthosU55;
  start_pmu(npu, arch);
  npu.write(arch.pmevcntr0, 0xfffffff0u);
  npu.write(arch.pmcr + pmu::kPmintset, 1u);
  const uint32_t s = npu.run(copy_64());
  EXPECT_NE(s & regs::status::kPmuIrqRaised, 0u);
  EXPECT_EQ(npu.read(arch.pmcr + pmu::kPmovsset), 1u);
  EXPECT_EQ(npu.read(arch.pmevcntr0), 0xfffffff0u + 48u);  // wrapped
  npu.write(regs::kCmd, regs::cmd::kClearIrq);
  EXPECT_EQ(npu.read(regs::kStatus) & (regs::status::kPmuIrqRaised | regs::status::kIrqRaised), 0u);
  npu.write(arch.pmcr + pmu::kPmovsclr, 1u);
  EXPECT_EQ(npu.read(arch.pmcr + pmu::kPmovsset), 0u);
}

class Recorder final : public OperationObserver {
 public:
  void on_operation(size_t index, const OpRecord& record, const OfmView*) override {
    indices.push_back(index);
    cycles.push_back(record.cycles);
  }
  std::vector<size_t> indices;
  std::vector<uint64_t> cycles;
};

TEST(EthosUDeviceSideChannel, RecordsAndObserverCarryTheCycleEstimate) {
  DeviceHarness npu;
  ASSERT_TRUE(npu.create("ethos-u55-128"));
  EthosUDevice& device = device_of(npu.device());
  Recorder recorder;
  OpRecord records[4];
  device.set_operation_observer(&recorder);
  device.set_op_records(records);
  const uint64_t before = device.streams_started();
  std::vector<uint32_t> words = copy_64();
  words.insert(words.begin(), words.begin(), words.end() - 1);  // two DMAs
  ASSERT_NE(npu.run(words) & regs::status::kCmdEndReached, 0u);
  EXPECT_EQ(device.streams_started(), before + 1);
  ASSERT_EQ(device.num_records(), 2u);
  EXPECT_EQ(recorder.indices, (std::vector<size_t>{0, 1}));
  EXPECT_EQ(recorder.cycles, (std::vector<uint64_t>{48, 48}));
  EXPECT_EQ(records[1].cycles, 48u);
  EXPECT_EQ(records[1].bytes_written, 64u);
  EXPECT_EQ(device.last_counters().dma_transfers, 2u);
  EXPECT_EQ(device.last_counters().bytes_read[0], 128u);
  EXPECT_STREQ(device.identity().arch->name, "Ethos-U55");
}

}  // namespace
}  // namespace kiln::vnpu::device::testing
