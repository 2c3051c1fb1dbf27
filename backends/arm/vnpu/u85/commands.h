// Ethos-U85 command codes and register fields (the register description of the Ethos-U85:
// Vela's U85 interface header and the Linux ethosu driver read the same fields). The word
// format is in ../commands.h. tests/python/arm/vnpu/test_definitions.py checks names and codes
// against the stream disassembly of Vela itself.
#pragma once

#include <cstdint>

#include "backends/arm/vnpu/commands.h"

namespace kiln::vnpu::u85 {

/// cmd0: operations (below 0x100) and 16-bit register writes.
enum class Cmd0 : uint16_t {
  OpStop = 0x000,
  OpIrq = 0x001,
  OpConv = 0x002,
  OpDepthwise = 0x003,
  OpPool = 0x005,
  OpElementwise = 0x006,
  OpResize = 0x007,
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
  IfmBroadcast = 0x108,
  IfmZeroPoint = 0x109,
  IfmWidth0M1 = 0x10a,
  IfmHeight0M1 = 0x10b,
  IfmHeight1M1 = 0x10c,
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
  AccFormat = 0x124,
  Activation = 0x125,
  ActivationMin = 0x126,
  ActivationMax = 0x127,
  WeightRegion = 0x128,
  ScaleRegion = 0x129,
  ResizeXScaleNM1 = 0x12a,
  ResizeYScaleNM1 = 0x12b,
  ResizeXOffset = 0x12c,
  ResizeYOffset = 0x12d,
  WeightFormat = 0x12e,
  Blockdep = 0x12f,
  Dma0SrcRegion = 0x130,
  Dma0DstRegion = 0x131,
  Dma0Size0 = 0x132,
  Dma0Size1 = 0x133,
  Dma0IdxRegion = 0x134,
  Ifm2Broadcast = 0x180,
  Ifm2Precision = 0x185,
  Ifm2ZeroPoint = 0x189,
  Ifm2Width0M1 = 0x18a,
  Ifm2Height0M1 = 0x18b,
  Ifm2Height1M1 = 0x18c,
  Ifm2Region = 0x18f,
};

/// cmd1: 32-bit register writes (payload word; address bits 32-39 in the parameter) and,
/// from 0x100, operations with a payload (NPU_OP_BRANCH).
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
  IfmScale = 0x025,
  Ifm2Scale = 0x026,
  OpScalar = 0x027,
  Dma0Src = 0x030,
  Dma0Dst = 0x031,
  Dma0Len = 0x032,
  Dma0SrcStride0 = 0x033,
  Dma0SrcStride1 = 0x034,
  Dma0DstStride0 = 0x035,
  Dma0DstStride1 = 0x036,
  Dma0Idx = 0x037,
  Dma0IdxMax = 0x038,
  Dma0IdxSkip1 = 0x039,
  Ifm2Base0 = 0x080,
  Ifm2Base1 = 0x081,
  Ifm2Base2 = 0x082,
  Ifm2Base3 = 0x083,
  Ifm2StrideX = 0x084,
  Ifm2StrideY = 0x085,
  Ifm2StrideC = 0x086,
  Weight1Base = 0x090,
  Weight1Length = 0x091,
  Weight2Base = 0x092,
  Weight2Length = 0x093,
  Weight3Base = 0x094,
  Weight3Length = 0x095,
  ResizeXStep = 0x096,
  ResizeYStep = 0x097,
  OpBranch = 0x100,
};

/// Name for logs, e.g. "NPU_OP_RESIZE"; nullptr if the code is not an Ethos-U85 command.
const char* cmd0_name(uint32_t code);
const char* cmd1_name(uint32_t code);

// ---- Register field encodings (values of the fields the decoder reads) ---------------------

/// NPU_OP_ELEMENTWISE mode parameter (bits 16-21).
enum class ElementwiseMode : uint16_t { Mul = 0, Add = 1, Sub = 2, Min = 3, Max = 4, LRelu = 5,
                                        Abs = 6, Clz = 7, Shr = 8, Shl = 9, Lsr = 10, Div = 11,
                                        CmpEq = 16, CmpNe = 17, CmpGe = 18, CmpGt = 19,
                                        And = 33, Or = 34, Xor = 35, Not = 36, AndNot = 42 };
/// NPU_OP_POOL mode parameter (bits 16-18).
enum class PoolingMode : uint16_t { Max = 0, Average = 1, ReduceSum = 2, Sum = 3, None = 4,
                                    Min = 5, ArgmaxX = 6, ArgmaxY = 7 };
/// NPU_OP_RESIZE mode parameter (bits 16-17).
enum class ResizeMode : uint16_t { Bilinear = 0, Replicate = 1, Nearest = 2 };
/// ACTIVATION function (bits 0-4 of the parameter).
enum class ActivationFunction : uint8_t { LutNone = 0, LutU8U8 = 1, LutS8S8 = 4, LutS8S16 = 5,
                                          LutS8S32 = 7, LutS16S16 = 8, LutS16S32 = 9,
                                          LutTanh = 10, LutSigmoid = 11 };
/// IFM/IFM2/OFM precision field: element size.
enum class Precision : uint8_t { B8 = 0, B16 = 1, B32 = 2, B64 = 3 };
/// IFM/IFM2/OFM storage field.
enum class Storage : uint8_t { Tile2x2 = 0, Tile3x1 = 1, Chained = 2, None = 3 };
/// OFM transpose field: the order in which the OFM's H, W, C land in memory.
enum class Transpose : uint8_t { Hwc = 0, Whc = 1, Hcw = 2, Wch = 3, Chw = 6, Cwh = 7 };
/// OFM reverse field: the axis written in reverse order.
enum class Reverse : uint8_t { None = 0, H = 1, W = 2, C = 3 };
/// ACC_FORMAT fields.
enum class AccInput : uint8_t { Reset = 0, Keep = 1, Ifm2 = 2 };
enum class Microblock : uint8_t { U1x1 = 0, U1x2 = 1, U1x4 = 2, U2x2 = 3, U2x4 = 4, U4x4 = 5 };
/// IFM/IFM2 BROADCAST field bits.
constexpr uint32_t kBroadcastH = 1, kBroadcastW = 2, kBroadcastC = 4, kBroadcastScalar = 8;
/// DMA region fields (DMA0_SRC_REGION / DMA0_DST_REGION parameters).
constexpr uint32_t kDmaInternal = 1u << 8;        // region_mode: the NPU's internal memory
constexpr uint32_t kDmaStrideModeShift = 9;        // source only: 0 1D, 1 2D, 2 3D
constexpr uint32_t kDmaIndexed = 1u << 11;         // idx_mode
/// NPU_OP_BRANCH condition.
enum class BranchCondition : uint8_t { Always = 0, RfTrue = 1 };

/// Bytes of the LUT memory (eight 256-byte slots).
constexpr uint32_t kLutMemoryBytes = 2048;
/// Chaining buffer slots an operation group can use.
constexpr uint32_t kChainBuffers = 6;

}  // namespace kiln::vnpu::u85
