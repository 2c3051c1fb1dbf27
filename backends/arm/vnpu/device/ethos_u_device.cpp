// The C interface (ethos_u_device.h) over EthosUDevice.
#include "backends/arm/vnpu/device/ethos_u_device.h"

#include <new>

#include "backends/arm/vnpu/device/npu_device.h"

struct kiln_npu_device {
  kiln::vnpu::device::EthosUDevice device;
};

namespace kiln::vnpu::device {
namespace {

/// The C ranges as the device's (bool read-only flags, checked count).
kiln_npu_device_result to_ranges(const kiln_npu_memory_range* memory, size_t count,
                                 MemoryRange (&out)[kMaxMemoryRanges]) {
  if ((memory == nullptr && count != 0) || count > kMaxMemoryRanges) return KILN_NPU_DEVICE_INVALID_ARGUMENT;
  for (size_t i = 0; i < count; ++i) {
    out[i] = {memory[i].bus_address, memory[i].host, memory[i].size, memory[i].read_only != 0};
  }
  return KILN_NPU_DEVICE_OK;
}

}  // namespace

EthosUDevice& device_of(kiln_npu_device* handle) { return handle->device; }

}  // namespace kiln::vnpu::device

using kiln::vnpu::device::EthosUDevice;

extern "C" {

size_t kiln_npu_device_storage_bytes(void) { return sizeof(kiln_npu_device); }

size_t kiln_npu_device_storage_alignment(void) { return alignof(kiln_npu_device); }

kiln_npu_device_result kiln_npu_device_create(void* storage, size_t storage_bytes,
                                              const kiln_npu_device_config* config,
                                              kiln_npu_device** device) {
  if (storage == nullptr || config == nullptr || device == nullptr ||
      storage_bytes < sizeof(kiln_npu_device) ||
      reinterpret_cast<uintptr_t>(storage) % alignof(kiln_npu_device) != 0 ||
      (config->work_memory == nullptr && config->work_memory_bytes != 0)) {
    return KILN_NPU_DEVICE_INVALID_ARGUMENT;
  }
  kiln::vnpu::device::DeviceIdentity identity;
  if (kiln::vnpu::device::identity_from_target(config->target, config->id, &identity) != kiln::Error::Ok) {
    return KILN_NPU_DEVICE_INVALID_ARGUMENT;
  }
  if (config->max_commands != 0) identity.npu.max_commands = config->max_commands;
  if (config->max_operations != 0) identity.npu.max_operations = config->max_operations;
  if (config->max_macs != 0) identity.npu.max_macs = config->max_macs;
  kiln::vnpu::device::MemoryRange ranges[kiln::vnpu::device::kMaxMemoryRanges];
  const kiln_npu_device_result converted = kiln::vnpu::device::to_ranges(config->memory, config->num_memory, ranges);
  if (converted != KILN_NPU_DEVICE_OK) return converted;
  auto* handle = new (storage) kiln_npu_device{EthosUDevice(
      identity, {config->work_memory, config->work_memory_bytes}, config->irq, config->irq_context,
      config->reset_status_reads)};
  if (handle->device.set_memory({ranges, config->num_memory}) != kiln::Error::Ok) {
    return KILN_NPU_DEVICE_INVALID_ARGUMENT;
  }
  *device = handle;
  return KILN_NPU_DEVICE_OK;
}

kiln_npu_device_result kiln_npu_device_set_memory(kiln_npu_device* device,
                                                  const kiln_npu_memory_range* memory,
                                                  size_t num_memory) {
  if (device == nullptr) return KILN_NPU_DEVICE_INVALID_ARGUMENT;
  kiln::vnpu::device::MemoryRange ranges[kiln::vnpu::device::kMaxMemoryRanges];
  const kiln_npu_device_result converted = kiln::vnpu::device::to_ranges(memory, num_memory, ranges);
  if (converted != KILN_NPU_DEVICE_OK) return converted;
  return device->device.set_memory({ranges, num_memory}) == kiln::Error::Ok ? KILN_NPU_DEVICE_OK
                                                                              : KILN_NPU_DEVICE_INVALID_ARGUMENT;
}

kiln_npu_device_result kiln_npu_device_read(kiln_npu_device* device, uint32_t offset, uint32_t* value) {
  if (device == nullptr || value == nullptr) return KILN_NPU_DEVICE_INVALID_ARGUMENT;
  if (!device->device.is_register(offset)) return KILN_NPU_DEVICE_BAD_OFFSET;
  *value = device->device.read(offset);
  return KILN_NPU_DEVICE_OK;
}

kiln_npu_device_result kiln_npu_device_write(kiln_npu_device* device, uint32_t offset, uint32_t value) {
  if (device == nullptr) return KILN_NPU_DEVICE_INVALID_ARGUMENT;
  if (!device->device.is_register(offset)) return KILN_NPU_DEVICE_BAD_OFFSET;
  device->device.write(offset, value);
  return KILN_NPU_DEVICE_OK;
}

uint32_t kiln_npu_device_window_bytes(const kiln_npu_device* device) {
  return device == nullptr ? 0u : device->device.identity().arch->window_bytes;
}

kiln_npu_device_result kiln_npu_device_inject_fault(kiln_npu_device* device, kiln_npu_fault fault,
                                                    uint32_t status_reads) {
  if (device == nullptr || fault < KILN_NPU_FAULT_NONE || fault > KILN_NPU_FAULT_SLOW) {
    return KILN_NPU_DEVICE_INVALID_ARGUMENT;
  }
  device->device.inject_fault(fault, status_reads);
  return KILN_NPU_DEVICE_OK;
}

}  // extern "C"
