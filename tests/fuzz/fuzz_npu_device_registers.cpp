// libFuzzer target: the virtual NPU's register-accurate device through its C interface —
// register reads and writes in fuzzer-chosen sequences over fuzzer-chosen memory, starting
// command streams from anywhere, resets, injected faults, a driver-like interrupt handler.
//
// Input: a 10-byte header — target index (fuzz_inputs.h) in the low nibble of byte 0,
// flags in byte 1 (bit 0: the interrupt handler clears the IRQ, as a driver's does), the
// size of memory A (its bytes follow: read-only, command streams and weights) and of
// memory B (writable scratch, zero-filled), little-endian u32s, each capped — then 8-byte
// operations: kind, unused, a u16 selector and a u32 value, little-endian:
//   0 read register `selector`           1 write `value` to register `selector`
//   2 BASEP<selector & 7> = base of memory (selector >> 8) & 3 + value
//   3 QBASE = base of memory (selector >> 8) & 3 + value, then CMD.transition_to_running
//   4 RESET with levels `value`          5 inject fault `value` for `selector` STATUS reads
//   6 poll STATUS up to `selector` & 0xff times while it runs
// Memories: A at bus 0x10000000, B at 0x20000000, C (4 KiB, writable) at bus 2^36 + 0x1000
// (only a 40-bit NPU reaches it), 3 = no memory. make_seeds.py turns real Vela streams into
// inputs. Besides crashes and sanitizer reports, the target traps when the device changes
// memory A or any byte outside the memory it was given.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "backends/arm/registers/ethos_u_registers.h"
#include "backends/arm/vnpu/device/ethos_u_device.h"
#include "tests/fuzz/fuzz_inputs.h"

namespace {

namespace regs = kiln::ethos_u::regs;

constexpr size_t kHeaderBytes = 10, kOpBytes = 8, kGuard = 32;
constexpr uint32_t kMaxMemoryA = 1u << 20, kMaxMemoryB = 1u << 20, kMemoryC = 4096;
constexpr uint64_t kBusA = 0x10000000u, kBusB = 0x20000000u, kBusC = (uint64_t{1} << 36) + 0x1000;
constexpr uint8_t kGuardByte = 0xa5;

uint32_t read_u32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 | static_cast<uint32_t>(p[2]) << 16 |
         static_cast<uint32_t>(p[3]) << 24;
}

/// A memory with guard bytes on both sides that the device must never touch.
struct GuardedMemory {
  explicit GuardedMemory(size_t size) : bytes(size + 2 * kGuard, kGuardByte), size(size) {
    std::memset(bytes.data() + kGuard, 0, size);
  }
  uint8_t* data() { return bytes.data() + kGuard; }
  bool guards_intact() const {
    for (size_t i = 0; i < kGuard; ++i) {
      if (bytes[i] != kGuardByte || bytes[kGuard + size + i] != kGuardByte) return false;
    }
    return true;
  }
  std::vector<uint8_t> bytes;
  size_t size;
};

struct Handler {
  kiln_npu_device* device = nullptr;
  bool clears = false;
};

/// A driver's interrupt handler: reads STATUS and clears the interrupt (re-entrant calls).
void on_irq(void* context, int raised) {
  auto* handler = static_cast<Handler*>(context);
  if (raised == 0 || !handler->clears || handler->device == nullptr) return;
  uint32_t status = 0;
  // Called from inside the device; a refused access is what the fuzzer probes, not a failure.
  (void)kiln_npu_device_read(handler->device, regs::kStatus, &status);
  (void)kiln_npu_device_write(handler->device, regs::kCmd, regs::cmd::kClockPowerMask | regs::cmd::kClearIrq);
}

