#include "backends/arm/runtime/virtual_npu_driver.h"

#include <cstring>

#include "backends/arm/runtime/vnpu_operation_listener.h"
#include "runtime/core/result.h"
#include "runtime/platform/log.h"

namespace kiln::ethos_u {

static_assert(kNpuMaxRegions == vnpu::kMaxRegions, "one region slot per Ethos-U base pointer");

VirtualNpuDriver::VirtualNpuDriver(Span<uint8_t> work_memory, const vnpu::Config& default_config)
    : work_memory_(work_memory), default_config_(default_config) {}

Error VirtualNpuDriver::config_for(const char* target, vnpu::Config* config) const {
  *config = default_config_;
  if (target == nullptr) return Error::Ok;
  // Keep the default's work limits; take the NPU model and MAC count from the target.
  vnpu::Config named = default_config_;
  if (!vnpu::config_from_target_name(target, &named)) {
    KILN_LOG(Error, "virtual NPU: target '%s' is not an Ethos-U configuration Vela compiles for", target);
    return Error::NpuConfigMismatch;
  }
  config->arch = named.arch;
  config->macs = named.macs;
  config->cores = named.cores;
  return Error::Ok;
}

Error VirtualNpuDriver::prepare(Span<const uint32_t> command_stream, const char* target) {
  vnpu::Config config;
  KILN_TRY(config_for(target, &config));
  uint64_t needed = 0;
  KILN_TRY(vnpu::work_memory_bytes(config, command_stream, &needed));
  if (needed > work_memory_.size()) {
    KILN_LOG(Error, "virtual NPU: the program's command stream needs %llu bytes of work memory; this NPU has %zu",
             static_cast<unsigned long long>(needed), work_memory_.size());
    return Error::OutOfResources;
  }
  return Error::Ok;
}

Error VirtualNpuDriver::invoke(const NpuInvocation& invocation, NpuCounters* counters) {
  vnpu::Config config;
  KILN_TRY(config_for(invocation.target, &config));
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
    add_model_counters(run_counters, counters);
  }
  return error;
}

}  // namespace kiln::ethos_u
