// The register-level driver's skeleton: every entry point exists and says, by name, that
// it is not implemented — never a silent success.
#include "backends/arm/runtime/ethos_u_hardware_driver.h"

#include <gtest/gtest.h>

#include <cstdint>

#include "backends/arm/runtime/ethos_u_backend.h"

namespace {

using kiln::Error;
using kiln::ethos_u::EthosUHardwareDriver;

TEST(EthosUHardwareDriver, EveryEntryPointReportsNotImplemented) {
  EthosUHardwareDriver driver(0x48102000u);
  EXPECT_EQ(driver.init(), Error::NotImplemented);
  EXPECT_FALSE(driver.is_available());
  EXPECT_STREQ(driver.name(), "ethos-u-hardware");
  EXPECT_EQ(driver.region_alignment(), 16u);
  const uint32_t stream[] = {0x31504f43u, 0u};
  kiln::ethos_u::NpuInvocation invocation;
  invocation.command_stream = {stream, 2};
  kiln::ethos_u::NpuCounters counters;
  counters.commands = 7;
  EXPECT_EQ(driver.invoke(invocation, &counters), Error::NotImplemented);
  EXPECT_EQ(counters.commands, 0u);
  EXPECT_EQ(driver.invoke(invocation, nullptr), Error::NotImplemented);
}

TEST(EthosUHardwareDriver, ABackendOnItIsNotAvailable) {
  EthosUHardwareDriver driver(0x48102000u);
  const kiln::ethos_u::EthosUBackend backend(&driver);
  EXPECT_FALSE(backend.is_available());
}

}  // namespace