uint64_t base_of(uint32_t memory) {
  const uint64_t bases[] = {kBusA, kBusB, kBusC, 0x7000000000u};
  return bases[memory & 3];
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  kiln::fuzz::quiet_log();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < kHeaderBytes) return 0;
  const char* target = kiln::fuzz::target_of(data[0]);
  const bool clears = (data[1] & 1) != 0;
  const size_t available = size - kHeaderBytes;
  const size_t a_size = read_u32(data + 2) % (kMaxMemoryA + 1) < available ? read_u32(data + 2) % (kMaxMemoryA + 1)
                                                                           : available;
  const size_t b_size = read_u32(data + 6) % (kMaxMemoryB + 1);
  GuardedMemory a(a_size), b(b_size), c(kMemoryC);
  if (a_size > 0) std::memcpy(a.data(), data + kHeaderBytes, a_size);
  const std::vector<uint8_t> a_before(a.data(), a.data() + a_size);
  static std::vector<uint8_t> work(kiln::fuzz::kWorkMemoryBytes);
  static unsigned char storage[8192] __attribute__((aligned(64)));

  const kiln::vnpu::Config limits = kiln::fuzz::limited_config(target);
  Handler handler;
  handler.clears = clears;
  const kiln_npu_memory_range ranges[] = {{kBusA, a.data(), a_size, 1}, {kBusB, b.data(), b_size, 0},
                                          {kBusC, c.data(), kMemoryC, 0}};
  kiln_npu_device_config config = {};
  config.target = target;
  config.memory = ranges;
  config.num_memory = 3;
  config.work_memory = work.data();
  config.work_memory_bytes = work.size();
  config.irq = &on_irq;
  config.irq_context = &handler;
  config.reset_status_reads = 1;
  config.max_commands = limits.max_commands;
  config.max_operations = limits.max_operations;
  config.max_macs = limits.max_macs;
  kiln_npu_device* device = nullptr;
  if (kiln_npu_device_create(storage, sizeof(storage), &config, &device) != KILN_NPU_DEVICE_OK) __builtin_trap();
  handler.device = device;

  for (const uint8_t* op = data + kHeaderBytes + a_size; op + kOpBytes <= data + size; op += kOpBytes) {
    const uint32_t selector = static_cast<uint32_t>(op[2]) | static_cast<uint32_t>(op[3]) << 8;
    const uint32_t value = read_u32(op + 4);
    uint32_t read = 0;
    // Hostile register accesses are refused by design (their status is ignored); only a
    // crash is a finding.
    switch (op[0] % 7) {
      case 0: (void)kiln_npu_device_read(device, selector, &read); break;
      case 1: (void)kiln_npu_device_write(device, selector, value); break;
      case 2: {
        const uint64_t address = base_of(selector >> 8) + value;
        (void)kiln_npu_device_write(device, regs::basep_lo(selector & 7), static_cast<uint32_t>(address));
        (void)kiln_npu_device_write(device, regs::basep_hi(selector & 7), static_cast<uint32_t>(address >> 32));
        break;
      }
      case 3: {
        const uint64_t address = base_of(selector >> 8) + value;
        (void)kiln_npu_device_write(device, regs::kQbase, static_cast<uint32_t>(address));
        (void)kiln_npu_device_write(device, regs::kQbaseHi, static_cast<uint32_t>(address >> 32));
        (void)kiln_npu_device_write(device, regs::kCmd, regs::cmd::kClockPowerMask | regs::cmd::kTransitionToRunning);
        break;
      }
      case 4: (void)kiln_npu_device_write(device, regs::kReset, value); break;
      case 5: (void)kiln_npu_device_inject_fault(device, static_cast<kiln_npu_fault>(value % 4), selector); break;
      default:
        for (uint32_t i = 0; i < (selector & 0xffu); ++i) {
          (void)kiln_npu_device_read(device, regs::kStatus, &read);
          if ((read & regs::status::kRunning) == 0) break;
        }
        break;
    }
  }
  // The device wrote nothing it was not given, and nothing read only.
  if (!a.guards_intact() || !b.guards_intact() || !c.guards_intact()) __builtin_trap();
  if (a_size > 0 && std::memcmp(a.data(), a_before.data(), a_size) != 0) __builtin_trap();
  return 0;
}
