// The one seam between the register-level driver and the NPU: 32-bit register reads and
// writes at byte offsets from the NPU's base. On silicon and in firmware it is volatile
// MMIO at the base address (MmioRegisterPort); on the host, calls into the virtual NPU's
// register-accurate device (host_virtual_npu.cpp), so that the same driver code runs
// against the model in tests.
#pragma once

#include <cstdint>

namespace kiln::ethos_u {

class NpuRegisterPort {
 public:
  virtual ~NpuRegisterPort() = default;
  virtual uint32_t read(uint32_t offset) = 0;
  virtual void write(uint32_t offset, uint32_t value) = 0;
};

/// Memory-mapped registers at `base_address` (the board profile's NPU base).
class MmioRegisterPort final : public NpuRegisterPort {
 public:
  explicit MmioRegisterPort(uintptr_t base_address) : base_address_(base_address) {}
  uint32_t read(uint32_t offset) override {
    return *reinterpret_cast<volatile const uint32_t*>(base_address_ + offset);
  }
  void write(uint32_t offset, uint32_t value) override {
    *reinterpret_cast<volatile uint32_t*>(base_address_ + offset) = value;
  }

 private:
  uintptr_t base_address_;
};

}  // namespace kiln::ethos_u
