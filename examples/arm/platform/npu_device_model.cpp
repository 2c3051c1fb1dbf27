// The NPU of a board whose board file says "device": "model" (QEMU's mps3-an547 has no
// Ethos-U): Kiln's virtual NPU as a register-accurate device (backends/arm/vnpu/device),
// reached the way silicon is — the driver's loads and stores at the board's NPU base
// address fault in the MPU and the register trap (register_trap.h) performs them on the
// device. The device's bus reaches exactly the board's NPU-visible memory regions, at
// their CPU addresses; its interrupt line pends the board's NPU interrupt in the NVIC.
//
// Which Ethos-U the device is comes from the firmware (kiln_embedded_npu_target, the
// target kiln_add_firmware(NPU_TARGET) was given): silicon has one NPU, so does a build.
// The driver is the silicon build's: this file replaces only board_npu_start().
#include <cstdint>

#include "backends/arm/vnpu/device/ethos_u_device.h"
#include "backends/arm/vnpu/virtual_npu.h"
#include "examples/arm/platform/board.h"
#include "examples/arm/platform/board_npu.h"
#include "examples/arm/platform/npu_device_model.h"
#include "examples/arm/platform/register_trap.h"

extern "C" const char* const kiln_embedded_npu_target;

namespace {

/// The NVIC's set-pending and clear-pending registers (32 interrupts each).
constexpr uintptr_t kNvicIspr = 0xE000E200u, kNvicIcpr = 0xE000E280u;

volatile uint32_t& nvic_word(uintptr_t bank, uint32_t irq) {
  return reinterpret_cast<volatile uint32_t*>(bank)[irq / 32];
}

// The virtual NPU's internal memory and weight-decode scratch: megabytes, so in DDR
// (the DTCM that holds .bss has 512 KiB).
alignas(16) __attribute__((section(".bss.kiln_ddr.vnpu_work")))
uint8_t g_work[kiln::vnpu::kRecommendedWorkMemoryBytes];
alignas(16) uint8_t g_storage[4096];
kiln_npu_device* g_device = nullptr;

/// The board's NPU-visible regions (board_profile.cmake numbers them).
const kiln_npu_memory_range kMemory[] = {
#define KILN_REGION(i) \
  {KILN_BOARD_NPU_VISIBLE_REGION_##i##_BASE, reinterpret_cast<uint8_t*>(KILN_BOARD_NPU_VISIBLE_REGION_##i##_BASE), \
   KILN_BOARD_NPU_VISIBLE_REGION_##i##_BYTES, 0}
    KILN_REGION(0),
#if KILN_BOARD_NPU_VISIBLE_REGION_COUNT > 1
    KILN_REGION(1),
#endif
#if KILN_BOARD_NPU_VISIBLE_REGION_COUNT > 2
    KILN_REGION(2),
#endif
#if KILN_BOARD_NPU_VISIBLE_REGION_COUNT > 3
#error "npu_device_model.cpp maps at most 3 NPU-visible regions: add a line"
#endif
#undef KILN_REGION
};

/// The device's interrupt line is level-sensitive: pending while it is raised.
void on_irq(void*, int raised) {
  nvic_word(raised != 0 ? kNvicIspr : kNvicIcpr, KILN_BOARD_NPU_IRQ) = 1u << (KILN_BOARD_NPU_IRQ % 32);
}

int read_register(void* device, uint32_t offset, uint32_t* value) {
  return kiln_npu_device_read(static_cast<kiln_npu_device*>(device), offset, value) == KILN_NPU_DEVICE_OK ? 0 : -1;
}

int write_register(void* device, uint32_t offset, uint32_t value) {
  return kiln_npu_device_write(static_cast<kiln_npu_device*>(device), offset, value) == KILN_NPU_DEVICE_OK ? 0 : -1;
}

}  // namespace

extern "C" int board_npu_start(void) {
  if (g_device != nullptr) return 0;
  if (kiln_npu_device_storage_bytes() > sizeof(g_storage)) {
    board_printf("E [npu model] the device needs %zu bytes of storage; %zu reserved\n",
                 kiln_npu_device_storage_bytes(), sizeof(g_storage));
    return -1;
  }
  kiln_npu_device_config config = {};
  config.target = kiln_embedded_npu_target;
  config.memory = kMemory;
  config.num_memory = sizeof(kMemory) / sizeof(kMemory[0]);
  config.work_memory = g_work;
  config.work_memory_bytes = sizeof(g_work);
  config.irq = &on_irq;
  kiln_npu_device* device = nullptr;
  if (kiln_npu_device_create(g_storage, sizeof(g_storage), &config, &device) != KILN_NPU_DEVICE_OK) {
    board_printf("E [npu model] cannot make an NPU '%s' (not one of Vela's targets?)\n", kiln_embedded_npu_target);
    return -1;
  }
  const uint32_t window = kiln_npu_device_window_bytes(device);
  if (register_trap_install(KILN_BOARD_NPU_BASE, window, &read_register, &write_register, device) != 0) return -1;
  g_device = device;
  board_printf("I [npu model] %s (Kiln's virtual NPU) behind registers 0x%08lx-0x%08lx, interrupt %d: "
               "register accesses trap in the MPU\n",
               kiln_embedded_npu_target, static_cast<unsigned long>(KILN_BOARD_NPU_BASE),
               static_cast<unsigned long>(KILN_BOARD_NPU_BASE + window - 1u), KILN_BOARD_NPU_IRQ);
  return 0;
}

extern "C" kiln_npu_device* board_npu_device_model(void) { return g_device; }
