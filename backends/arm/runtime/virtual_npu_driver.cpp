#include "backends/arm/runtime/virtual_npu_driver.h"

#include <cstring>

#include "backends/arm/runtime/vnpu_operation_listener.h"
#include "runtime/platform/log.h"

namespace kiln::ethos_u {

static_assert(kNpuMaxRegions == vnpu::kMaxRegions, "one region slot per Ethos-U base pointer");

VirtualNpuDriver::VirtualNpuDriver(Span<uint8_t> work_memory, const vnpu::Config& default_config)
    : work_memory_(work_memory), default_config_(default_config) {}

Error VirtualNpuDriver::invoke(const NpuInvocation& invocation, NpuCounters* counters) {
  vnpu::Config config = default_config_;
  if (invocation.target != nullptr) {
    // Keep the default's work limits; take the NPU model and MAC count from the target.
    vnpu::Config named = default_config_;
    if (!vnpu::config_from_target_name(invocation.target, &named)) {
      KILN_LOG(Error, "virtual NPU: target '%s' is not an Ethos-U configuration Vela compiles for",
               invocation.target);
      return Error::NpuConfigMismatch;
    }
    config.arch = named.arch;
    config.macs = named.macs;
    config.cores = named.cores;
  }
  if (invocation.regions.size() > vnpu::kMaxRegions) {
    KILN_LOG(Error, "virtual NPU: %zu regions given; the NPU has %zu base pointers",
             invocation.regions.size(), vnpu::kMaxRegions);
    return Error::InvalidArgument;
  }
  vnpu::Region regions[vnpu::kMaxRegions];
  for (size_t i = 0; i < invocation.regions.size(); ++i) {
    regions[i] = {invocation.regions[i].data, invocation.regions[i].size,
                  invocation.regions[i].read_only};
  }
  vnpu::VirtualNpu npu(config, work_memory_);
  VnpuOperationListener adapter(invocation.listener);
  if (invocation.listener != nullptr) npu.set_operation_observer(&adapter);
  vnpu::Counters run_counters;
  num_records_ = 0;
  const Error error = npu.run(invocation.command_stream, {regions, invocation.regions.size()},
                              &run_counters, records_, &num_records_);
  if (counters != nullptr) {
    *counters = NpuCounters();
    counters->operations = run_counters.operations;
    counters->chained_operations = run_counters.chained_operations;
    counters->dma_transfers = run_counters.dma_transfers;
    counters->macs = run_counters.macs;
    counters->element_ops = run_counters.element_ops;
    counters->commands = run_counters.commands;
    for (size_t r = 0; r <= kNpuMaxRegions; ++r) {
      counters->bytes_read[r] = run_counters.bytes_read[r];
      counters->bytes_written[r] = run_counters.bytes_written[r];
    }
  }
  return error;
}

}  // namespace kiln::ethos_u
