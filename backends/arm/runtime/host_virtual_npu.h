// The Ethos-U of a host process (kiln-run, the Python runtime, host tests): the
// register-level driver (EthosUHardwareDriver) programming the virtual NPU's
// register-accurate device (backends/arm/vnpu/device) through the device's C interface —
// the path a board takes, with the device in place of silicon. Every delegated program
// runs driver → registers → device → virtual NPU.
//
// Per invocation the host plugs in an NPU of the program's configuration: the device is
// made for the program's target (ethos-u55-128 when the program names none) whenever the
// target changes — the driver then resets it and identifies it from ID/CONFIG, and still
// checks each stream's COP1 configuration word against CONFIG — and the memory on the
// device's bus is exactly the invocation's command stream and region spans, each at a bus
// address of its own. What hardware does not show through registers (per-operation
// records and notifications, MACs, bytes per region) comes from the device's side channel.
//
// One NPU, serialized: the work memory (the NPU's internal memory image and its weight
// decode scratch, ~12 MiB) is the NPU's state, as SHRAM is on hardware, so invocations
// from several threads (Python releases the GIL while executing) take turns on a mutex,
// as they would on a real NPU. Everything per call (regions, counters) is per delegate
// instance already (ethos_u_backend.h). Hosts only (std::mutex).
#pragma once

#include <cstddef>
#include <mutex>

#include "backends/arm/runtime/npu_driver.h"
#include "backends/arm/runtime/npu_identity.h"
#include "backends/arm/vnpu/virtual_npu.h"
#include "runtime/core/error.h"
#include "runtime/core/span.h"

namespace kiln::ethos_u {

/// The target a program without one runs on.
constexpr char kHostDefaultTarget[] = "ethos-u55-128";

class HostVirtualNpu final : public NpuDriver {
 public:
  const char* name() const override { return "ethos-u (virtual NPU device)"; }
  bool is_available() const override { return true; }
  size_t region_alignment() const override;
  /// Plugs in the program's NPU if needed, then runs the stream through the driver.
  /// NpuConfigMismatch for a target that is none of Vela's; the driver's errors.
  Error invoke(const NpuInvocation& invocation, NpuCounters* counters) override;

  /// Per-operation records of the next invocations (the PMU-style per-layer report): up
  /// to records.size() operations; num_records() tells how many the last invocation ran
  /// (it may exceed the span). Empty span stops recording. Hold host_virtual_npu_mutex().
  void set_op_records(Span<vnpu::OpRecord> records) { records_ = records; }
  size_t num_records() const { return num_records_; }

  /// The NPU the driver identified from ID/CONFIG for the latest invocation; false before
  /// the first. Hold host_virtual_npu_mutex().
  bool identity(NpuIdentity* out) const;

 private:
  Span<vnpu::OpRecord> records_;
  size_t num_records_ = 0;
};

/// Registers the EthosUBackend on the process's NPU (host_virtual_npu()). kiln-run and the
/// Python runtime call this once. RegistrationAlreadyRegistered if an EthosUBackend is
/// registered already.
Error register_ethos_u_backend_with_virtual_npu();

/// The process's NPU.
HostVirtualNpu& host_virtual_npu();

/// The mutex every invocation of the process's NPU holds.
std::mutex& host_virtual_npu_mutex();

}  // namespace kiln::ethos_u
