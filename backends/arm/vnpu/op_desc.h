// One NPU operation as the shared operation code sees it, independent of the architecture.
//
// Each architecture's decoder (u55/decode.cpp, u85/decode.cpp) reads its own register layout
// and fills an OpDesc; the operations in ops/ consume only this. Where the architectures
// compute differently (input scaling of elementwise ops, average pooling without padding,
// rounding of shifts, weight stream order), the decoder states the difference as data here
// instead of the ops testing which NPU they run on.
#pragma once

#include <cstddef>
#include <cstdint>

#include "backends/arm/vnpu/commands.h"
#include "backends/arm/vnpu/virtual_npu.h"

namespace kiln::vnpu {

/// Element type of a feature map.
enum class ElemType : uint8_t { U8, S8, U16, S16, S32, S64 };

constexpr uint32_t elem_bytes(ElemType t) {
  return t == ElemType::U8 || t == ElemType::S8 ? 1u
         : t == ElemType::U16 || t == ElemType::S16 ? 2u
         : t == ElemType::S32 ? 4u : 8u;
}
constexpr bool elem_signed(ElemType t) { return t != ElemType::U8 && t != ElemType::U16; }
int64_t elem_min(ElemType t);
int64_t elem_max(ElemType t);

/// Where a feature map lives.
enum class FmStorage : uint8_t {
  /// In a region, at base addresses with strides.
  Memory,
  /// In a chaining buffer inside the NPU (Ethos-U85): written by one operation of a chain,
  /// read by the next, never in memory. `region` is the buffer's slot.
  Chained,
  /// A single value (FmDesc::scalar) instead of a tensor.
  Scalar,
  /// Not written: the operation keeps its accumulators for the next one (Ethos-U85).
  None,
};

/// Broadcast bits of an input: an axis with its bit set is read at index 0 throughout.
constexpr uint8_t kBroadcastAxisH = 1, kBroadcastAxisW = 2, kBroadcastAxisC = 4;

/// A feature map as the registers describe it (see feature_map.h for the address rules).
struct FmDesc {
  FmStorage storage = FmStorage::Memory;
  /// Region index, or the chaining-buffer slot.
  uint8_t region = 0;
  ElemType type = ElemType::S8;
  DataFormat format = DataFormat::Nhwc;
  /// Tiles: base0 top-left, base1 top-right, base2 bottom-left, base3 bottom-right.
  uint64_t base[4] = {};
  uint32_t width0 = 1, height0 = 1, height1 = 1;
  uint64_t stride_x = 0, stride_y = 0, stride_c = 0;
  int32_t zero_point = 0;
  /// kBroadcastAxis* bits (inputs of elementwise operations).
  uint8_t broadcast = 0;
  /// The value of a Scalar input (before its zero point is subtracted).
  int32_t scalar = 0;
};

/// One scaling step: round(value * multiplier / 2^shift) in `round`. `double_round` moves
/// the double-rounding step of DoubleSymmetric/DoubleAsymmetric down by that many bits
/// (Ethos-U85 dbl_rnd; 0 is TOSA's rule).
struct Scaling {
  uint32_t multiplier = 1;
  uint32_t shift = 0;
  RoundMode round = RoundMode::DoubleSymmetric;
  uint32_t double_round = 0;
};

/// Kernel geometry: undilated size, stride, dilation, padding.
struct KernelGeometry {
  uint32_t height = 1, width = 1;  // undilated taps
  uint32_t stride_y = 1, stride_x = 1;
  uint32_t dilation_y = 1, dilation_x = 1;
  int32_t pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
};

/// Operations of NPU_OP_ELEMENTWISE (the values are the Ethos-U85 modes, a superset of the
/// Ethos-U55's 0-9).
enum class ElementwiseOp : uint16_t { Mul = 0, Add = 1, Sub = 2, Min = 3, Max = 4, LRelu = 5,
                                      Abs = 6, Clz = 7, Shr = 8, Shl = 9, Lsr = 10, Div = 11,
                                      CmpEq = 16, CmpNe = 17, CmpGe = 18, CmpGt = 19, And = 33,
                                      Or = 34, Xor = 35, Not = 36, AndNot = 42 };
/// Operations of NPU_OP_POOL (Ethos-U85 values; the Ethos-U55 has the first three).
enum class PoolOp : uint16_t { Max = 0, Average = 1, ReduceSum = 2, Sum = 3, None = 4, Min = 5,
                               ArgmaxX = 6, ArgmaxY = 7 };
/// NPU_OP_RESIZE modes.
enum class ResizeOp : uint16_t { Bilinear = 0, Replicate = 1, Nearest = 2 };

/// Order in which the OFM's axes land in memory (Ethos-U85 transpose on output).
enum class OfmTranspose : uint8_t { Hwc, Whc, Hcw, Wch, Chw, Cwh };
/// Axis the OFM is written in reverse along (Ethos-U85).
enum class OfmReverse : uint8_t { None, H, W, C };

/// Table lookups of the output stage.
enum class LutKind : uint8_t {
  None,
  /// 256 entries, index = value (int8 or uint8), entry of the OFM's own type.
  Int8,
  /// 256 int16 entries indexed by an int8 value (512 bytes).
  Int8ToInt16,
  /// 256 int32 entries indexed by an int8 value (1 KiB).
  Int8ToInt32,
  /// 512 (base, slope) int16 pairs indexed by the top 9 bits of an int16 value, linear
  /// interpolation on the low 7 (2 KiB): int16 TOSA TABLE, tanh and sigmoid. Ethos-U85:
  /// looks the accumulator up before the scaling.
  Int16Interpolated,
  /// The same table with a 16-bit result (Ethos-U55/U65, Ethos-U85 LUT_S16_S16): looks the
  /// scaled, zero-point-adjusted 16-bit value up and rounds the interpolation back to 16 bits
  /// (half up).
  Int16InterpolatedAfterScaling,
};

/// The output stage after the accumulators: scaling, zero point, table, clipping.
struct OutputDesc {
  /// Per-channel scale/bias records (ScaleStreams) instead of `scale`.
  bool per_channel = false;
  /// Global scaling (and, per channel, the rounding mode and double-round of every channel).
  Scaling scale;
  LutKind lut = LutKind::None;
  /// Byte offset of the table in the internal memory.
  uint32_t lut_offset = 0;
  /// Clip range in the OFM's quantized domain. A value outside the OFM type that the clip
  /// range lets through is written modulo the type (Ethos-U85 with clipping off); decoders
  /// of architectures that always saturate include the type's range here.
  int64_t clip_min = INT64_MIN;
  int64_t clip_max = INT64_MAX;
};

/// Stream order of the encoded weights.
enum class WeightTraversal : uint8_t { DepthFirst, PartKernelFirst, Depthwise };
/// Which architecture's stream order (and record format) the weights follow.
enum class WeightFamily : uint8_t { U55, U85 };
/// Scale/bias record formats (10 bytes each).
enum class ScaleRecord : uint8_t {
  /// Ethos-U55/U65: bias 40 bits, scale 32, shift 6.
  Bias40Scale32,
  /// Ethos-U85 with 32-bit accumulators: bias 32 bits, scale 31, shift 6.
  Bias32Scale31,
  /// Ethos-U85 with 48-bit accumulators: bias 48 bits, scale 15, shift 6.
  Bias48Scale15,
};

/// The encoded weight and scale streams of a convolution and how to read them.
struct WeightDesc {
  WeightFamily family = WeightFamily::U55;
  WeightTraversal traversal = WeightTraversal::DepthFirst;
  /// Ethos-U85 "fast" weight format (FWD) instead of the compressed (SWD) one.
  bool fast = false;
  /// Ethos-U85 2:4 sparse weight order.
  bool sparse = false;
  uint32_t ofm_block_depth = 8;
  uint32_t ifm_block_depth = 32;
  uint32_t ofm_ublock_depth = 8;
  uint32_t ifm_ublock_depth = 8;
  /// Cores that read their own weight stream (and on Ethos-U65-512 their own scales).
  uint32_t cores = 1;
  /// Ethos-U85: configuration MACs (the depthwise padding depends on it).
  uint32_t macs = 128;
  uint8_t weight_region = 0;
  uint64_t weight_base[4] = {};
  uint64_t weight_length[4] = {};
  uint8_t scale_region = 0;
  ScaleRecord record = ScaleRecord::Bias40Scale32;
  /// One scale stream, or one per core (Ethos-U65-512: core n holds channels n, n+2, ...).
  uint32_t scale_streams = 1;
  uint64_t scale_base[2] = {};
  uint64_t scale_length[2] = {};
};

/// Accumulator source and destination (Ethos-U85; Ethos-U55 always Reset + output).
enum class AccSource : uint8_t { Reset, Keep, Ifm2 };

/// NPU_OP_RESIZE parameters: input position of output x is (x * d + offset) / n, with
/// d = one_step_int * n + one_step_mod.
struct ResizeDesc {
  uint32_t scale_n_x = 1, scale_n_y = 1;
  uint32_t scale_d_x = 1, scale_d_y = 1;
  int32_t offset_x = 0, offset_y = 0;
  /// IFM extent the registers allow the operation to read.
  uint32_t ifm_height = 1, ifm_width = 1;
};

/// One side of a DMA: region or internal memory, address and strides.
struct DmaSide {
  bool internal = false;
  uint8_t region = 0;
  uint64_t address = 0;
  uint64_t stride0 = 0, stride1 = 0;
  bool indexed = false;
};

/// NPU_OP_DMA_START: `length` bytes per row, size0 rows per plane (2D), size1 planes (3D).
/// An indexed side takes its row numbers from the index table (uint16 per row).
struct DmaDesc {
  DmaSide src, dst;
  uint64_t length = 0;
  uint32_t dims = 1;
  uint32_t size0 = 1, size1 = 1;
  uint8_t index_region = 0;
  uint64_t index_address = 0;
  uint32_t index_max = 0;
  uint64_t index_skip1 = 0;
};

/// Everything an operation needs, decoded from the registers.
struct OpDesc {
  OpKind kind = OpKind::Conv;
  /// ElementwiseOp / PoolOp / ResizeOp value.
  uint16_t mode = 0;
  FmDesc ifm, ifm2, ofm;
  uint32_t ifm_depth = 1;
  uint32_t ofm_height = 1, ofm_width = 1, ofm_depth = 1;
  UpscaleMode upscale = UpscaleMode::None;
  OfmTranspose transpose = OfmTranspose::Hwc;
  OfmReverse reverse = OfmReverse::None;
  KernelGeometry kernel;
  WeightDesc weights;
  /// Convolution whose weights are the IFM2 tensor (Ethos-U85 matmul), not a weight stream.
  bool weights_from_ifm2 = false;
  OutputDesc output;
  /// Elementwise input scaling: applied to IFM/IFM2 (after the zero point) when true.
  /// LRELU always scales non-negative inputs by ifm_scale and negative ones by ifm2_scale
  /// (alpha); the Ethos-U55 decoder puts alpha there from OFM_SCALE.
  bool input_scaling = false;
  Scaling ifm_scale, ifm2_scale;
  /// Ethos-U55 IFM2_BROADCAST "reversed operand order": IFM2 is operand A.
  bool swap_operands = false;
  /// Rounding of the elementwise SHR result (Ethos-U85: the OFM rounding mode).
  RoundMode shift_round = RoundMode::TruncateToLower;
  /// Average pooling without padding divides by the kernel area itself (Ethos-U85); if
  /// false, OFM_SCALE carries 1/area and the NPU sums (Ethos-U55).
  bool average_divides_unpadded = false;
  AccSource acc_source = AccSource::Reset;
  /// False: the accumulators stay in the NPU for the next operation (nothing is written).
  bool acc_output = true;
  ResizeDesc resize;
  DmaDesc dma;
};

}  // namespace kiln::vnpu
