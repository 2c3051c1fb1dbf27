// Ethos-U85 registers → OpDesc, and the COP1 config word of the Ethos-U85.
//
// What differs from the Ethos-U55 and is stated as data in the OpDesc:
// - 40-bit addresses (cmd1 parameter bits 0-7 extend base/stride/length registers);
// - precision registers carry a storage field: a tile layout in memory, a chaining buffer
//   (the region field is then the buffer slot), or none (a scalar input / an OFM that is
//   not written because the accumulators stay for the next operation);
// - rounding lives in OFM_SCALE/IFM_SCALE/IFM2_SCALE (with a double-round position), and
//   every elementwise input has its own scale;
// - IFM and IFM2 can each be broadcast or a scalar (OP_SCALAR);
// - transpose and reverse on output; accumulator source (reset, kept, loaded from IFM2);
// - per-core weight streams in the compressed or the fast format, scale records for 32- or
//   48-bit accumulators, IFM block depth and microblock depth implied by the configuration;
// - LUTs of 256 B to 2 KiB in a 2 KiB LUT memory; resize; 2D/3D and indexed DMA.
#include "backends/arm/vnpu/arch.h"
#include "backends/arm/vnpu/decode_common.h"
#include "backends/arm/vnpu/u85/commands.h"
#include "runtime/platform/log.h"

