#include "backends/arm/runtime/npu_pmu.h"

#include "runtime/platform/log.h"

namespace kiln::ethos_u {
namespace {

namespace pmu = regs::pmu;
namespace event = regs::event;

/// Which event each counter counts and the NpuCounters field it adds to.
struct CounterRole {
  uint32_t event;
  uint64_t NpuCounters::*field;
};
constexpr CounterRole kCounterPlan[] = {
    {event::kNpuActive, &NpuCounters::active_cycles},
    {event::kAxi0ReadBeats, &NpuCounters::axi_read_beats},
    {event::kAxi0WriteBeats, &NpuCounters::axi_write_beats},
    {event::kAxi1ReadBeats, &NpuCounters::axi_read_beats},
    {event::kAxi1WriteBeats, &NpuCounters::axi_write_beats},
};
constexpr uint32_t kPlanned = sizeof(kCounterPlan) / sizeof(kCounterPlan[0]);

uint32_t counters_used(const regs::ArchRegisters& arch) {
  return arch.num_event_counters < kPlanned ? arch.num_event_counters : kPlanned;
}

}  // namespace

void start_pmu(NpuRegisterPort& port, const regs::ArchRegisters& arch) {
  const uint32_t n = counters_used(arch);
  const uint32_t all = ((1u << arch.num_event_counters) - 1u) | pmu::kCycleCounterBit;
  port.write(arch.pmcr + pmu::kPmcr, pmu::kPmcrEventCounterReset | pmu::kPmcrCycleCounterReset);
  port.write(arch.pmcr + pmu::kPmcntenclr, all);
  port.write(arch.pmcr + pmu::kPmovsclr, all);
  port.write(arch.pmcr + pmu::kPmintclr, all);
  for (uint32_t i = 0; i < n; ++i) port.write(arch.pmevtyper0 + 4 * i, kCounterPlan[i].event);
  port.write(arch.pmcr + pmu::kPmccntrCfg, 0);  // count every cycle, no start/stop events
  port.write(arch.pmcr + pmu::kPmcntenset, ((1u << n) - 1u) | pmu::kCycleCounterBit);
  port.write(arch.pmcr + pmu::kPmcr, pmu::kPmcrCountEnable);
}

void read_pmu(NpuRegisterPort& port, const regs::ArchRegisters& arch, NpuCounters* counters) {
  port.write(arch.pmcr + pmu::kPmcr, 0);  // stop counting
  const uint32_t low = port.read(arch.pmcr + pmu::kPmccntrLo);
  const uint32_t high = port.read(arch.pmcr + pmu::kPmccntrHi);
  counters->cycles = (uint64_t{high} << 32) | low;
  counters->active_cycles = counters->axi_read_beats = counters->axi_write_beats = 0;
  for (uint32_t i = 0; i < counters_used(arch); ++i) {
    counters->*kCounterPlan[i].field += port.read(arch.pmevcntr0 + 4 * i);
  }
  const uint32_t wrapped = port.read(arch.pmcr + pmu::kPmovsset);
  if (wrapped != 0) KILN_LOG(Info, "ethos-u: PMU counters wrapped (PMOVS 0x%08x)", wrapped);
}

}  // namespace kiln::ethos_u
