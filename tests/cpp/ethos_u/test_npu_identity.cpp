// ID and CONFIG to the NPU's description, and the checks of a stream's configuration and a
// program's target against it. The configuration words are Vela's for each target.
#include "backends/arm/runtime/npu_identity.h"

#include <gtest/gtest.h>

#include <string>

namespace {

using kiln::Error;
using kiln::ethos_u::NpuIdentity;

NpuIdentity npu(uint32_t id, uint32_t config) {
  kiln::Result<NpuIdentity> identity = kiln::ethos_u::identify_npu(id, config);
  EXPECT_TRUE(identity.ok());
  return *identity;
}

TEST(NpuIdentity, DescribesWhatIdAndConfigSay) {
  char line[256];
  kiln::ethos_u::describe_npu(npu(0x10104201u, 0x00001807u), line, sizeof(line));
  EXPECT_EQ(std::string(line),
            "Ethos-U55 with 128 MACs/cycle, 24 KiB SHRAM, command stream version 0 (CONFIG 0x00001807); "
            "r2p0, architecture 1.1.0 (ID 0x10104201)");
  kiln::ethos_u::describe_config(0x2000261bu, line, sizeof(line));
  EXPECT_EQ(std::string(line),
            "Ethos-U85 with 2048 MACs/cycle, 4 weight decoders, 4 SRAM and 2 external AXI ports, command stream "
            "version 1 (CONFIG 0x2000261b)");
  char small[8];
  kiln::ethos_u::describe_npu(npu(0x20007001u, 0x20000118u), small, sizeof(small));
  EXPECT_EQ(std::string(small), "Ethos-U");
  EXPECT_EQ(kiln::ethos_u::identify_npu(0, 0x30000000u).error(), Error::NotSupported);
}

TEST(NpuIdentity, StreamConfigurationsAreCheckedFieldByField) {
  const NpuIdentity u55 = npu(0x10104201u, 0x00001807u);
  EXPECT_EQ(check_stream_config(u55, 0x00001807u, 0x10066001u), Error::Ok);  // Vela's arch 1.0.6 on a 1.1.0
  EXPECT_EQ(check_stream_config(u55, 0x00001808u, 0x10066001u), Error::NpuConfigMismatch);  // MACs
  EXPECT_EQ(check_stream_config(u55, 0x00003007u, 0x10066001u), Error::NpuConfigMismatch);  // SHRAM
  EXPECT_EQ(check_stream_config(u55, 0x00001817u, 0x10066001u), Error::NpuConfigMismatch);  // version
  EXPECT_EQ(check_stream_config(u55, 0x10001807u, 0x10066001u), Error::NpuConfigMismatch);  // product
  EXPECT_EQ(check_stream_config(u55, 0x00001807u, 0x20066001u), Error::NpuConfigMismatch);  // arch major
  EXPECT_EQ(check_stream_config(u55, 0x00001807u, 0x10266001u), Error::NpuConfigMismatch);  // arch minor
  const NpuIdentity u85 = npu(0x20007001u, 0x20001119u);
  EXPECT_EQ(check_stream_config(u85, 0x20001119u, 0x20007000u), Error::Ok);
  EXPECT_EQ(check_stream_config(u85, 0x20000119u, 0x20007000u), Error::NpuConfigMismatch);  // cores
}

TEST(NpuIdentity, TargetNamesAreCheckedAgainstProductAndMacs) {
  const NpuIdentity u65 = npu(0x10066001u, 0x10006009u);
  EXPECT_EQ(check_target_name(u65, "ethos-u65-512"), Error::Ok);
  EXPECT_EQ(check_target_name(u65, "ethos-u65-256"), Error::NpuConfigMismatch);
  EXPECT_EQ(check_target_name(u65, "ethos-u55-512"), Error::NpuConfigMismatch);
  EXPECT_EQ(check_target_name(u65, "ethos-u65-512x"), Error::NpuConfigMismatch);
  EXPECT_EQ(check_target_name(u65, "cortex-m55"), Error::NpuConfigMismatch);
  EXPECT_EQ(check_target_name(u65, nullptr), Error::NpuConfigMismatch);
}

}  // namespace
