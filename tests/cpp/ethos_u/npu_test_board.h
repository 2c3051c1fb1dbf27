// A board for the register-level driver's tests: the virtual NPU's register-accurate
// device plugged into an EthosUHardwareDriver through the device's C interface (the same
// seam as the host's), with memory at bus addresses of its own — a driver payload buffer at
// 0x1000 (read only), weights at 0x10000 (read only), scratch at 0x20000 — the driver's
// windows onto them, and cache and wait hooks that record their calls. The device is the
// driver's real partner: nothing is mocked.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "backends/arm/registers/ethos_u_registers.h"
#include "backends/arm/runtime/ethos_u_hardware_driver.h"
#include "backends/arm/runtime/npu_register_port.h"
#include "backends/arm/vnpu/device/ethos_u_device.h"
#include "runtime/platform/log.h"

namespace kiln_test {

/// A driver payload as Vela writes it: "COP1", the configuration action (CONFIG and ID
/// words), three NOPs (the command stream then starts 32 bytes in), the command stream.
std::vector<uint32_t> cop1_payload(uint32_t config, uint32_t id, const std::vector<uint32_t>& commands);

/// Ethos-U55/U65 register commands: a DMA of `length` bytes from region `src_region` at
/// `src` to region 1 at `dst`, then NPU_OP_STOP (unless `stop` is false).
std::vector<uint32_t> dma_commands(uint32_t src_region, uint32_t src, uint32_t dst, uint32_t length,
                                   bool stop = true);

/// The driver's register seam onto a device.
class DeviceRegisterPort final : public kiln::ethos_u::NpuRegisterPort {
 public:
  kiln_npu_device* device = nullptr;
  uint32_t read(uint32_t offset) override;
  void write(uint32_t offset, uint32_t value) override;
};

/// Messages logged while it lives (one at a time).
struct CapturedLog {
  CapturedLog();
  ~CapturedLog();
  bool contains(const std::string& text) const;
  std::vector<std::string> messages;
};

class NpuTestBoard {
 public:
  static constexpr uint64_t kPayloadBus = 0x1000, kWeightsBus = 0x10000, kScratchBus = 0x20000;
  static constexpr size_t kPayloadWords = 256, kWeightBytes = 256, kScratchBytes = 1024;

  /// Makes the device for `target` and a driver on it (not initialized yet). `scratch_on_bus`
  /// cuts the scratch range the device's bus reaches (the driver's window keeps it whole).
  explicit NpuTestBoard(const char* target = "ethos-u55-128", uint32_t reset_reads = 2,
                        size_t scratch_on_bus = kScratchBytes);

  kiln::ethos_u::EthosUHardwareDriver& driver() { return *driver_; }
  kiln_npu_device* device() { return port_.device; }
  kiln::ethos_u::EthosUDriverConfig& config() { return config_; }
  /// Remakes the driver from config() (after a test changed it).
  void rebuild_driver();
  /// Gives the driver a wait hook (as WFI on a board) that counts its calls and, with
  /// wait_reads_status, reads STATUS (time passing for a slow stream); rebuilds the driver.
  void use_wait_hook();

  /// An invocation of `payload` (copied into the payload buffer) on regions 0 (weights,
  /// read only) and 1 (scratch), for `target` (may be null).
  kiln::ethos_u::NpuInvocation invocation(const std::vector<uint32_t>& payload, const char* target = nullptr);

  uint32_t* payload() { return payload_.data(); }
  uint8_t* weights() { return weights_.data(); }
  uint8_t* scratch() { return scratch_.data(); }
  kiln::ethos_u::NpuRegion* regions() { return regions_; }

  /// Hook calls: [pointer, bytes] cleaned / invalidated, waits.
  struct Span {
    const void* data;
    size_t bytes;
  };
  std::vector<Span> cleaned, invalidated;
  int waits = 0;
  /// When true, the wait hook reads STATUS (time passing on a device that needs reads).
  bool wait_reads_status = false;

 private:
  static void on_irq(void* context, int raised);
  static void clean_hook(const void* data, size_t bytes);
  static void invalidate_hook(const void* data, size_t bytes);
  static void wait_hook(void* context, const volatile bool* irq_seen);

  alignas(64) unsigned char storage_[8192];
  std::vector<uint8_t> work_;
  std::vector<uint32_t> payload_ = std::vector<uint32_t>(kPayloadWords);
  std::vector<uint8_t> weights_ = std::vector<uint8_t>(kWeightBytes);
  std::vector<uint8_t> scratch_ = std::vector<uint8_t>(kScratchBytes);
  kiln::ethos_u::NpuMemoryWindow windows_[3];
  kiln::ethos_u::NpuRegion regions_[2];
  DeviceRegisterPort port_;
  kiln::ethos_u::EthosUDriverConfig config_;
  alignas(kiln::ethos_u::EthosUHardwareDriver) unsigned char driver_storage_[sizeof(kiln::ethos_u::EthosUHardwareDriver)];
  kiln::ethos_u::EthosUHardwareDriver* driver_ = nullptr;
};

}  // namespace kiln_test
