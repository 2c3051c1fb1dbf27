#include "runtime/kernel/kernel_context.h"

#include <gtest/gtest.h>

namespace {

using kiln::Error;

TEST(KernelContext, RecordsFailure) {
  kiln::KernelContext context(nullptr);
  EXPECT_EQ(context.failure_state(), Error::Ok);
  context.fail(Error::InvalidArgument);
  EXPECT_EQ(context.failure_state(), Error::InvalidArgument);
}

TEST(KernelContext, AllocatesTempMemory) {
  alignas(16) uint8_t pool[64];
  kiln::MemoryAllocator temp(pool, sizeof(pool));
  kiln::KernelContext context(&temp);
  EXPECT_NE(context.allocate_temp(32), nullptr);
  EXPECT_EQ(context.allocate_temp(64), nullptr);
  kiln::KernelContext without_temp(nullptr);
  EXPECT_EQ(without_temp.allocate_temp(1), nullptr);
}

}  // namespace
