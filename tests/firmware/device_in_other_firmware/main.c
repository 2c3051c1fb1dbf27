/* How other Cortex-M55 firmware runs on QEMU against Kiln's virtual NPU: a C program with
 * its own minimal Ethos-U55 register sequence (the way a driver such as Arm's open-source
 * core driver programs the NPU — written here from the programmer's model, not taken from
 * it) that knows nothing of Kiln's driver or runtime. It links only
 *   - the device library (kiln_vnpu_device: ethos_u_device.h, a C interface), and
 *   - the register trap (examples/arm/platform/register_trap.c + thumb_load_store.c: the
 *     MPU hole at the NPU's base address and the MemManage handler),
 * and installs them at start, exactly as docs/real-silicon.md describes. Everything after
 * that is plain volatile loads and stores at 0x48102000 and the NPU's interrupt (56).
 * Kiln's startup, UART, interrupt routing (board_npu_set_irq_handler) and semihosting exit
 * stand in for the other firmware's own.
 *
 * The job: one DMA copies 64 bytes from region 0 (weights) to region 1 (scratch) at 128.
 * Exit 0 when the ID reads as an Ethos-U55, the interrupt came, STATUS says the stream
 * ended without fault and the bytes arrived; 1 otherwise. */
#include <stdint.h>
#include <string.h>

#include "backends/arm/vnpu/device/ethos_u_device.h"
#include "examples/arm/platform/board.h"
#include "examples/arm/platform/board_npu.h"
#include "examples/arm/platform/register_trap.h"

/* ---- the other firmware's view of the NPU: its base, interrupt and registers ---- */
#define NPU_BASE 0x48102000u
#define NPU_IRQ 56u
#define NPU_REG(offset) (*(volatile uint32_t*)(NPU_BASE + (offset)))
#define NPU_ID NPU_REG(0x000)
#define NPU_STATUS NPU_REG(0x004)
#define NPU_CMD NPU_REG(0x008)
#define NPU_RESET NPU_REG(0x00C)
#define NPU_QBASE NPU_REG(0x010)
#define NPU_QBASE_HI NPU_REG(0x014)
#define NPU_QREAD NPU_REG(0x018)
#define NPU_QSIZE NPU_REG(0x020)
#define NPU_PROT NPU_REG(0x024)
#define NPU_CONFIG NPU_REG(0x028)
#define NPU_BASEP_LO(n) NPU_REG(0x080 + 8u * (n))
#define NPU_BASEP_HI(n) NPU_REG(0x084 + 8u * (n))
#define STATUS_RUNNING (1u << 0)
#define STATUS_IRQ_RAISED (1u << 1)
#define STATUS_RESET_IN_PROGRESS (1u << 3)
#define STATUS_CMD_END_REACHED (1u << 5)
#define STATUS_FAULTS 0x0000001Cu /* bus error, reset in progress, parse error */
#define CMD_START (1u << 0)
#define CMD_CLEAR_IRQ (1u << 1)
#define CMD_CLOCK_POWER (3u << 2)
#define NVIC_ISPR(n) (*(volatile uint32_t*)(0xE000E200u + 4u * (n)))
#define NVIC_ICPR(n) (*(volatile uint32_t*)(0xE000E280u + 4u * (n)))

/* NPU-visible memory: the Corstone-300's DDR (the ISRAM would do too). */
#define NPU_MEMORY __attribute__((section(".bss.kiln_ddr.other_firmware"), aligned(16)))
NPU_MEMORY static uint8_t g_weights[256];
NPU_MEMORY static uint8_t g_scratch[512];
NPU_MEMORY static uint32_t g_stream[16];
static volatile uint32_t g_irqs;

/* ---- the device model, installed once at start (the part to copy into other firmware) ---- */
__attribute__((section(".bss.kiln_ddr.other_firmware_work"), aligned(16))) static uint8_t g_work[16u << 20];
static uint8_t g_device_storage[4096] __attribute__((aligned(16)));

static void device_irq(void* context, int raised) {
  (void)context;
  if (raised) NVIC_ISPR(NPU_IRQ / 32u) = 1u << (NPU_IRQ % 32u);
  else NVIC_ICPR(NPU_IRQ / 32u) = 1u << (NPU_IRQ % 32u);
}
static int device_read(void* device, uint32_t offset, uint32_t* value) {
  return kiln_npu_device_read((kiln_npu_device*)device, offset, value) == KILN_NPU_DEVICE_OK ? 0 : -1;
}
static int device_write(void* device, uint32_t offset, uint32_t value) {
  return kiln_npu_device_write((kiln_npu_device*)device, offset, value) == KILN_NPU_DEVICE_OK ? 0 : -1;
}

