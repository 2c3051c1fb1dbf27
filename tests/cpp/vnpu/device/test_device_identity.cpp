// Target names to the device's identity: every Vela target, the ID override, and names
// that are none.
#include "backends/arm/vnpu/device/device_identity.h"

#include <gtest/gtest.h>

namespace kiln::vnpu::device {
namespace {

TEST(DeviceIdentity, EveryVelaTargetHasOne) {
  const char* targets[] = {"ethos-u55-32",  "ethos-u55-64",  "ethos-u55-128", "ethos-u55-256",
                           "ethos-u65-256", "ethos-u65-512", "ethos-u85-128", "ethos-u85-256",
                           "ethos-u85-512", "ethos-u85-1024", "ethos-u85-2048"};
  for (const char* target : targets) {
    DeviceIdentity identity;
    ASSERT_EQ(identity_from_target(target, 0, &identity), Error::Ok) << target;
    EXPECT_EQ(ethos_u::regs::config::product(identity.config), identity.arch->product) << target;
    EXPECT_EQ(1 << ethos_u::regs::config::macs_log2(identity.config), identity.npu.macs) << target;
    EXPECT_EQ(identity.id, identity.arch->id);
  }
  DeviceIdentity u65;
  ASSERT_EQ(identity_from_target("ethos-u65-512", 0x10166001u, &u65), Error::Ok);
  EXPECT_EQ(u65.id, 0x10166001u);
  EXPECT_EQ(u65.npu.cores, 2);
}

TEST(DeviceIdentity, OtherNamesAreRefused) {
  DeviceIdentity identity;
  EXPECT_EQ(identity_from_target("ethos-u55-512", 0, &identity), Error::NpuConfigMismatch);
  EXPECT_EQ(identity_from_target("ethos-u75-256", 0, &identity), Error::NpuConfigMismatch);
  EXPECT_EQ(identity_from_target(nullptr, 0, &identity), Error::NpuConfigMismatch);
}

}  // namespace
}  // namespace kiln::vnpu::device