namespace kiln::vnpu::u85 {
namespace {

using Regs = Registers<Cmd0, Cmd1>;

struct FmRegisters {
  Cmd0 region, precision, width0, height0, height1, zero_point;
  Cmd1 base0, stride_x, stride_y, stride_c;
  const char* name;
};

constexpr FmRegisters kIfm = {Cmd0::IfmRegion, Cmd0::IfmPrecision, Cmd0::IfmWidth0M1,
                              Cmd0::IfmHeight0M1, Cmd0::IfmHeight1M1, Cmd0::IfmZeroPoint,
                              Cmd1::IfmBase0, Cmd1::IfmStrideX, Cmd1::IfmStrideY,
                              Cmd1::IfmStrideC, "IFM"};
constexpr FmRegisters kIfm2 = {Cmd0::Ifm2Region, Cmd0::Ifm2Precision, Cmd0::Ifm2Width0M1,
                               Cmd0::Ifm2Height0M1, Cmd0::Ifm2Height1M1, Cmd0::Ifm2ZeroPoint,
                               Cmd1::Ifm2Base0, Cmd1::Ifm2StrideX, Cmd1::Ifm2StrideY,
                               Cmd1::Ifm2StrideC, "IFM2"};
constexpr FmRegisters kOfm = {Cmd0::OfmRegion, Cmd0::OfmPrecision, Cmd0::OfmWidth0M1,
                              Cmd0::OfmHeight0M1, Cmd0::OfmHeight1M1, Cmd0::OfmZeroPoint,
                              Cmd1::OfmBase0, Cmd1::OfmStrideX, Cmd1::OfmStrideY,
                              Cmd1::OfmStrideC, "OFM"};

ElemType elem_type(uint32_t precision_field, bool is_signed) {
  switch (static_cast<Precision>(precision_field & 3u)) {
    case Precision::B8: return is_signed ? ElemType::S8 : ElemType::U8;
    case Precision::B16: return is_signed ? ElemType::S16 : ElemType::U16;
    case Precision::B32: return ElemType::S32;
    default: return ElemType::S64;
  }
}

// IFM/IFM2 precision: bit 0 signed, bits 2-3 size, 6-7 format, 14-15 storage.
// OFM precision: bit 0 signed, bits 1-2 size, 6-7 format, 8 scale mode, 9-10 reverse,
// 11-13 transpose, 14-15 storage. The storage decides what the other registers mean.
Error decode_fm(const Regs& r, const FmRegisters& f, bool is_ofm, FmDesc* fm) {
  const uint32_t precision = r.get(f.precision);
  const bool is_signed = (precision & 1u) != 0;
  fm->type = elem_type(is_ofm ? (precision >> 1) & 3u : (precision >> 2) & 3u, is_signed);
  if (!is_signed && elem_bytes(fm->type) >= 4) {
    KILN_LOG(Error, "%s precision 0x%x: unsigned %u-bit feature maps do not exist", f.name,
             precision, 8 * elem_bytes(fm->type));
    return Error::NpuInvalidRegister;
  }
  const uint32_t format = (precision >> 6) & 3u;
  if (format > 1) {
    KILN_LOG(Error, "%s format %u is neither NHWC nor NHCWB16", f.name, format);
    return Error::NpuInvalidRegister;
  }
  fm->format = static_cast<DataFormat>(format);
  fm->region = static_cast<uint8_t>(r.get(f.region) & 7u);
  fm->zero_point = zero_point_of(fm->type, r.get(f.zero_point));
  switch (static_cast<Storage>((precision >> 14) & 3u)) {
    case Storage::Tile2x2: fm->storage = FmStorage::Memory; break;
    case Storage::Chained: fm->storage = FmStorage::Chained; break;
    case Storage::None: fm->storage = FmStorage::None; break;
    default:
      KILN_LOG(Error, "%s storage TILE3X1 is not modelled (Vela emits 2x2 tiles)", f.name);
      return Error::NpuInvalidRegister;
  }
  if (fm->storage == FmStorage::Chained && fm->region >= kChainBuffers) {
    KILN_LOG(Error, "%s chaining buffer %u does not exist (%u buffers)", f.name, fm->region, kChainBuffers);
    return Error::NpuInvalidRegister;
  }
  for (uint32_t t = 0; t < 4; ++t) fm->base[t] = r.address(static_cast<Cmd1>(static_cast<uint32_t>(f.base0) + t));
  fm->width0 = r.get(f.width0) + 1u;
  fm->height0 = r.get(f.height0) + 1u;
  fm->height1 = r.get(f.height1) + 1u;
  fm->stride_x = r.address(f.stride_x);
  fm->stride_y = r.address(f.stride_y);
  fm->stride_c = r.address(f.stride_c);
  return Error::Ok;
}

// Broadcast register of one input: bits 0-2 H/W/C, bit 3 scalar (value in OP_SCALAR).
Error decode_input(const Regs& r, const FmRegisters& f, Cmd0 broadcast, FmDesc* fm) {
  Error err = decode_fm(r, f, /*is_ofm=*/false, fm);
  if (err != Error::Ok) return err;
  const uint32_t bc = r.get(broadcast);
  if ((bc & kBroadcastScalar) != 0) {
    fm->storage = FmStorage::Scalar;
    fm->scalar = static_cast<int32_t>(r.get(Cmd1::OpScalar));
    // A scalar of a 32-bit operand has no zero point either; 8/16-bit ones do.
    return Error::Ok;
  }
  fm->broadcast = static_cast<uint8_t>(bc & 7u);
  if (fm->storage == FmStorage::None) {
    KILN_LOG(Error, "%s has no storage but is not a scalar", f.name);
    return Error::NpuInvalidRegister;
  }
  return Error::Ok;
}

RoundMode ofm_rounding(uint32_t field) { return static_cast<RoundMode>(field); }

// OFM_SCALE / IFM_SCALE / IFM2_SCALE: parameter bits 0-5 shift, 6-10 double-round position,
// 13-15 (IFM: 13) rounding; payload the 31-bit multiplier.
Error decode_scaling(const Regs& r, Cmd1 reg, bool ofm, const char* what, Scaling* s) {
  const uint32_t p = r.param(reg);
  s->multiplier = r.get(reg) & 0x7fffffffu;
  s->shift = p & 0x3fu;
  s->double_round = (p >> 6) & 0x1fu;
  const uint32_t round = ofm ? (p >> 13) & 7u : (p >> 13) & 1u;
  if (round > 5) {
    KILN_LOG(Error, "%s rounding mode %u is reserved", what, round);
    return Error::NpuInvalidRegister;
  }
  s->round = ofm_rounding(round);
  return check_shift(*s, what);
}

// OFM_BLK_DEPTH / microblock depth of the configurations (Vela's ArchEthosU85 table): the
// MICROBLOCK field names height x width, the configuration implies the depth.
Error microblock_depth(uint32_t macs, uint32_t field, uint32_t* depth) {
  struct Entry {
    uint32_t macs;
    Microblock block;
    uint32_t depth;
  };
  static constexpr Entry kTable[] = {
      {128, Microblock::U1x2, 8},    {128, Microblock::U1x1, 16},   {256, Microblock::U1x2, 16},
      {256, Microblock::U1x4, 8},    {256, Microblock::U2x2, 8},    {512, Microblock::U2x2, 16},
      {512, Microblock::U1x4, 16},   {1024, Microblock::U2x2, 32},  {1024, Microblock::U1x4, 32},
      {1024, Microblock::U2x4, 16},  {2048, Microblock::U2x2, 64},  {2048, Microblock::U1x4, 64},
      {2048, Microblock::U4x4, 16},
  };
  for (const Entry& e : kTable) {
    if (e.macs == macs && static_cast<uint32_t>(e.block) == field) {
      *depth = e.depth;
      return Error::Ok;
    }
  }
  KILN_LOG(Error, "microblock %u does not exist on the Ethos-U85-%u", field, macs);
  return Error::NpuInvalidRegister;
}

Error decode_kernel(const Regs& r, KernelGeometry* k, bool* part_kernel_first) {
  const uint32_t p = r.get(Cmd0::KernelStride);
  Error err = decode_kernel_stride(p, k, part_kernel_first);
  if (err != Error::Ok) return err;
  // Bit 5: decomposition into 8x8 (0) or 4x4 (1) sub-kernels.
  if (((p >> 5) & 1u) != 0) {
    KILN_LOG(Error, "4x4 kernel decomposition is not modelled (Vela emits 8x8)");
    return Error::NpuInvalidRegister;
  }
  return finish_kernel(r.get(Cmd0::KernelHeightM1), r.get(Cmd0::KernelWidthM1), r.get(Cmd0::IfmPadTop),
                       r.get(Cmd0::IfmPadLeft), r.get(Cmd0::IfmPadBottom), r.get(Cmd0::IfmPadRight), k);
}

// ACTIVATION: bits 0-4 function, 5-7 table, 12 clip range (0: ACTIVATION_MIN/MAX, which are
// 16-bit values of the OFM's signedness, within the OFM type; 1: none - the value is written
// modulo the OFM type, which is how Vela casts int32 to int8/int16).
Error decode_activation(const Regs& r, const FmDesc& ofm, uint32_t lut_bytes, OutputDesc* out) {
  const uint32_t act = r.get(Cmd0::Activation);
  const uint32_t function = act & 0x1fu;
  const uint32_t table = (act >> 5) & 7u;
  out->clip_min = INT64_MIN;
  out->clip_max = INT64_MAX;
  if (((act >> 12) & 1u) == 0) {
    out->clip_min = elem_min(ofm.type);
    out->clip_max = elem_max(ofm.type);
    const bool s = elem_signed(ofm.type) && ofm.type != ElemType::U16;
    const int64_t lo = s ? r.get_signed(Cmd0::ActivationMin) : r.get(Cmd0::ActivationMin);
    const int64_t hi = s ? r.get_signed(Cmd0::ActivationMax) : r.get(Cmd0::ActivationMax);
    if (lo > out->clip_min) out->clip_min = lo;
    if (hi < out->clip_max) out->clip_max = hi;
  }
  uint32_t size = 0;
  switch (static_cast<ActivationFunction>(function)) {
    case ActivationFunction::LutNone: out->lut = LutKind::None; return Error::Ok;
    case ActivationFunction::LutU8U8:
    case ActivationFunction::LutS8S8: out->lut = LutKind::Int8; size = 256; break;
    case ActivationFunction::LutS8S16: out->lut = LutKind::Int8ToInt16; size = 512; break;
    case ActivationFunction::LutS8S32: out->lut = LutKind::Int8ToInt32; size = 1024; break;
    case ActivationFunction::LutS16S16: out->lut = LutKind::Int16InterpolatedAfterScaling; size = 2048; break;
    case ActivationFunction::LutS16S32:
    case ActivationFunction::LutTanh:
    case ActivationFunction::LutSigmoid: out->lut = LutKind::Int16Interpolated; size = 2048; break;
    default:
      KILN_LOG(Error, "activation function %u is reserved", function);
      return Error::NpuInvalidRegister;
  }
  // The table index counts tables of this size (0-7 for 256 B, 0-3 for 512 B, ...).
  out->lut_offset = table * size;
  if (out->lut_offset + size > lut_bytes) {
    KILN_LOG(Error, "table %u of %u bytes lies outside the %u-byte LUT memory", table, size, lut_bytes);
    return Error::NpuInvalidRegister;
  }
  return Error::Ok;
}

Error decode_output(const Regs& r, const DecodeInput& in, OpDesc* op) {
  Error err = decode_fm(r, kOfm, /*is_ofm=*/true, &op->ofm);
  if (err != Error::Ok) return err;
  const uint32_t precision = r.get(Cmd0::OfmPrecision);
  op->output.per_channel = ((precision >> 8) & 1u) == 0;
  op->reverse = static_cast<OfmReverse>((precision >> 9) & 3u);
  const uint32_t transpose = (precision >> 11) & 7u;
  switch (static_cast<Transpose>(transpose)) {
    case Transpose::Hwc: op->transpose = OfmTranspose::Hwc; break;
    case Transpose::Whc: op->transpose = OfmTranspose::Whc; break;
    case Transpose::Hcw: op->transpose = OfmTranspose::Hcw; break;
    case Transpose::Wch: op->transpose = OfmTranspose::Wch; break;
    case Transpose::Chw: op->transpose = OfmTranspose::Chw; break;
    case Transpose::Cwh: op->transpose = OfmTranspose::Cwh; break;
    default:
      KILN_LOG(Error, "OFM transpose %u is reserved", transpose);
      return Error::NpuInvalidRegister;
  }
  if (op->ofm.storage == FmStorage::Chained &&
      (op->transpose != OfmTranspose::Hwc || op->reverse != OfmReverse::None)) {
    KILN_LOG(Error, "a chained OFM cannot be transposed or reversed");
    return Error::NpuInvalidRegister;
  }
  op->ofm_height = r.get(Cmd0::OfmHeightM1) + 1u;
  op->ofm_width = r.get(Cmd0::OfmWidthM1) + 1u;
  op->ofm_depth = r.get(Cmd0::OfmDepthM1) + 1u;
  err = decode_scaling(r, Cmd1::OfmScale, true, "OFM_SCALE", &op->output.scale);
  if (err != Error::Ok) return err;
  op->shift_round = op->output.scale.round;
  const uint32_t acc = r.get(Cmd0::AccFormat);
  const uint32_t source = (acc >> 4) & 3u;
  if (source > 2 || (acc & 3u) > 1) {
    KILN_LOG(Error, "ACC_FORMAT 0x%x: accumulator format/source reserved", acc);
    return Error::NpuInvalidRegister;
  }
  op->acc_source = static_cast<AccSource>(source);
  op->acc_output = ((acc >> 6) & 1u) == 0;
  if (!op->acc_output) op->ofm.storage = FmStorage::None;
  if (op->ofm.storage == FmStorage::None && op->acc_output) {
    KILN_LOG(Error, "OFM storage is none but the accumulator output is enabled");
    return Error::NpuInvalidRegister;
  }
  // Any operation may scale per channel (a RESCALE runs as a pooling operation): one scale
  // stream, records for 32- or 48-bit accumulators.
  op->weights.record = (acc & 3u) == 1 ? ScaleRecord::Bias48Scale15 : ScaleRecord::Bias32Scale31;
  op->weights.scale_region = static_cast<uint8_t>(r.get(Cmd0::ScaleRegion) & 7u);
  op->weights.scale_streams = 1;
  op->weights.scale_base[0] = r.address(Cmd1::ScaleBase);
  op->weights.scale_length[0] = r.get(Cmd1::ScaleLength) & 0xfffffu;
  err = microblock_depth(static_cast<uint32_t>(in.config.macs), (acc >> 8) & 7u, &op->weights.ofm_ublock_depth);
  if (err != Error::Ok) return err;
  return decode_activation(r, op->ofm, in.internal_bytes, &op->output);
}

// The IFM block depth is implied, as it is for the hardware: 16 part-kernel-first, 32 for
// 32-bit IFMs and on the 128/256-MAC configurations with 16-deep microblocks, 128 for 8-bit
// sparse weights, else 64.
uint32_t conv_ifm_block_depth(const OpDesc& op, const Config& config, bool part_kernel_first) {
  if (part_kernel_first) return 16;
  const bool small = config.macs == 128 || config.macs == 256;
  if (elem_bytes(op.ifm.type) == 4 || (small && op.weights.ofm_ublock_depth == 16 && !op.weights.sparse)) return 32;
  if (op.weights.sparse && elem_bytes(op.ifm.type) == 1) return 128;
  return 64;
}

Error decode_conv(const Regs& r, const DecodeInput& in, bool depthwise, OpDesc* op) {
  bool part_kernel_first = false;
  Error err = decode_kernel(r, &op->kernel, &part_kernel_first);
  if (err != Error::Ok) return err;
  err = decode_fm(r, kIfm, false, &op->ifm);
  if (err != Error::Ok) return err;
  op->ifm_depth = depthwise ? op->ofm_depth : r.get(Cmd0::IfmDepthM1) + 1u;
  err = decode_upscale(r.get(Cmd0::IfmUpscale), &op->upscale);
  if (err != Error::Ok) return err;
  if (!depthwise && (in.param & 1u) != 0) {
    // Dynamic weights (matmul): the weights are the IFM2 tensor, the scaling global.
    op->weights_from_ifm2 = true;
    err = decode_fm(r, kIfm2, false, &op->ifm2);
    if (err != Error::Ok) return err;
    op->output.per_channel = false;
  }
  if (op->acc_source == AccSource::Ifm2) {
    err = decode_fm(r, kIfm2, false, &op->ifm2);
    if (err != Error::Ok) return err;
  }
  WeightDesc& w = op->weights;
  w.family = WeightFamily::U85;
  w.traversal = depthwise ? WeightTraversal::Depthwise
                          : (part_kernel_first ? WeightTraversal::PartKernelFirst : WeightTraversal::DepthFirst);
  const uint32_t format = r.get(Cmd0::WeightFormat);
  w.fast = (format & 1u) != 0;
  w.sparse = ((format >> 4) & 1u) != 0;
  if (depthwise && (w.fast || w.sparse)) {
    KILN_LOG(Error, "depthwise weights in the fast or sparse format do not exist");
    return Error::NpuInvalidRegister;
  }
  w.ofm_block_depth = r.get(Cmd0::OfmBlkDepthM1) + 1u;
  w.ifm_block_depth = conv_ifm_block_depth(*op, in.config, part_kernel_first);
  w.cores = static_cast<uint32_t>(in.config.cores);
  w.macs = static_cast<uint32_t>(in.config.macs);
  w.weight_region = static_cast<uint8_t>(r.get(Cmd0::WeightRegion) & 7u);
  static constexpr Cmd1 kBase[4] = {Cmd1::WeightBase, Cmd1::Weight1Base, Cmd1::Weight2Base, Cmd1::Weight3Base};
  static constexpr Cmd1 kLength[4] = {Cmd1::WeightLength, Cmd1::Weight1Length, Cmd1::Weight2Length,
                                      Cmd1::Weight3Length};
  // The fast format interleaves the cores' blocks in one stream.
  const uint32_t streams = w.fast ? 1u : w.cores;
  for (uint32_t c = 0; c < streams && c < 4; ++c) {
    w.weight_base[c] = r.address(kBase[c]);
    w.weight_length[c] = r.get(kLength[c]);
  }
  return Error::Ok;
}

Error decode_pool(const Regs& r, uint16_t param, OpDesc* op) {
  if (param > static_cast<uint16_t>(PoolingMode::ArgmaxY)) {
    KILN_LOG(Error, "pooling mode %u is reserved", param);
    return Error::NpuInvalidRegister;
  }
  op->mode = param;  // PoolOp has the Ethos-U85 values.
  bool part_kernel_first = false;
  Error err = decode_kernel(r, &op->kernel, &part_kernel_first);
  if (err != Error::Ok) return err;
  err = decode_fm(r, kIfm, false, &op->ifm);
  if (err != Error::Ok) return err;
  op->ifm_depth = param == static_cast<uint16_t>(PoolingMode::ReduceSum) ? r.get(Cmd0::IfmDepthM1) + 1u
                                                                         : op->ofm_depth;
  if (op->acc_source == AccSource::Ifm2) {
    err = decode_fm(r, kIfm2, false, &op->ifm2);
    if (err != Error::Ok) return err;
  }
  op->average_divides_unpadded = true;
  return decode_upscale(r.get(Cmd0::IfmUpscale), &op->upscale);
}

bool is_unary(ElementwiseMode m) {
  return m == ElementwiseMode::Abs || m == ElementwiseMode::Clz || m == ElementwiseMode::LRelu ||
         m == ElementwiseMode::Not;
}

bool is_known_elementwise(uint16_t mode) {
  return mode <= static_cast<uint16_t>(ElementwiseMode::Div) ||
         (mode >= static_cast<uint16_t>(ElementwiseMode::CmpEq) && mode <= static_cast<uint16_t>(ElementwiseMode::CmpGt)) ||
         (mode >= static_cast<uint16_t>(ElementwiseMode::And) && mode <= static_cast<uint16_t>(ElementwiseMode::Not)) ||
         mode == static_cast<uint16_t>(ElementwiseMode::AndNot);
}

Error decode_elementwise(const Regs& r, uint16_t param, OpDesc* op) {
  if (!is_known_elementwise(param)) {
    KILN_LOG(Error, "elementwise mode %u is reserved", param);
    return Error::NpuInvalidRegister;
  }
  op->mode = param;  // ElementwiseOp has the Ethos-U85 values.
  const ElementwiseMode mode = static_cast<ElementwiseMode>(param);
  Error err = decode_input(r, kIfm, Cmd0::IfmBroadcast, &op->ifm);
  if (err != Error::Ok) return err;
  err = decode_scaling(r, Cmd1::IfmScale, false, "IFM_SCALE", &op->ifm_scale);
  if (err != Error::Ok) return err;
  op->input_scaling = true;
  if (!is_unary(mode) || mode == ElementwiseMode::LRelu) {
    // LRELU's IFM2_SCALE is alpha's scale (there is no IFM2).
    err = decode_scaling(r, Cmd1::Ifm2Scale, false, "IFM2_SCALE", &op->ifm2_scale);
    if (err != Error::Ok) return err;
  }
  if (!is_unary(mode)) {
    err = decode_input(r, kIfm2, Cmd0::Ifm2Broadcast, &op->ifm2);
    if (err != Error::Ok) return err;
    if (op->ifm.storage == FmStorage::Scalar && op->ifm2.storage == FmStorage::Scalar) {
      KILN_LOG(Error, "both elementwise inputs are scalars");
      return Error::NpuInvalidRegister;
    }
  } else if (op->ifm.storage == FmStorage::Scalar) {
    KILN_LOG(Error, "the input of a unary elementwise operation is a scalar");
    return Error::NpuInvalidRegister;
  }
  return Error::Ok;
}

Error decode_resize(const Regs& r, uint16_t param, OpDesc* op) {
  if (param > static_cast<uint16_t>(ResizeMode::Nearest)) {
    KILN_LOG(Error, "resize mode %u is reserved", param);
    return Error::NpuInvalidRegister;
  }
  op->mode = param;
  Error err = decode_fm(r, kIfm, false, &op->ifm);
  if (err != Error::Ok) return err;
  op->ifm_depth = op->ofm_depth;
  ResizeDesc& z = op->resize;
  z.scale_n_x = (r.get(Cmd0::ResizeXScaleNM1) & 0x7ffu) + 1u;
  z.scale_n_y = (r.get(Cmd0::ResizeYScaleNM1) & 0x7ffu) + 1u;
  // RESIZE_X/Y_STEP: bits 16-19 one_step_int, 20-30 blk_step_int, payload bits 0-10 one_step_mod,
  // 16-26 blk_step_mod. The step between output pixels is d = int * n + mod.
  const uint32_t xp = r.param(Cmd1::ResizeXStep), yp = r.param(Cmd1::ResizeYStep);
  const uint32_t x_mod = r.get(Cmd1::ResizeXStep) & 0x7ffu, y_mod = r.get(Cmd1::ResizeYStep) & 0x7ffu;
  if (x_mod >= z.scale_n_x || y_mod >= z.scale_n_y) {
    KILN_LOG(Error, "resize step remainder %u/%u is not below the scale %u/%u", y_mod, x_mod, z.scale_n_y,
             z.scale_n_x);
    return Error::NpuInvalidRegister;
  }
  z.scale_d_x = (xp & 0xfu) * z.scale_n_x + x_mod;
  z.scale_d_y = (yp & 0xfu) * z.scale_n_y + y_mod;
  // Offsets are 12-bit two's complement.
  z.offset_x = static_cast<int32_t>(static_cast<uint32_t>(r.get(Cmd0::ResizeXOffset)) << 20) >> 20;
  z.offset_y = static_cast<int32_t>(static_cast<uint32_t>(r.get(Cmd0::ResizeYOffset)) << 20) >> 20;
  if (z.offset_x >= static_cast<int32_t>(z.scale_n_x) || z.offset_x < -static_cast<int32_t>(z.scale_n_x) ||
      z.offset_y >= static_cast<int32_t>(z.scale_n_y) || z.offset_y < -static_cast<int32_t>(z.scale_n_y)) {
    KILN_LOG(Error, "resize offset %d/%d is outside (-n, n)", z.offset_y, z.offset_x);
    return Error::NpuInvalidRegister;
  }
  z.ifm_height = r.get(Cmd0::KernelHeightM1) + 1u;
  z.ifm_width = r.get(Cmd0::KernelWidthM1) + 1u;
  return Error::Ok;
}

// DMA0_SRC_REGION: bits 0-2 region, 8 internal, 9-10 stride mode (1D/2D/3D), 11 indexed;
// DMA0_DST_REGION: bits 0-2 region, 8 internal, 11 indexed. The source's stride mode sets
// the shape of both sides.
Error decode_dma(const Regs& r, OpDesc* op) {
  DmaDesc& d = op->dma;
  const uint32_t src = r.get(Cmd0::Dma0SrcRegion), dst = r.get(Cmd0::Dma0DstRegion);
  const uint32_t mode = (src >> kDmaStrideModeShift) & 3u;
  if (mode > 2) {
    KILN_LOG(Error, "DMA stride mode %u is reserved", mode);
    return Error::NpuInvalidRegister;
  }
  d.dims = mode + 1u;
  d.src = DmaSide{(src & kDmaInternal) != 0, static_cast<uint8_t>(src & 7u), r.address(Cmd1::Dma0Src),
                  r.address(Cmd1::Dma0SrcStride0), r.address(Cmd1::Dma0SrcStride1), (src & kDmaIndexed) != 0};
  d.dst = DmaSide{(dst & kDmaInternal) != 0, static_cast<uint8_t>(dst & 7u), r.address(Cmd1::Dma0Dst),
                  r.address(Cmd1::Dma0DstStride0), r.address(Cmd1::Dma0DstStride1), (dst & kDmaIndexed) != 0};
  if (d.src.indexed && d.dst.indexed) {
    KILN_LOG(Error, "DMA with both source and destination indexed");
    return Error::NpuInvalidRegister;
  }
  d.length = r.address(Cmd1::Dma0Len);
  d.size0 = d.dims >= 2 || d.src.indexed || d.dst.indexed ? r.get(Cmd0::Dma0Size0) : 1u;
  d.size1 = d.dims == 3 ? r.get(Cmd0::Dma0Size1) : 1u;
  d.index_region = static_cast<uint8_t>(r.get(Cmd0::Dma0IdxRegion) & 7u);
  d.index_address = r.address(Cmd1::Dma0Idx);
  d.index_max = r.get(Cmd1::Dma0IdxMax) & 0x7fffffffu;
  d.index_skip1 = r.address(Cmd1::Dma0IdxSkip1);
  return Error::Ok;
}

Error decode(const DecodeInput& in, OpDesc* op) {
  const Regs r{in.regs};
  *op = OpDesc();
  op->kind = static_cast<OpKind>(in.code);
  const Cmd0 code = static_cast<Cmd0>(in.code);
  if (code == Cmd0::OpDmaStart) return decode_dma(r, op);
  Error err = decode_output(r, in, op);
  if (err != Error::Ok) return err;
  switch (code) {
    case Cmd0::OpConv: return decode_conv(r, in, false, op);
    case Cmd0::OpDepthwise: return decode_conv(r, in, true, op);
    case Cmd0::OpPool: return decode_pool(r, in.param, op);
    case Cmd0::OpElementwise: return decode_elementwise(r, in.param, op);
    case Cmd0::OpResize: return decode_resize(r, in.param, op);
    default:
      KILN_LOG(Error, "%s is not an operation", cmd0_name(in.code));
      return Error::NpuUnknownCommand;
  }
}

uint32_t log2_floor(uint32_t v) {
  uint32_t n = 0;
  while ((v >> (n + 1)) != 0 && n < 31) ++n;
  return n;
}

uint32_t default_internal_bytes(const Config&) { return kLutMemoryBytes; }

// Config word: bits 0-3 log2(MACs), 4-7 command stream version, 8-9 log2(SRAM AXI ports),
// 10 log2(external AXI ports), 12-13 log2(weight decoders = cores), 28-31 product (2).
Error read_config_word(uint32_t word, const Config& config, StreamConfig* out) {
  const uint32_t macs_log2 = word & 0xfu;
  const uint32_t cores_log2 = (word >> 12) & 3u;
  if (macs_log2 != log2_floor(static_cast<uint32_t>(config.macs)) ||
      cores_log2 != log2_floor(static_cast<uint32_t>(config.cores))) {
    KILN_LOG(Error,
             "COP1 stream was compiled for an Ethos-U85 with %u MACs/cycle on %u core(s); this NPU "
             "has %d on %d",
             1u << macs_log2, 1u << cores_log2, config.macs, config.cores);
    return Error::NpuConfigMismatch;
  }
  out->internal_bytes = kLutMemoryBytes;
  return Error::Ok;
}

}  // namespace

const ArchLayer kLayer = {"Ethos-U85", 2, cmd0_name, cmd1_name, read_config_word, default_internal_bytes,
                          decode};

}  // namespace kiln::vnpu::u85