static int install_npu_model(void) {
  static const kiln_npu_memory_range memory[] = {
      {0x21000000u, (uint8_t*)0x21000000u, 4u << 20, 0},   /* ISRAM */
      {0x60000000u, (uint8_t*)0x60000000u, 256u << 20, 0}, /* DDR */
  };
  kiln_npu_device_config config;
  memset(&config, 0, sizeof(config));
  config.target = "ethos-u55-128";
  config.memory = memory;
  config.num_memory = 2;
  config.work_memory = g_work;
  config.work_memory_bytes = sizeof(g_work);
  config.irq = device_irq;
  kiln_npu_device* device = 0;
  if (kiln_npu_device_create(g_device_storage, sizeof(g_device_storage), &config, &device) != KILN_NPU_DEVICE_OK) {
    return -1;
  }
  return register_trap_install(NPU_BASE, kiln_npu_device_window_bytes(device), device_read, device_write, device);
}

/* ---- the other firmware's own NPU code: raw registers and its interrupt handler ---- */

/* Its handler for interrupt 56. */
static void npu_irq_handler(void* context) {
  (void)context;
  if (NPU_STATUS & STATUS_IRQ_RAISED) {
    NPU_CMD = CMD_CLOCK_POWER | CMD_CLEAR_IRQ;
    ++g_irqs;
  }
}

static uint32_t cmd0(uint32_t code, uint32_t param) { return code | (param << 16); }

int main(void) {
  if (install_npu_model() != 0) {
    board_printf("E [other firmware] could not install the NPU model\n");
    return 1;
  }
  /* Reset (privileged, secure) and wait for it; identify. */
  while (NPU_STATUS & STATUS_RESET_IN_PROGRESS) {
  }
  NPU_RESET = 1u;
  while (NPU_STATUS & STATUS_RESET_IN_PROGRESS) {
  }
  const uint32_t id = NPU_ID, config = NPU_CONFIG, prot = NPU_PROT;
  board_printf("I [other firmware] NPU ID 0x%08lx CONFIG 0x%08lx PROT 0x%lx\n", (unsigned long)id,
               (unsigned long)config, (unsigned long)prot);

  for (uint32_t i = 0; i < sizeof(g_weights); ++i) g_weights[i] = (uint8_t)(i * 13u + 1u);
  uint32_t n = 0;
  g_stream[n++] = cmd0(0x130, 0); /* DMA source: region 0 */
  g_stream[n++] = cmd0(0x131, 1); /* DMA destination: region 1 */
  g_stream[n++] = 0x4030u;        /* DMA source address */
  g_stream[n++] = 0;
  g_stream[n++] = 0x4031u; /* DMA destination address */
  g_stream[n++] = 128;
  g_stream[n++] = 0x4032u; /* DMA length */
  g_stream[n++] = 64;
  g_stream[n++] = cmd0(0x010, 0);      /* NPU_OP_DMA_START */
  g_stream[n++] = cmd0(0x000, 0xffff); /* NPU_OP_STOP */

  /* Enabled below MemManage's priority: the handler reads STATUS through the trap. */
  board_npu_set_irq_handler(npu_irq_handler, 0);
  NPU_QBASE = (uint32_t)(uintptr_t)g_stream;
  NPU_QBASE_HI = 0;
  NPU_QSIZE = n * 4u;
  NPU_BASEP_LO(0) = (uint32_t)(uintptr_t)g_weights;
  NPU_BASEP_HI(0) = 0;
  NPU_BASEP_LO(1) = (uint32_t)(uintptr_t)g_scratch;
  NPU_BASEP_HI(1) = 0;
  NPU_CMD = CMD_CLOCK_POWER | CMD_START;
  while (g_irqs == 0) {
    __asm__ volatile("wfi");
  }
  const uint32_t status = NPU_STATUS, qread = NPU_QREAD;
  const int copied = memcmp(g_scratch + 128, g_weights, 64) == 0;
  board_printf("I [other firmware] %lu interrupt(s); STATUS 0x%08lx, QREAD %lu of %lu; data %s; %lu register "
               "accesses trapped\n", (unsigned long)g_irqs, (unsigned long)status, (unsigned long)qread,
               (unsigned long)(n * 4u), copied ? "copied" : "NOT copied", (unsigned long)register_trap_accesses());
  const int ok = (id >> 28) == 1u /* architecture major 1: Ethos-U55 */ && (status & STATUS_CMD_END_REACHED) &&
                 !(status & (STATUS_RUNNING | STATUS_FAULTS)) && qread == n * 4u && copied;
  return ok ? 0 : 1;
}
