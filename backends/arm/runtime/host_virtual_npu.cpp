#include "backends/arm/runtime/host_virtual_npu.h"

#include <cstring>
#include <memory>
#include <new>

#include "backends/arm/runtime/ethos_u_backend.h"
#include "backends/arm/runtime/ethos_u_hardware_driver.h"
#include "backends/arm/runtime/npu_memory_config.h"
#include "backends/arm/runtime/npu_register_port.h"
#include "backends/arm/runtime/vnpu_operation_listener.h"
#include "backends/arm/vnpu/device/ethos_u_device.h"
#include "backends/arm/vnpu/device/npu_device.h"
#include "runtime/platform/log.h"

namespace kiln::ethos_u {
namespace {

/// The host's memory map: each window at its own bus address from here, 4 KiB apart and
/// keeping its offset within a 4 KiB page (so alignment on the bus is the CPU's). All of
/// it below 4 GiB: an Ethos-U55 has 32-bit addresses.
constexpr uint64_t kFirstBusAddress = 0x10000000;
constexpr uint64_t kWindowGranule = 4096;
constexpr uint64_t kBusLimit = uint64_t{1} << 32;
constexpr size_t kMaxWindows = 1 + kNpuMaxRegions;
constexpr size_t kDeviceStorageBytes = 4096;

/// The driver's register seam onto the device's C interface.
class DevicePort final : public NpuRegisterPort {
 public:
  kiln_npu_device* device = nullptr;
  uint32_t read(uint32_t offset) override {
    uint32_t value = 0;
    if (kiln_npu_device_read(device, offset, &value) != KILN_NPU_DEVICE_OK) {
      KILN_LOG(Error, "host NPU: register read at 0x%x refused by the device", offset);
    }
    return value;
  }
  void write(uint32_t offset, uint32_t value) override {
    if (kiln_npu_device_write(device, offset, value) != KILN_NPU_DEVICE_OK) {
      KILN_LOG(Error, "host NPU: register write at 0x%x refused by the device", offset);
    }
  }
};

/// The NPU plugged in for the current target: the device, the port onto it, the driver.
struct PluggedNpu {
  char target[32] = "";
  size_t work_memory_bytes = 0;  // the work memory the device was made with
  alignas(16) unsigned char device_storage[kDeviceStorageBytes];
  DevicePort port;
  alignas(EthosUHardwareDriver) unsigned char driver_storage[sizeof(EthosUHardwareDriver)];
  EthosUHardwareDriver* driver = nullptr;
  NpuMemoryWindow windows[kMaxWindows];
  kiln_npu_memory_range ranges[kMaxWindows];
  size_t num_windows = 0;

