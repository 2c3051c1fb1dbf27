#include "tests/cpp/ethos_u/npu_test_board.h"

#include <gtest/gtest.h>

#include <cstring>
#include <new>

#include "backends/arm/vnpu/virtual_npu.h"

namespace kiln_test {
namespace {

namespace regs = kiln::ethos_u::regs;

NpuTestBoard* g_board = nullptr;  // the hooks' board (cache hooks have no context)
CapturedLog* g_log = nullptr;

void capture(kiln::LogLevel, const char* message, size_t length, void* user) {
  static_cast<CapturedLog*>(user)->messages.emplace_back(message, length);
}

uint32_t cmd0(uint32_t code, uint32_t param) { return code | (param << 16); }

}  // namespace

std::vector<uint32_t> cop1_payload(uint32_t config, uint32_t id, const std::vector<uint32_t>& commands) {
  std::vector<uint32_t> words = {0x31504f43u, 0x00100001u, config, id, 5u, 5u, 5u,
                                 (static_cast<uint32_t>(commands.size()) << 16) | 2u};
  words.insert(words.end(), commands.begin(), commands.end());
  return words;
}

std::vector<uint32_t> dma_commands(uint32_t src_region, uint32_t src, uint32_t dst, uint32_t length, bool stop) {
  constexpr uint32_t kPayload = 0x4000;
  std::vector<uint32_t> words = {cmd0(0x130, src_region), cmd0(0x131, 1), 0x030 | kPayload, src,
                                 0x031 | kPayload, dst, 0x032 | kPayload, length, cmd0(0x010, 0)};
  if (stop) words.push_back(cmd0(0x000, 0xffff));
  return words;
}

uint32_t DeviceRegisterPort::read(uint32_t offset) {
  uint32_t value = 0;
  EXPECT_EQ(kiln_npu_device_read(device, offset, &value), KILN_NPU_DEVICE_OK) << offset;
  return value;
}

void DeviceRegisterPort::write(uint32_t offset, uint32_t value) {
  EXPECT_EQ(kiln_npu_device_write(device, offset, value), KILN_NPU_DEVICE_OK) << offset;
}

CapturedLog::CapturedLog() {
  g_log = this;
  kiln::set_log_sink(&capture, this);
}

CapturedLog::~CapturedLog() {
  kiln::set_log_sink(nullptr, nullptr);
  g_log = nullptr;
}

bool CapturedLog::contains(const std::string& text) const {
  for (const std::string& m : messages) {
    if (m.find(text) != std::string::npos) return true;
  }
  return false;
}

NpuTestBoard::NpuTestBoard(const char* target, uint32_t reset_reads, size_t scratch_on_bus)
    : work_(kiln::vnpu::kInternalMemoryBytes + 256 * 1024) {
  g_board = this;
  kiln_npu_device_config device_config = {};
  device_config.target = target;
  device_config.work_memory = work_.data();
  device_config.work_memory_bytes = work_.size();
  device_config.irq = &NpuTestBoard::on_irq;
  device_config.irq_context = this;
  device_config.reset_status_reads = reset_reads;
  device_config.max_commands = 100000;
  const kiln_npu_memory_range ranges[] = {
      {kPayloadBus, reinterpret_cast<uint8_t*>(payload_.data()), kPayloadWords * 4, 1},
      {kWeightsBus, weights_.data(), kWeightBytes, 1},
      {kScratchBus, scratch_.data(), scratch_on_bus, 0}};
  device_config.memory = ranges;
  device_config.num_memory = 3;
  EXPECT_EQ(kiln_npu_device_create(storage_, sizeof(storage_), &device_config, &port_.device), KILN_NPU_DEVICE_OK);
  windows_[0] = {reinterpret_cast<uintptr_t>(payload_.data()), kPayloadBus, kPayloadWords * 4};
  windows_[1] = {reinterpret_cast<uintptr_t>(weights_.data()), kWeightsBus, kWeightBytes};
  windows_[2] = {reinterpret_cast<uintptr_t>(scratch_.data()), kScratchBus, kScratchBytes};
  regions_[0] = {weights_.data(), kWeightBytes, /*read_only=*/true};
  regions_[1] = {scratch_.data(), kScratchBytes, false};
  config_.base_address = 0x48102000u;
  config_.irq_number = 56;
  config_.npu_memory = {windows_, 3};
  config_.clean_dcache = &NpuTestBoard::clean_hook;
  config_.invalidate_dcache = &NpuTestBoard::invalidate_hook;
  config_.max_wait_checks = 100;
  rebuild_driver();
}

void NpuTestBoard::rebuild_driver() {
  if (driver_ != nullptr) driver_->~EthosUHardwareDriver();
  driver_ = new (driver_storage_) kiln::ethos_u::EthosUHardwareDriver(port_, config_);
}

void NpuTestBoard::use_wait_hook() {
  config_.wait_for_interrupt = &NpuTestBoard::wait_hook;
  config_.wait_context = this;
  rebuild_driver();
}

kiln::ethos_u::NpuInvocation NpuTestBoard::invocation(const std::vector<uint32_t>& payload, const char* target) {
  EXPECT_LE(payload.size(), kPayloadWords);
  std::memcpy(payload_.data(), payload.data(), payload.size() * 4);
  kiln::ethos_u::NpuInvocation invocation;
  invocation.command_stream = {payload_.data(), payload.size()};
  invocation.regions = {regions_, 2};
  invocation.target = target;
  return invocation;
}

void NpuTestBoard::on_irq(void* context, int raised) {
  auto* board = static_cast<NpuTestBoard*>(context);
  if (raised != 0 && board->driver_ != nullptr) board->driver_->handle_irq();
}

void NpuTestBoard::clean_hook(const void* data, size_t bytes) { g_board->cleaned.push_back({data, bytes}); }

void NpuTestBoard::invalidate_hook(const void* data, size_t bytes) {
  g_board->invalidated.push_back({data, bytes});
}

void NpuTestBoard::wait_hook(void* context, const volatile bool* irq_seen) {
  auto* board = static_cast<NpuTestBoard*>(context);
  ++board->waits;
  if (!*irq_seen && board->wait_reads_status) board->port_.read(regs::kStatus);
}

}  // namespace kiln_test
