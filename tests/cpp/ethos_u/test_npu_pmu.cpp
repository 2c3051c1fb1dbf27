// The driver's PMU program on the device's PMU: what start_pmu sets up, and read_pmu's
// sums of both AXI ports.
#include "backends/arm/runtime/npu_pmu.h"

#include <gtest/gtest.h>

#include "tests/cpp/ethos_u/npu_test_board.h"

namespace kiln_test {
namespace {

namespace regs = kiln::ethos_u::regs;

TEST(NpuPmu, CountsActiveCyclesAndTheBeatsOfBothPorts) {
  NpuTestBoard board("ethos-u85-256");
  DeviceRegisterPort port;
  port.device = board.device();
  const regs::ArchRegisters& arch = regs::kEthosU85;
  port.write(regs::kReset, 0);
  while (port.read(regs::kStatus) & regs::status::kResetInProgress) {
  }
  kiln::ethos_u::start_pmu(port, arch);
  EXPECT_EQ(port.read(arch.pmcr + regs::pmu::kPmcr) & regs::pmu::kPmcrCountEnable, 1u);
  EXPECT_EQ(port.read(arch.pmevtyper0), regs::event::kNpuActive);
  EXPECT_EQ(port.read(arch.pmevtyper0 + 16), regs::event::kAxi1WriteBeats);
  EXPECT_EQ(port.read(arch.pmcr + regs::pmu::kPmcntenset), 0x1fu | regs::pmu::kCycleCounterBit);
  // Counter values as if a stream ran: the driver adds both ports up.
  port.write(arch.pmevcntr0 + 0, 100);
  port.write(arch.pmevcntr0 + 4, 10);
  port.write(arch.pmevcntr0 + 8, 20);
  port.write(arch.pmevcntr0 + 12, 1);
  port.write(arch.pmevcntr0 + 16, 2);
  port.write(arch.pmcr + regs::pmu::kPmccntrLo, 5);
  port.write(arch.pmcr + regs::pmu::kPmccntrHi, 1);
  kiln::ethos_u::NpuCounters counters;
  kiln::ethos_u::read_pmu(port, arch, &counters);
  EXPECT_EQ(counters.cycles, (uint64_t{1} << 32) + 5);
  EXPECT_EQ(counters.active_cycles, 100u);
  EXPECT_EQ(counters.axi_read_beats, 11u);
  EXPECT_EQ(counters.axi_write_beats, 22u);
  EXPECT_EQ(port.read(arch.pmcr + regs::pmu::kPmcr) & regs::pmu::kPmcrCountEnable, 0u);  // stopped
}

}  // namespace
}  // namespace kiln_test