  vnpu::device::EthosUDevice& device() { return vnpu::device::device_of(port.device); }
};

PluggedNpu& plugged() {
  static PluggedNpu npu;
  return npu;
}

/// The virtual NPU's work memory (its internal memory image and decode scratch): made on
/// first use with the recommended size and grown at delegate init to what the largest
/// program loaded so far needs (HostVirtualNpu::prepare). Never shrinks.
struct WorkMemory {
  std::unique_ptr<uint8_t[]> data;
  size_t size = 0;
};

WorkMemory& work_memory() {
  // Function-local static: made on first use, never by a static initializer.
  static WorkMemory memory;
  return memory;
}

/// Makes the work memory at least `bytes` large; false if the host cannot allocate it.
bool grow_work_memory(size_t bytes) {
  WorkMemory& memory = work_memory();
  if (memory.size >= bytes) return true;
  std::unique_ptr<uint8_t[]> grown(new (std::nothrow) uint8_t[bytes]);
  if (grown == nullptr) return false;
  memory.data = std::move(grown);
  memory.size = bytes;
  return true;
}

/// The device's interrupt line, wired to the driver's interrupt handler.
void on_irq(void* context, int raised) {
  auto* npu = static_cast<PluggedNpu*>(context);
  if (raised != 0 && npu->driver != nullptr) npu->driver->handle_irq();
}

void unplug(PluggedNpu& npu) {
  if (npu.driver != nullptr) npu.driver->~EthosUHardwareDriver();
  npu.driver = nullptr;
  npu.port.device = nullptr;
  npu.target[0] = '\0';
}

/// Makes the device and the driver for `target` unless they are plugged in already.
Error plug_in(PluggedNpu& npu, const char* target) {
  WorkMemory& memory = work_memory();
  if (npu.driver != nullptr && std::strcmp(npu.target, target) == 0 && npu.work_memory_bytes == memory.size) {
    return Error::Ok;
  }
  unplug(npu);
  if (!grow_work_memory(vnpu::kRecommendedWorkMemoryBytes)) {
    KILN_LOG(Error, "host NPU: cannot allocate %zu bytes of work memory", vnpu::kRecommendedWorkMemoryBytes);
    return Error::OutOfResources;
  }
  if (kiln_npu_device_storage_bytes() > sizeof(npu.device_storage) || std::strlen(target) >= sizeof(npu.target)) {
    KILN_LOG(Error, "host NPU: cannot make a device for target '%s'", target);
    return std::strlen(target) >= sizeof(npu.target) ? Error::NpuConfigMismatch : Error::Internal;
  }
  kiln_npu_device_config config = {};
  config.target = target;
  config.work_memory = memory.data.get();
  config.work_memory_bytes = memory.size;
  config.irq = &on_irq;
  config.irq_context = &npu;
  kiln_npu_device* device = nullptr;
  if (kiln_npu_device_create(npu.device_storage, sizeof(npu.device_storage), &config, &device) !=
      KILN_NPU_DEVICE_OK) {
    return Error::NpuConfigMismatch;  // the device logged why: not one of Vela's targets
  }
  npu.port.device = device;
  const regs::ArchRegisters& arch = *npu.device().identity().arch;
  EthosUDriverConfig driver_config;
  // The host's "board": Kiln's default memory configuration (npu_memory_config.h).
  set_default_memory_config(arch.product, &driver_config);
  // The device completes a stream when it starts: a few checks tell a hung one.
  driver_config.timeout_us = 1000u * 1000u;
  driver_config.max_wait_checks = 1000;
  npu.driver = new (npu.driver_storage) EthosUHardwareDriver(npu.port, driver_config);
  const Error initialized = npu.driver->init();
  if (initialized != Error::Ok) {
    unplug(npu);
    return initialized;
  }
  std::strcpy(npu.target, target);
  npu.work_memory_bytes = memory.size;
  return Error::Ok;
}

/// Puts the invocation's command stream and regions on the device's bus, each in a window
/// of its own, and tells the driver where they are.
Error map_memory(PluggedNpu& npu, const NpuInvocation& invocation) {
  npu.num_windows = 0;
  uint64_t next = kFirstBusAddress;
  auto add = [&](const void* data, size_t size, bool read_only) {
    const uintptr_t cpu = reinterpret_cast<uintptr_t>(data);
    const uint64_t bus = next + cpu % kWindowGranule;
    if (size >= kBusLimit || bus + size >= kBusLimit) {
      KILN_LOG(Error, "host NPU: %zu bytes do not fit the NPU's 4 GiB address space", size);
      return Error::NpuRegionOutsideMemory;
    }
    npu.windows[npu.num_windows] = {cpu, bus, size};
    npu.ranges[npu.num_windows] = {bus, const_cast<uint8_t*>(static_cast<const uint8_t*>(data)), size,
                                   read_only ? 1 : 0};
    ++npu.num_windows;
    next = (bus + size + 2 * kWindowGranule - 1) / kWindowGranule * kWindowGranule;
    return Error::Ok;
  };
  KILN_TRY(add(invocation.command_stream.data(), invocation.command_stream.size() * 4, true));
  for (size_t i = 0; i < invocation.regions.size() && i < kNpuMaxRegions; ++i) {
    const NpuRegion& region = invocation.regions[i];
    if (region.size != 0 && region.data != nullptr) KILN_TRY(add(region.data, region.size, region.read_only));
  }
  if (kiln_npu_device_set_memory(npu.port.device, npu.ranges, npu.num_windows) != KILN_NPU_DEVICE_OK) {
    return Error::Internal;  // the device logged why
  }
  npu.driver->set_npu_memory({npu.windows, npu.num_windows});
  return Error::Ok;
}

}  // namespace

size_t HostVirtualNpu::region_alignment() const { return regs::kBaseAlignment; }

Error HostVirtualNpu::invoke(const NpuInvocation& invocation, NpuCounters* counters) {
  std::lock_guard<std::mutex> lock(host_virtual_npu_mutex());
  if (counters != nullptr) *counters = NpuCounters();
  num_records_ = 0;
  PluggedNpu& npu = plugged();
  KILN_TRY(plug_in(npu, invocation.target != nullptr ? invocation.target : kHostDefaultTarget));
  KILN_TRY(map_memory(npu, invocation));
  vnpu::device::EthosUDevice& device = npu.device();
  VnpuOperationListener listener(invocation.listener);
  device.set_operation_observer(invocation.listener != nullptr ? &listener : nullptr);
  device.set_op_records(records_);
  const uint64_t started = device.streams_started();
  const Error error = npu.driver->invoke(invocation, counters);
  device.set_operation_observer(nullptr);
  if (device.streams_started() != started) {
    num_records_ = device.num_records();
    if (counters != nullptr) add_model_counters(device.last_counters(), counters);
  }
  return error;
}

Error HostVirtualNpu::prepare(Span<const uint32_t> command_stream, const char* target) {
  std::lock_guard<std::mutex> lock(host_virtual_npu_mutex());
  const char* name = target != nullptr ? target : kHostDefaultTarget;
  vnpu::Config config;
  if (!vnpu::config_from_target_name(name, &config)) {
    KILN_LOG(Error, "host NPU: target '%s' is not an Ethos-U configuration Vela compiles for", name);
    return Error::NpuConfigMismatch;
  }
  uint64_t needed = 0;
  KILN_TRY(vnpu::work_memory_bytes(config, command_stream, &needed));
  if (needed > max_work_memory_bytes_) {
    KILN_LOG(Error, "host NPU: the program's command stream needs %llu bytes of virtual NPU work memory; "
             "at most %zu are allowed", static_cast<unsigned long long>(needed), max_work_memory_bytes_);
    return Error::OutOfResources;
  }
  if (needed <= work_memory().size) return Error::Ok;
  // The device is made again on the grown memory at the next invocation.
  unplug(plugged());
  if (!grow_work_memory(static_cast<size_t>(needed))) {
    KILN_LOG(Error, "host NPU: cannot allocate the %llu bytes of work memory the program needs",
             static_cast<unsigned long long>(needed));
    return Error::OutOfResources;
  }
  return Error::Ok;
}

size_t HostVirtualNpu::work_memory_bytes() const {
  std::lock_guard<std::mutex> lock(host_virtual_npu_mutex());
  return work_memory().size;
}

bool HostVirtualNpu::identity(NpuIdentity* out) const {
  const PluggedNpu& npu = plugged();
  if (npu.driver == nullptr || !npu.driver->is_available()) return false;
  *out = npu.driver->identity();
  return true;
}

std::mutex& host_virtual_npu_mutex() {
  static std::mutex mutex;
  return mutex;
}

HostVirtualNpu& host_virtual_npu() {
  static HostVirtualNpu npu;
  return npu;
}

Error register_ethos_u_backend_with_virtual_npu() { return register_ethos_u_backend(&host_virtual_npu()); }

}  // namespace kiln::ethos_u
