// The PMU's registers on their own: set/clear pairs, read-only fields, counter widths,
// enables and overflow.
#include "backends/arm/vnpu/device/pmu_model.h"

#include <gtest/gtest.h>

namespace kiln::vnpu::device {
namespace {

namespace regs = ethos_u::regs;
namespace pmu = regs::pmu;

TEST(PmuModel, SetClearPairsAndReadOnlyFields) {
  PmuModel model(regs::kEthosU55);
  const uint32_t base = regs::kEthosU55.pmcr;
  EXPECT_TRUE(model.owns(base));
  EXPECT_TRUE(model.owns(regs::kEthosU55.pmevtyper0 + 12));
  EXPECT_FALSE(model.owns(regs::kEthosU55.pmevtyper0 + 16));  // a fifth counter: not on the U55
  model.write(base + pmu::kPmcntenset, 0xffffffffu);
  EXPECT_EQ(model.read(base + pmu::kPmcntenset), 0x8000000fu);  // only counters that exist
  model.write(base + pmu::kPmcntenclr, 0x3u);
  EXPECT_EQ(model.read(base + pmu::kPmcntenclr), 0x8000000cu);
  model.write(base + pmu::kPmcr, 0xffffffffu);  // the reset bits act and read 0; the count is fixed
  EXPECT_EQ(model.read(base + pmu::kPmcr),
            pmu::kPmcrCountEnable | pmu::kPmcrMaskEnable | (4u << pmu::kPmcrNumEventCountersShift));
  model.write(regs::kEthosU55.pmevtyper0, 0xffffu);
  EXPECT_EQ(model.read(regs::kEthosU55.pmevtyper0), 0x3ffu);
  model.write(base + pmu::kPmccntrHi, 0xffffffffu);
  EXPECT_EQ(model.read(base + pmu::kPmccntrHi), 0xffffu);  // 48-bit counter
}

TEST(PmuModel, CountsOnlyWhatIsEnabledAndFlagsOverflows) {
  PmuModel model(regs::kEthosU85);
  const uint32_t base = regs::kEthosU85.pmcr;
  Activity activity;
  activity.cycles = 100;
  activity.active_cycles = 90;
  activity.read_beats[1] = 7;
  model.write(regs::kEthosU85.pmevtyper0 + 0, regs::event::kNpuActive);
  model.write(regs::kEthosU85.pmevtyper0 + 4, regs::event::kAxi1ReadBeats);
  model.write(regs::kEthosU85.pmevtyper0 + 8, 999);  // an event the device never sees
  model.write(base + pmu::kPmcntenset, 0x7u | pmu::kCycleCounterBit);
  EXPECT_FALSE(model.count(activity));  // PMCR.cnt_en is off
  EXPECT_EQ(model.read(base + pmu::kPmccntrLo), 0u);
  model.write(base + pmu::kPmcr, pmu::kPmcrCountEnable);
  EXPECT_FALSE(model.count(activity));
  EXPECT_EQ(model.read(base + pmu::kPmccntrLo), 100u);
  EXPECT_EQ(model.read(regs::kEthosU85.pmevcntr0 + 0), 90u);
  EXPECT_EQ(model.read(regs::kEthosU85.pmevcntr0 + 4), 7u);
  EXPECT_EQ(model.read(regs::kEthosU85.pmevcntr0 + 8), 0u);
  // The cycle counter wraps at 48 bits; with its interrupt enabled that is an interrupt.
  model.write(base + pmu::kPmccntrLo, 0xffffffffu);
  model.write(base + pmu::kPmccntrHi, 0xffffu);
  model.write(base + pmu::kPmintset, pmu::kCycleCounterBit);
  EXPECT_TRUE(model.count(activity));
  EXPECT_EQ(model.read(base + pmu::kPmovsset), pmu::kCycleCounterBit);
  EXPECT_EQ(model.read(base + pmu::kPmccntrLo), 99u);
  model.write(base + pmu::kPmcr, pmu::kPmcrCountEnable | pmu::kPmcrCycleCounterReset | pmu::kPmcrEventCounterReset);
  EXPECT_EQ(model.read(base + pmu::kPmccntrLo), 0u);
  EXPECT_EQ(model.read(regs::kEthosU85.pmevcntr0), 0u);
}

}  // namespace
}  // namespace kiln::vnpu::device
