// A register-accurate device with a small memory map for the device's tests: the command
// stream at bus 0x1000 (read only), 256 bytes of weights at 0x10000 (read only) and 1 KiB
// of scratch at 0x20000, with guard bytes around each that the bus does not reach.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "backends/arm/registers/ethos_u_registers.h"
#include "backends/arm/vnpu/device/ethos_u_device.h"
#include "backends/arm/vnpu/virtual_npu.h"

namespace kiln::vnpu::device::testing {

namespace regs = ethos_u::regs;

constexpr uint64_t kStreamBus = 0x1000, kWeightsBus = 0x10000, kScratchBus = 0x20000;
constexpr size_t kStreamWords = 512, kWeightBytes = 256, kScratchBytes = 1024, kGuard = 64;

class DeviceHarness {
 public:
  /// Makes the device; false (with a test failure) if it refuses.
  bool create(const char* target = "ethos-u55-128", uint32_t reset_reads = 0, uint64_t max_commands = 0) {
    kiln_npu_device_config config = {};
    config.target = target;
    config.work_memory = work_.data();
    config.work_memory_bytes = work_.size();
    config.irq = &DeviceHarness::on_irq;
    config.irq_context = this;
    config.reset_status_reads = reset_reads;
    config.max_commands = max_commands;
    const kiln_npu_memory_range ranges[] = {
        {kStreamBus, reinterpret_cast<uint8_t*>(stream_.data() + kGuard / 4), kStreamWords * 4, 1},
        {kWeightsBus, weights_.data() + kGuard, kWeightBytes, 1},
        {kScratchBus, scratch_.data() + kGuard, kScratchBytes, 0}};
    config.memory = ranges;
    config.num_memory = 3;
    EXPECT_LE(kiln_npu_device_storage_bytes(), sizeof(storage_));
    const bool made = kiln_npu_device_create(storage_, sizeof(storage_), &config, &device_) == KILN_NPU_DEVICE_OK;
    EXPECT_TRUE(made);
    return made;
  }

  uint32_t read(uint32_t offset) {
    uint32_t value = 0;
    EXPECT_EQ(kiln_npu_device_read(device_, offset, &value), KILN_NPU_DEVICE_OK) << offset;
    return value;
  }
  void write(uint32_t offset, uint32_t value) {
    EXPECT_EQ(kiln_npu_device_write(device_, offset, value), KILN_NPU_DEVICE_OK) << offset;
  }

  /// Puts `words` at the stream's place, points QBASE/QSIZE at them and BASEP0/1 at the
  /// weights and the scratch (plus the offsets given), starts, and returns STATUS.
  uint32_t run(const std::vector<uint32_t>& words, uint64_t basep1 = kScratchBus) {
    std::memcpy(stream_.data() + kGuard / 4, words.data(), words.size() * 4);
    write(regs::kQbase, static_cast<uint32_t>(kStreamBus));
    write(regs::kQsize, static_cast<uint32_t>(words.size() * 4));
    write(regs::basep_lo(0), static_cast<uint32_t>(kWeightsBus));
    write(regs::basep_lo(1), static_cast<uint32_t>(basep1));
    write(regs::kCmd, regs::cmd::kClockPowerMask | regs::cmd::kTransitionToRunning);
    return read(regs::kStatus);
  }

  uint8_t* weights() { return weights_.data() + kGuard; }
  uint8_t* scratch() { return scratch_.data() + kGuard; }
  /// True when no byte outside the bus's reach changed.
  bool guards_intact() const {
    for (const std::vector<uint8_t>* b : {&weights_, &scratch_}) {
      const size_t inner = b == &weights_ ? kWeightBytes : kScratchBytes;
      for (size_t i = 0; i < kGuard; ++i) {
        if ((*b)[i] != 0xee || (*b)[kGuard + inner + i] != 0xee) return false;
      }
    }
    return true;
  }

  kiln_npu_device* device() { return device_; }
  int raised = 0, lowered = 0;

 private:
  static void on_irq(void* context, int up) {
    auto* self = static_cast<DeviceHarness*>(context);
    (up != 0 ? self->raised : self->lowered) += 1;
  }

  alignas(64) unsigned char storage_[8192];
  kiln_npu_device* device_ = nullptr;
  std::vector<uint8_t> work_ = std::vector<uint8_t>(kInternalMemoryBytes + 256 * 1024);
  std::vector<uint32_t> stream_ = std::vector<uint32_t>(kStreamWords + kGuard / 2);
  std::vector<uint8_t> weights_ = std::vector<uint8_t>(kWeightBytes + 2 * kGuard, 0xee);
  std::vector<uint8_t> scratch_ = std::vector<uint8_t>(kScratchBytes + 2 * kGuard, 0xee);
};

}  // namespace kiln::vnpu::device::testing
