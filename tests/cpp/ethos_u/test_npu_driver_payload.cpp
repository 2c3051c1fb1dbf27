// The driver payload reader on Vela's layout (the words Vela 5.2 writes for ethos-u55-128)
// and on payloads it must refuse.
#include "backends/arm/runtime/npu_driver_payload.h"

#include <gtest/gtest.h>

#include <vector>

namespace {

using kiln::Error;
using kiln::ethos_u::parse_driver_payload;

TEST(DriverPayload, ReadsVelasLayout) {
  const std::vector<uint32_t> words = {0x31504f43u, 0x00100001u, 0x00001807u, 0x10066001u, 5, 5, 5,
                                       0x00030002u, 0x11, 0x12, 0xffff0000u};
  kiln::Result<kiln::ethos_u::DriverPayload> payload = parse_driver_payload({words.data(), words.size()});
  ASSERT_TRUE(payload.ok());
  EXPECT_TRUE(payload->has_config);
  EXPECT_EQ(payload->config, 0x00001807u);
  EXPECT_EQ(payload->id, 0x10066001u);
  EXPECT_EQ(payload->commands.data(), words.data() + 8);
  EXPECT_EQ(payload->commands.size(), 3u);
}

TEST(DriverPayload, WordsWithoutTheMagicAreBareCommands) {
  const std::vector<uint32_t> words = {0x11, 0xffff0000u};
  kiln::Result<kiln::ethos_u::DriverPayload> payload = parse_driver_payload({words.data(), words.size()});
  ASSERT_TRUE(payload.ok());
  EXPECT_FALSE(payload->has_config);
  EXPECT_EQ(payload->commands.size(), 2u);
}

TEST(DriverPayload, RefusesWhatItCannotRun) {
  auto parse = [](std::vector<uint32_t> words) { return parse_driver_payload({words.data(), words.size()}).error(); };
  EXPECT_EQ(parse({0x31504f43u}), Error::NpuStreamTruncated);                        // no stream
  EXPECT_EQ(parse({0x31504f43u, 0x00100001u, 0x1807u}), Error::NpuStreamTruncated);  // config cut short
  EXPECT_EQ(parse({0x31504f43u, 0x00050002u, 1, 2}), Error::NpuStreamTruncated);     // stream cut short
  EXPECT_EQ(parse({0x31504f43u, 0x00000009u}), Error::NpuUnknownCommand);
  EXPECT_EQ(parse({0x31504f43u, 0x00010002u, 0, 0x00010002u, 0}), Error::NotSupported);
  // Long streams keep their length's bits 16-23 in bits 8-15 of the action.
  std::vector<uint32_t> long_stream(2 + 0x10001, 0);
  long_stream[0] = 0x31504f43u;
  long_stream[1] = 0x00010102u;  // 0x10001 words
  EXPECT_EQ(parse(long_stream), Error::Ok);
}

}  // namespace
