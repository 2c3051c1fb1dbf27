// The NPU driver interface: the few calls the Ethos-U delegate needs from whatever runs
// its command streams.
//
// Two kinds of implementation plug in here:
// - EthosUHardwareDriver (ethos_u_hardware_driver.h): the register-level driver. It
//   programs an Ethos-U through its registers — on silicon, in the Cortex-M firmware on
//   QEMU (the virtual NPU's register-accurate device behind the board's register window,
//   examples/arm/platform/npu_device_model.cpp), and on the host against the same device
//   (host_virtual_npu.h), which is how kiln-run, the Python runtime and the host tests run
//   every delegated program;
// - VirtualNpuDriver (virtual_npu_driver.h): calls Kiln's functional model of the
//   Ethos-U directly, without registers (the fuzz targets, which fuzz the payload and the
//   program, not the driver).
// The delegate owns no NPU state: it binds tensors into regions and calls invoke().
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/core/error.h"
#include "runtime/core/span.h"

namespace kiln::ethos_u {

/// Base pointers (regions) an Ethos-U command stream can address.
constexpr size_t kNpuMaxRegions = 8;

/// The memory one base pointer points at. Vela's convention: region 0 holds the weights
/// and constants (read only), 1 the scratch arena (inputs, outputs, intermediates), 2
/// the fast scratch (dedicated SRAM of an Ethos-U65). Unused regions are {nullptr, 0}.
struct NpuRegion {
  uint8_t* data = nullptr;
  size_t size = 0;
  /// The NPU must not write here (the program's weights): a stream that tries fails with
  /// NpuRegionReadOnly instead of corrupting them.
  bool read_only = false;
};

/// One operation the NPU completed, as far as the driver can tell (for tracing).
struct NpuOperation {
  /// Index within the invocation (DMAs count too).
  uint32_t index = 0;
  /// "conv", "depthwise", "pool", "elementwise", "resize" or "dma".
  const char* kind = "op";
  uint64_t macs = 0;
  uint64_t bytes_read = 0;
  uint64_t bytes_written = 0;
  /// NPU cycles of the operation by the virtual NPU device's estimate (0 when unknown).
  uint64_t cycles = 0;
  /// The output feature map, when the driver can read it back (the virtual NPU):
  /// height x width x depth elements of ofm_element_size bytes; all zero otherwise.
  uint32_t ofm_height = 0, ofm_width = 0, ofm_depth = 0, ofm_element_size = 0;
  bool ofm_signed = false;
  /// Copies that feature map into `out` as dense NHWC (null when unavailable). Valid only
  /// during NpuOperationListener::on_npu_operation.
  Error (*copy_ofm)(const void* source, Span<uint8_t> out) = nullptr;
  const void* ofm_source = nullptr;
};

/// Told about each operation as the NPU completes it.
class NpuOperationListener {
 public:
  virtual ~NpuOperationListener() = default;
  virtual void on_npu_operation(const NpuOperation& operation) = 0;
};

/// One inference's work for the NPU.
struct NpuInvocation {
  /// Vela's driver payload ("COP1" header, then register commands), 32-bit words.
  Span<const uint32_t> command_stream;
  /// Region i is base pointer i.
  Span<const NpuRegion> regions;
  /// The configuration the stream was compiled for, e.g. "ethos-u55-128", or nullptr if
  /// the program does not say. A hardware driver checks it against its NPU; the virtual
  /// NPU configures itself with it.
  const char* target = nullptr;
  /// Told about every operation as it completes (optional; a driver that cannot see
  /// single operations — hardware without a PMU interrupt per operation — ignores it).
  NpuOperationListener* listener = nullptr;
};

/// What one invocation did, in the terms of the Ethos-U's PMU. A driver leaves at zero
/// what it cannot count: the register-level driver fills the PMU's counts (cycles, active
/// cycles, AXI beats) and the host's virtual NPU adds the model's own (operations, MACs,
/// bytes per region); VirtualNpuDriver has no PMU.
struct NpuCounters {
  /// NPU operations (convolution, depthwise, pooling, elementwise, resize).
  uint64_t operations = 0;
  /// Of those, operations chained to another inside the NPU (Ethos-U85).
  uint64_t chained_operations = 0;
  /// DMA transfers.
  uint64_t dma_transfers = 0;
  /// Multiply-accumulates of convolution, depthwise and vector product.
  uint64_t macs = 0;
  /// Element steps of pooling and elementwise operations.
  uint64_t element_ops = 0;
  /// Commands decoded.
  uint64_t commands = 0;
  /// NPU clock cycles (the PMU's cycle counter; on the virtual NPU's device its estimate,
  /// vnpu/device/cycle_estimate.h).
  uint64_t cycles = 0;
  /// Cycles the NPU was doing work (PMU event NPU_ACTIVE).
  uint64_t active_cycles = 0;
  /// AXI data beats read / written, all ports (PMU events AXI0/AXI1 read and write beats).
  uint64_t axi_read_beats = 0;
  uint64_t axi_write_beats = 0;
  /// Bytes read / written per region; index kNpuMaxRegions is the NPU's internal memory.
  uint64_t bytes_read[kNpuMaxRegions + 1] = {};
  uint64_t bytes_written[kNpuMaxRegions + 1] = {};
};

class NpuDriver {
 public:
  virtual ~NpuDriver() = default;

  /// A short name for logs, e.g. "virtual-npu".
  virtual const char* name() const = 0;

  /// False when the NPU is absent or failed to start.
  virtual bool is_available() const = 0;

  /// Base addresses the NPU can use must be multiples of this (16 on hardware).
  virtual size_t region_alignment() const = 0;

  /// Runs the command stream to completion (blocking) against the regions. Returns Ok or
  /// a named error (logged): an Npu* error for a stream the NPU rejects (NpuConfigMismatch
  /// when it was compiled for another NPU configuration).
  /// `counters` (may be null) receives what the run did.
  virtual Error invoke(const NpuInvocation& invocation, NpuCounters* counters) = 0;
};

}  // namespace kiln::ethos_u
