// Which Ethos-U the register-accurate device is: a Vela target name gives the product,
// MACs per cycle and cores (the virtual NPU's Config) and the values its ID and CONFIG
// registers read, so that a driver identifies the NPU exactly as on silicon.
#pragma once

#include <cstdint>

#include "backends/arm/registers/ethos_u_registers.h"
#include "backends/arm/vnpu/virtual_npu.h"
#include "runtime/core/error.h"

namespace kiln::vnpu::device {

struct DeviceIdentity {
  /// The architecture's register layout (never null once identified).
  const ethos_u::regs::ArchRegisters* arch = nullptr;
  /// What the virtual NPU runs streams as: product, MACs, cores.
  Config npu;
  /// The ID and CONFIG register values.
  uint32_t id = 0;
  uint32_t config = 0;
};

/// The NPU Vela's target `target` names ("ethos-u55-128"; any of its eleven). CONFIG reads
/// what Vela writes into the COP1 config word for that target (MACs, SHRAM or AXI ports
/// and weight decoders, command stream version, product); ID reads `id`, or the product's
/// ID value (ArchRegisters::id) when `id` is 0. NpuConfigMismatch (logged) for a name that
/// is not one of Vela's targets.
Error identity_from_target(const char* target, uint32_t id, DeviceIdentity* out);

}  // namespace kiln::vnpu::device
