// The documented cycle estimate, on operations whose figures are worked out by hand.
#include "backends/arm/vnpu/device/cycle_estimate.h"

#include <gtest/gtest.h>

namespace kiln::vnpu::device {
namespace {

OpRecord op(OpKind kind, uint64_t macs, uint64_t read, uint64_t written) {
  OpRecord r;
  r.kind = static_cast<uint16_t>(kind);
  r.macs = macs;
  r.bytes_read = read;
  r.bytes_written = written;
  return r;
}

TEST(CycleEstimate, ComputeBoundConvolution) {
  const CycleModel u55_128{128, 8};
  // 1,000,000 MACs at 128/cycle: 7813 cycles; 10,000 bytes over 8-byte beats: 1250.
  EXPECT_EQ(operation_cycles(u55_128, op(OpKind::Conv, 1000000, 6000, 4000)), 7813u + kOperationSetupCycles);
  EXPECT_EQ(operation_cycles(u55_128, op(OpKind::Depthwise, 128, 0, 0)), 1u + kOperationSetupCycles);
}

TEST(CycleEstimate, MemoryBoundOperationsAndDma) {
  const CycleModel u85_256{256, 16};
  // 4096 elements at 256 / 16 = 16 per cycle: 256 cycles; 3 * 4096 bytes at 16: 768.
  EXPECT_EQ(operation_cycles(u85_256, op(OpKind::Elementwise, 4096, 8192, 4096)), 768u + kOperationSetupCycles);
  EXPECT_EQ(operation_cycles(u85_256, op(OpKind::Dma, 0, 100, 100)), 13u + kOperationSetupCycles);
  // Small configurations step at least one element per cycle.
  EXPECT_EQ(operation_cycles(CycleModel{8, 8}, op(OpKind::Pool, 100, 0, 0)), 100u + kOperationSetupCycles);
}

TEST(CycleEstimate, TransfersRoundUpToWholeBeats) {
  EXPECT_EQ(transfer_cycles(CycleModel{128, 8}, 0), 0u);
  EXPECT_EQ(transfer_cycles(CycleModel{128, 8}, 1), 1u);
  EXPECT_EQ(transfer_cycles(CycleModel{128, 8}, 17), 3u);
}

}  // namespace
}  // namespace kiln::vnpu::device
