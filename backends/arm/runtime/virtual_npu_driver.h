// VirtualNpuDriver: NpuDriver calling Kiln's virtual Ethos-U (backends/arm/vnpu) directly,
// without registers: the Cortex-M firmware on QEMU runs delegated programs with it (until
// the firmware programs the virtual NPU's register-accurate device through the
// register-level driver, as the host does: host_virtual_npu.h), and the fuzz targets that
// exercise the model itself. One driver is one NPU: invoke() uses the driver's work
// memory, so callers on several threads serialize it.
#pragma once

#include <cstddef>
#include <cstdint>

#include "backends/arm/runtime/npu_driver.h"
#include "backends/arm/vnpu/virtual_npu.h"
#include "runtime/core/error.h"
#include "runtime/core/span.h"

namespace kiln::ethos_u {

class VirtualNpuDriver final : public NpuDriver {
 public:
  /// `work_memory` (vnpu::kRecommendedWorkMemoryBytes is enough for every model seen so
  /// far) must outlive the driver. `default_config` is used for streams whose program
  /// does not name its target.
  VirtualNpuDriver(Span<uint8_t> work_memory, const vnpu::Config& default_config);

  const char* name() const override { return "virtual-npu"; }
  bool is_available() const override { return true; }
  /// The model reads words and bytes wherever they are; 4 keeps 32-bit streams aligned.
  size_t region_alignment() const override { return 4; }

  /// Configures a VirtualNpu for invocation.target (the default config if it is null;
  /// NpuConfigMismatch if it is not one of Vela's Ethos-U targets) and runs the stream.
  Error invoke(const NpuInvocation& invocation, NpuCounters* counters) override;

  /// Optional per-operation records of the next invocations (the PMU-style per-layer
  /// report): up to records.size() operations are recorded; num_records() tells how many
  /// the last invocation executed (it may exceed the span). Empty span stops recording.
  void set_op_records(Span<vnpu::OpRecord> records) { records_ = records; }
  size_t num_records() const { return num_records_; }

 private:
  Span<uint8_t> work_memory_;
  vnpu::Config default_config_;
  Span<vnpu::OpRecord> records_;
  size_t num_records_ = 0;
};

}  // namespace kiln::ethos_u
