// STATUS and QREAD after an interrupt, to the named error of each fault.
#include "backends/arm/runtime/npu_completion.h"

#include <gtest/gtest.h>

#include "backends/arm/registers/ethos_u_registers.h"

namespace {

using kiln::Error;
using kiln::ethos_u::completion_error;
namespace status = kiln::ethos_u::regs::status;

TEST(NpuCompletion, EachFaultHasItsName) {
  const uint32_t irq = status::kIrqRaised;
  EXPECT_EQ(completion_error(irq | status::kCmdEndReached, 64, 64), Error::Ok);
  EXPECT_EQ(completion_error(irq | status::kBusError, 8, 64), Error::NpuBusError);
  EXPECT_EQ(completion_error(irq | status::kEccFault | status::kCmdEndReached, 64, 64), Error::NpuBusError);
  EXPECT_EQ(completion_error(irq | status::kCmdParseError, 8, 64), Error::NpuCommandStreamParseError);
  EXPECT_EQ(completion_error(irq | status::kBranchFault, 8, 64), Error::NpuCommandStreamParseError);
  EXPECT_EQ(completion_error(irq | status::kWeightDecoderFault, 8, 64), Error::NpuWeightStreamInvalid);
  EXPECT_EQ(completion_error(irq, 64, 64), Error::NpuEndOfStreamNotReached);
  // The end marker reached but QREAD short of QSIZE (commands after NPU_OP_STOP).
  EXPECT_EQ(completion_error(irq | status::kCmdEndReached, 60, 64), Error::NpuEndOfStreamNotReached);
  // A bus abort outranks the rest.
  EXPECT_EQ(completion_error(irq | status::kBusError | status::kCmdParseError, 8, 64), Error::NpuBusError);
}

}  // namespace
