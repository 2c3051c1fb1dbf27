// CPU pointers to NPU bus addresses through the board's windows.
#include "backends/arm/runtime/npu_memory_map.h"

#include <gtest/gtest.h>

namespace {

using kiln::Error;
using kiln::ethos_u::NpuMemoryWindow;
using kiln::ethos_u::npu_bus_address;

TEST(NpuMemoryMap, TranslatesInsideAWindowOnly) {
  alignas(16) static uint8_t sram[256], flash[64];
  const NpuMemoryWindow windows[] = {{reinterpret_cast<uintptr_t>(sram), 0x21000000u, sizeof(sram)},
                                     {reinterpret_cast<uintptr_t>(flash), 0x10000000u, sizeof(flash)}};
  EXPECT_EQ(*npu_bus_address(windows, sram + 16, 32, 32, "x"), 0x21000010u);
  EXPECT_EQ(*npu_bus_address(windows, flash, 64, 32, "x"), 0x10000000u);
  EXPECT_EQ(npu_bus_address(windows, flash, 65, 32, "x").error(), Error::NpuRegionOutsideMemory);
  EXPECT_EQ(npu_bus_address(windows, sram + 250, 8, 32, "x").error(), Error::NpuRegionOutsideMemory);
  static uint8_t elsewhere[4];
  EXPECT_EQ(npu_bus_address(windows, elsewhere, 4, 32, "x").error(), Error::NpuRegionOutsideMemory);
}

TEST(NpuMemoryMap, BusAddressesMustFitTheArchitecture) {
  alignas(16) static uint8_t high[64];
  const NpuMemoryWindow windows[] = {{reinterpret_cast<uintptr_t>(high), uint64_t{0xfffffff0u}, sizeof(high)}};
  EXPECT_EQ(npu_bus_address(windows, high, 16, 32, "x").error(), Error::Ok);
  EXPECT_EQ(npu_bus_address(windows, high, 32, 32, "x").error(), Error::NpuRegionOutsideMemory);  // past 4 GiB
  EXPECT_EQ(*npu_bus_address(windows, high, 32, 40, "x"), uint64_t{0xfffffff0u});
}

}  // namespace
