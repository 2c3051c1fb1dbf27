/* The device's interface compiled as C: a C program makes a device, reads its ID and
 * CONFIG, and refuses an unaligned register offset. Called from test_ethos_u_device.cpp. */
#include "backends/arm/vnpu/device/ethos_u_device.h"

#include <stdalign.h>
#include <string.h>

static alignas(64) unsigned char g_storage[8192];
static uint8_t g_work[96 * 1024];

int kiln_device_c_api_smoke(void) {
  kiln_npu_device_config config;
  kiln_npu_device* device = NULL;
  uint32_t value = 0;
  memset(&config, 0, sizeof(config));
  config.target = "ethos-u65-256";
  config.work_memory = g_work;
  config.work_memory_bytes = sizeof(g_work);
  if (kiln_npu_device_storage_bytes() > sizeof(g_storage)) return 1;
  if (kiln_npu_device_create(g_storage, sizeof(g_storage), &config, &device) != KILN_NPU_DEVICE_OK) return 2;
  if (kiln_npu_device_read(device, 0x028, &value) != KILN_NPU_DEVICE_OK || value != 0x10003008u) return 3;
  if (kiln_npu_device_read(device, 0x000, &value) != KILN_NPU_DEVICE_OK || (value >> 28) != 1u) return 4;
  if (kiln_npu_device_read(device, 0x006, &value) != KILN_NPU_DEVICE_BAD_OFFSET) return 5;
  return 0;
}
