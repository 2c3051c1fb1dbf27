// Ethos-U55/U65 command codes and register fields, written from the public register
// description (Arm Ethos-U55 TRM, ethos-u-core-driver). The word format is in ../commands.h.
// tests/python/arm/vnpu/test_definitions.py checks these values against Vela's own
// definitions (ethosu.vela.ethos_u55_regs).
#pragma once

#include <cstdint>

#include "backends/arm/vnpu/commands.h"

namespace kiln::vnpu::u55 {

/// cmd0: operations (0x000-0x0ff) and 16-bit register writes (0x100-0x1ff).
enum class Cmd0 : uint16_t {
  OpStop = 0x000,
  OpIrq = 0x001,
  OpConv = 0x002,
  OpDepthwise = 0x003,
  OpPool = 0x005,
  OpElementwise = 0x006,
  OpDmaStart = 0x010,
  OpDmaWait = 0x011,
  OpKernelWait = 0x012,
  OpPmuMask = 0x013,
  IfmPadTop = 0x100,
  IfmPadLeft = 0x101,
  IfmPadRight = 0x102,
  IfmPadBottom = 0x103,
  IfmDepthM1 = 0x104,
  IfmPrecision = 0x105,
  IfmUpscale = 0x107,
  IfmZeroPoint = 0x109,
  IfmWidth0M1 = 0x10a,
  IfmHeight0M1 = 0x10b,
  IfmHeight1M1 = 0x10c,
  IfmIbEnd = 0x10d,
  IfmRegion = 0x10f,
  OfmWidthM1 = 0x111,
  OfmHeightM1 = 0x112,
  OfmDepthM1 = 0x113,
  OfmPrecision = 0x114,
  OfmBlkWidthM1 = 0x115,
  OfmBlkHeightM1 = 0x116,
  OfmBlkDepthM1 = 0x117,
  OfmZeroPoint = 0x118,
  OfmWidth0M1 = 0x11a,
  OfmHeight0M1 = 0x11b,
  OfmHeight1M1 = 0x11c,
  OfmRegion = 0x11f,
  KernelWidthM1 = 0x120,
  KernelHeightM1 = 0x121,
  KernelStride = 0x122,
  ParallelMode = 0x123,
  AccFormat = 0x124,
  Activation = 0x125,
  ActivationMin = 0x126,
  ActivationMax = 0x127,
  WeightRegion = 0x128,
  ScaleRegion = 0x129,
  AbStart = 0x12d,
  BlockDep = 0x12f,
  Dma0SrcRegion = 0x130,
  Dma0DstRegion = 0x131,
  Dma0Size0 = 0x132,
  Dma0Size1 = 0x133,
  Ifm2Broadcast = 0x180,
  Ifm2Scalar = 0x181,
  Ifm2Precision = 0x185,
  Ifm2ZeroPoint = 0x189,
  Ifm2Width0M1 = 0x18a,
  Ifm2Height0M1 = 0x18b,
  Ifm2Height1M1 = 0x18c,
  Ifm2IbStart = 0x18d,
  Ifm2Region = 0x18f,
};

/// cmd1: 32-bit register writes (the word after the command is the value).
enum class Cmd1 : uint16_t {
  IfmBase0 = 0x000,
  IfmBase1 = 0x001,
  IfmBase2 = 0x002,
  IfmBase3 = 0x003,
  IfmStrideX = 0x004,
  IfmStrideY = 0x005,
  IfmStrideC = 0x006,
  OfmBase0 = 0x010,
  OfmBase1 = 0x011,
  OfmBase2 = 0x012,
  OfmBase3 = 0x013,
  OfmStrideX = 0x014,
  OfmStrideY = 0x015,
  OfmStrideC = 0x016,
  WeightBase = 0x020,
  WeightLength = 0x021,
  ScaleBase = 0x022,
  ScaleLength = 0x023,
  OfmScale = 0x024,
  OpaScale = 0x025,
  OpbScale = 0x026,
  Dma0Src = 0x030,
  Dma0Dst = 0x031,
  Dma0Len = 0x032,
  Dma0Skip0 = 0x033,
  Dma0Skip1 = 0x034,
  Ifm2Base0 = 0x080,
  Ifm2Base1 = 0x081,
  Ifm2Base2 = 0x082,
  Ifm2Base3 = 0x083,
  Ifm2StrideX = 0x084,
  Ifm2StrideY = 0x085,
  Ifm2StrideC = 0x086,
  Weight1Base = 0x090,
  Weight1Length = 0x091,
  Scale1Base = 0x092,
  Scale1Length = 0x093,
};


/// Name for logs, e.g. "NPU_OP_CONV"; nullptr if the code is not an Ethos-U55/U65 command.
const char* cmd0_name(uint32_t code);
const char* cmd1_name(uint32_t code);

// ---- Register field encodings --------------------------------------------------------------

/// NPU_OP_ELEMENTWISE mode parameter.
enum class ElementwiseMode : uint16_t { Mul = 0, Add = 1, Sub = 2, Min = 3, Max = 4, LRelu = 5,
                                        Abs = 6, Clz = 7, Shr = 8, Shl = 9 };
/// NPU_OP_POOL mode parameter.
enum class PoolingMode : uint16_t { Max = 0, Average = 1, ReduceSum = 2 };
/// OFM_PRECISION bits 14-15 / IFM_PRECISION bits 14-15: rounding.
enum class Rounding : uint8_t { Tfl = 0, Truncate = 1, Natural = 2 };
/// IFM_PRECISION scale_mode (elementwise input scaling).
enum class IfmScaleMode : uint8_t { Scale16Bit = 0, OpaScale32Bit = 1, OpbScale32Bit = 2 };
/// ACTIVATION function (bits 0-11): 0 none/relu (clip only), 3 tanh, 4 sigmoid, 16-23 table n.
constexpr uint32_t kActivationNone = 0;
constexpr uint32_t kActivationTanh = 3;
constexpr uint32_t kActivationSigmoid = 4;
constexpr uint32_t kActivationLutStart = 16;
constexpr uint32_t kActivationLutEnd = 23;
/// PARALLEL_MODE: the two cores of an Ethos-U65-512 split the OFM depth.
constexpr uint32_t kParallelDualCoreDepth = 1;

}  // namespace kiln::vnpu::u55
