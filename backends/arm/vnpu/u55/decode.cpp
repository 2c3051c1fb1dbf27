// Ethos-U55/U65 registers → OpDesc, and the COP1 config word of these products.
//
// Facts established against Vela 5.2 and the TOSA reference model (see NOTES.md): average
// pooling without padding sums (Vela folds 1/area into OFM_SCALE); elementwise ADD/SUB input
// scaling has three modes (IFM_PRECISION bits 8-9), the OPA_32/OPB_32 ones shifting the
// unscaled operand left by 19 (8-bit) or 14 (16-bit); LUTs sit at the top 2 KiB of SHRAM.
// An Ethos-U65-512 runs two cores that split the OFM depth: core n reads WEIGHT(n)/SCALE(n)
// and computes channels n, n+2, ...
#include "backends/arm/vnpu/arch.h"
#include "backends/arm/vnpu/decode_common.h"
#include "backends/arm/vnpu/u55/commands.h"
#include "runtime/platform/log.h"

namespace kiln::vnpu::u55 {
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

// IFM/IFM2 precision: bit 0 signed, bits 2-3 size; OFM: bit 0 signed, bits 1-2 size. Both:
// bits 6-7 format.
Error decode_fm(const Regs& r, const FmRegisters& f, bool is_ofm, FmDesc* fm) {
  const uint32_t precision = r.get(f.precision);
  const uint32_t size_code = is_ofm ? (precision >> 1) & 3u : (precision >> 2) & 3u;
  const bool is_signed = (precision & 1u) != 0;
  if (size_code == 0) {
    fm->type = is_signed ? ElemType::S8 : ElemType::U8;
  } else if (size_code == 1) {
    fm->type = is_signed ? ElemType::S16 : ElemType::U16;
  } else if (size_code == 2 && is_signed) {
    fm->type = ElemType::S32;
  } else {
    KILN_LOG(Error, "%s precision 0x%x is not supported", f.name, precision);
    return Error::NpuInvalidRegister;
  }
  const uint32_t format = (precision >> 6) & 3u;
  if (format > 1) {
    KILN_LOG(Error, "%s format %u is neither NHWC nor NHCWB16", f.name, format);
    return Error::NpuInvalidRegister;
  }
  fm->format = static_cast<DataFormat>(format);
  fm->storage = FmStorage::Memory;
  fm->region = static_cast<uint8_t>(r.get(f.region) & 0xffu);
  if (fm->region >= kMaxRegions) {
    KILN_LOG(Error, "%s region %u does not exist (%zu base pointers)", f.name, fm->region, kMaxRegions);
    return Error::NpuRegionOutOfBounds;
  }
  for (uint32_t t = 0; t < 4; ++t) fm->base[t] = r.address(static_cast<Cmd1>(static_cast<uint32_t>(f.base0) + t));
  fm->width0 = r.get(f.width0) + 1u;
  fm->height0 = r.get(f.height0) + 1u;
  fm->height1 = r.get(f.height1) + 1u;
  fm->stride_x = r.address(f.stride_x);
  fm->stride_y = r.address(f.stride_y);
  fm->stride_c = r.address(f.stride_c);
  fm->zero_point = zero_point_of(fm->type, r.get(f.zero_point));
  return Error::Ok;
}

RoundMode rounding(uint32_t field) {
  return field == 1 ? RoundMode::TruncateToZero
                    : (field == 2 ? RoundMode::Natural : RoundMode::DoubleSymmetric);
}

Error decode_kernel(const Regs& r, KernelGeometry* k, bool* part_kernel_first) {
  // Bit 5 (decomposition) is the Ethos-U85's; Vela leaves it 0 here.
  Error err = decode_kernel_stride(r.get(Cmd0::KernelStride), k, part_kernel_first);
  if (err != Error::Ok) return err;
  return finish_kernel(r.get(Cmd0::KernelHeightM1), r.get(Cmd0::KernelWidthM1), r.get(Cmd0::IfmPadTop),
                       r.get(Cmd0::IfmPadLeft), r.get(Cmd0::IfmPadBottom), r.get(Cmd0::IfmPadRight), k);
}

// ACTIVATION bits 0-11 function (0 none, 16-23 table n), 12-15 clip range;
// ACTIVATION_MIN/MAX in the OFM's quantized domain (not applied to 32-bit OFMs).
Error decode_activation(const Regs& r, const FmDesc& ofm, uint32_t shram_bytes, OutputDesc* out) {
  const uint32_t act = r.get(Cmd0::Activation);
  const uint32_t function = act & 0xfffu;
  const uint32_t clip_range = (act >> 12) & 0xfu;
  int64_t lo = elem_min(ofm.type), hi = elem_max(ofm.type);
  switch (clip_range) {
    case 0: break;
    case 2: lo = 0; hi = 255; break;
    case 3: lo = -128; hi = 127; break;
    case 5: lo = -32768; hi = 32767; break;
    default:
      KILN_LOG(Error, "activation clip range %u is reserved", clip_range);
      return Error::NpuInvalidRegister;
  }
  if (elem_bytes(ofm.type) < 4) {
    const bool s = elem_signed(ofm.type);
    const int64_t amin = s ? r.get_signed(Cmd0::ActivationMin) : r.get(Cmd0::ActivationMin);
    const int64_t amax = s ? r.get_signed(Cmd0::ActivationMax) : r.get(Cmd0::ActivationMax);
    if (amin > lo) lo = amin;
    if (amax < hi) hi = amax;
  }
  out->clip_min = lo;
  out->clip_max = hi;
  out->lut = LutKind::None;
  if (function >= kActivationLutStart && function <= kActivationLutEnd) {
    // 8-bit tables take 256 bytes each of the top 2 KiB of SHRAM; a 16-bit OFM's table is
    // 512 (base, slope) pairs that fill all of it (index 0).
    const uint32_t base = shram_bytes >= 2048 ? shram_bytes - 2048 : 0;
    const uint32_t offset = base + 256u * (function - kActivationLutStart);
    const uint32_t bytes = elem_bytes(ofm.type);
    const uint32_t size = bytes == 2 ? 2048u : 256u;
    if ((bytes != 1 && bytes != 2) || offset + size > shram_bytes) {
      KILN_LOG(Error, "table lookup %u on a %u-byte OFM is not modelled (LUT at 0x%x)",
               function - kActivationLutStart, bytes, offset);
      return Error::NpuInvalidRegister;
    }
    out->lut = bytes == 2 ? LutKind::Int16InterpolatedAfterScaling : LutKind::Int8;
    out->lut_offset = offset;
  } else if (function != kActivationNone) {
    KILN_LOG(Error, "activation function %u (tanh/sigmoid) is not modelled", function);
    return Error::NpuInvalidRegister;
  }
  return Error::Ok;
}

Error decode_output(const Regs& r, const DecodeInput& in, OpDesc* op) {
  Error err = decode_fm(r, kOfm, /*is_ofm=*/true, &op->ofm);
  if (err != Error::Ok) return err;
  op->ofm_height = r.get(Cmd0::OfmHeightM1) + 1u;
  op->ofm_width = r.get(Cmd0::OfmWidthM1) + 1u;
  op->ofm_depth = r.get(Cmd0::OfmDepthM1) + 1u;
  const uint32_t round = (r.get(Cmd0::OfmPrecision) >> 14) & 3u;
  if (round > 2) {
    KILN_LOG(Error, "OFM rounding mode %u is reserved", round);
    return Error::NpuInvalidRegister;
  }
  op->output.scale = Scaling{r.get(Cmd1::OfmScale), r.param(Cmd1::OfmScale) & 0x3fu, rounding(round), 0};
  err = check_shift(op->output.scale, "OFM_SCALE");
  if (err != Error::Ok) return err;
  return decode_activation(r, op->ofm, in.internal_bytes, &op->output);
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
  op->output.per_channel = true;
  WeightDesc& w = op->weights;
  w.family = WeightFamily::U55;
  w.traversal = depthwise ? WeightTraversal::Depthwise
                          : (part_kernel_first ? WeightTraversal::PartKernelFirst : WeightTraversal::DepthFirst);
  w.ofm_block_depth = r.get(Cmd0::OfmBlkDepthM1) + 1u;
  w.ifm_ublock_depth = 8;
  w.ofm_ublock_depth = (in.config.arch == Arch::EthosU55 && in.config.macs <= 32) ? 4u : 8u;
  // IFM blocks of 32 channels for 8-bit depth-first, 16 for part-kernel-first or 16-bit IFMs.
  w.ifm_block_depth = (part_kernel_first || elem_bytes(op->ifm.type) == 2) ? 16u : 32u;
  w.cores = in.config.cores;
  w.macs = static_cast<uint32_t>(in.config.macs);
  w.record = ScaleRecord::Bias40Scale32;
  w.weight_region = static_cast<uint8_t>(r.get(Cmd0::WeightRegion) & 0xffu);
  w.scale_region = static_cast<uint8_t>(r.get(Cmd0::ScaleRegion) & 0xffu);
  w.weight_base[0] = r.address(Cmd1::WeightBase);
  w.weight_length[0] = r.get(Cmd1::WeightLength);
  w.scale_base[0] = r.address(Cmd1::ScaleBase);
  w.scale_length[0] = r.get(Cmd1::ScaleLength);
  w.scale_streams = 1;
  if (in.config.cores > 1) {
    if (r.get(Cmd0::ParallelMode) != kParallelDualCoreDepth) {
      KILN_LOG(Error, "%d-core configuration but PARALLEL_MODE %u is not dual-core depth split",
               in.config.cores, r.get(Cmd0::ParallelMode));
      return Error::NpuInvalidRegister;
    }
    w.weight_base[1] = r.address(Cmd1::Weight1Base);
    w.weight_length[1] = r.get(Cmd1::Weight1Length);
    w.scale_base[1] = r.address(Cmd1::Scale1Base);
    w.scale_length[1] = r.get(Cmd1::Scale1Length);
    w.scale_streams = 2;
  }
  return Error::Ok;
}

Error decode_pool(const Regs& r, uint16_t param, OpDesc* op) {
  if (param > static_cast<uint16_t>(PoolingMode::ReduceSum)) {
    KILN_LOG(Error, "pooling mode %u is reserved", param);
    return Error::NpuInvalidRegister;
  }
  op->mode = param;  // Max, Average, ReduceSum have the same values as PoolOp.
  bool part_kernel_first = false;
  Error err = decode_kernel(r, &op->kernel, &part_kernel_first);
  if (err != Error::Ok) return err;
  err = decode_fm(r, kIfm, false, &op->ifm);
  if (err != Error::Ok) return err;
  op->ifm_depth = param == static_cast<uint16_t>(PoolingMode::ReduceSum) ? r.get(Cmd0::IfmDepthM1) + 1u
                                                                         : op->ofm_depth;
  op->average_divides_unpadded = false;
  return decode_upscale(r.get(Cmd0::IfmUpscale), &op->upscale);
}

Error decode_elementwise(const Regs& r, uint16_t param, OpDesc* op) {
  if (param > static_cast<uint16_t>(ElementwiseMode::Shl)) {
    KILN_LOG(Error, "elementwise mode %u is reserved", param);
    return Error::NpuInvalidRegister;
  }
  op->mode = param;  // Modes 0-9 have the same values as ElementwiseOp.
  const ElementwiseMode mode = static_cast<ElementwiseMode>(param);
  Error err = decode_fm(r, kIfm, false, &op->ifm);
  if (err != Error::Ok) return err;
  const bool unary = mode == ElementwiseMode::Abs || mode == ElementwiseMode::Clz || mode == ElementwiseMode::LRelu;
  const uint32_t bc = r.get(Cmd0::Ifm2Broadcast);
  if (!unary) {
    if ((bc & 0x80u) != 0) {
      op->ifm2.storage = FmStorage::Scalar;
      op->ifm2.scalar = r.get_signed(Cmd0::Ifm2Scalar);
      op->ifm2.zero_point = r.get_signed(Cmd0::Ifm2ZeroPoint);
      op->ifm2.type = op->ifm.type;
    } else {
      err = decode_fm(r, kIfm2, false, &op->ifm2);
      if (err != Error::Ok) return err;
      op->ifm2.broadcast = static_cast<uint8_t>(bc & 7u);
    }
    op->swap_operands = (bc & 0x40u) != 0;
  }
  const uint32_t ifm_precision = r.get(Cmd0::IfmPrecision);
  const uint32_t scale_mode = (ifm_precision >> 8) & 3u;
  if (scale_mode > 2) {
    KILN_LOG(Error, "IFM_PRECISION scale mode %u is reserved", scale_mode);
    return Error::NpuInvalidRegister;
  }
  const uint32_t in_round_field = (ifm_precision >> 14) & 3u;
  const RoundMode in_round = rounding(in_round_field > 2 ? 0 : in_round_field);
  const Scaling opa{r.get(Cmd1::OpaScale), r.param(Cmd1::OpaScale) & 0x3fu, in_round, 0};
  err = check_shift(opa, "OPA_SCALE");
  if (err != Error::Ok) return err;
  // The operand OPA_32/OPB_32 leave unscaled is shifted to the common fixed point instead.
  const Scaling shifted{1u << (elem_bytes(op->ifm.type) == 1 ? 19u : 14u), 0, in_round, 0};
  if (mode == ElementwiseMode::Add || mode == ElementwiseMode::Sub) {
    op->input_scaling = true;
    switch (static_cast<IfmScaleMode>(scale_mode)) {
      case IfmScaleMode::Scale16Bit:
        op->ifm_scale = opa;
        op->ifm2_scale = Scaling{r.get(Cmd1::OpbScale), 0, in_round, 0};
        break;
      case IfmScaleMode::OpaScale32Bit:
        op->ifm_scale = opa;
        op->ifm2_scale = shifted;
        break;
      case IfmScaleMode::OpbScale32Bit:
        op->ifm_scale = shifted;
        op->ifm2_scale = opa;
        break;
    }
  }
  // Shift and count-leading-zero results go to a 32-bit OFM unscaled.
  if (elem_bytes(op->ofm.type) == 4 &&
      (mode == ElementwiseMode::Shr || mode == ElementwiseMode::Shl || mode == ElementwiseMode::Clz)) {
    op->output.scale = Scaling{};
  }
  // LRELU: negative inputs are multiplied by alpha (OFM_SCALE), positive ones pass.
  if (mode == ElementwiseMode::LRelu) {
    op->ifm_scale = Scaling{};
    op->ifm2_scale = op->output.scale;
    op->output.scale = Scaling{};
  }
  op->shift_round = RoundMode::TruncateToLower;
  return Error::Ok;
}

Error decode_dma(const Regs& r, OpDesc* op) {
  DmaDesc& d = op->dma;
  const uint32_t src = r.get(Cmd0::Dma0SrcRegion), dst = r.get(Cmd0::Dma0DstRegion);
  if (((src | dst) >> 9 & 3u) != 0) {
    KILN_LOG(Error, "DMA stride mode (2D/3D) does not exist on the Ethos-U55/U65 (regions 0x%x, 0x%x)", src, dst);
    return Error::NpuInvalidRegister;
  }
  d.src.region = static_cast<uint8_t>(src & 0xffu);
  d.src.internal = ((src >> 8) & 1u) != 0;
  d.src.address = r.address(Cmd1::Dma0Src);
  d.dst.region = static_cast<uint8_t>(dst & 0xffu);
  d.dst.internal = ((dst >> 8) & 1u) != 0;
  d.dst.address = r.address(Cmd1::Dma0Dst);
  d.length = r.address(Cmd1::Dma0Len);
  d.dims = 1;
  return Error::Ok;
}

Error decode(const DecodeInput& in, OpDesc* op) {
  const Regs r{in.regs};
  *op = OpDesc();
  op->kind = static_cast<OpKind>(in.code);
  switch (static_cast<Cmd0>(in.code)) {
    case Cmd0::OpDmaStart:
      return decode_dma(r, op);
    case Cmd0::OpConv:
    case Cmd0::OpDepthwise: {
      Error err = decode_output(r, in, op);
      if (err != Error::Ok) return err;
      return decode_conv(r, in, static_cast<Cmd0>(in.code) == Cmd0::OpDepthwise, op);
    }
    case Cmd0::OpPool: {
      Error err = decode_output(r, in, op);
      if (err != Error::Ok) return err;
      return decode_pool(r, in.param, op);
    }
    case Cmd0::OpElementwise: {
      Error err = decode_output(r, in, op);
      if (err != Error::Ok) return err;
      return decode_elementwise(r, in.param, op);
    }
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

// SHRAM per core in KiB (Ethos-U55 TRM / Vela's architecture table). Each core of an
// Ethos-U65-512 has its own; DMAs into internal memory (LUTs) write both alike, so the
// internal memory the stream addresses is one core's.
uint32_t shram_kib(const Config& config) {
  return config.arch == Arch::EthosU65 || config.macs >= 256 ? 48u : config.macs >= 128 ? 24u : 16u;
}

uint32_t default_internal_bytes(const Config& config) { return shram_kib(config) * 1024u; }

// Config word: bits 0-3 log2(MACs of all cores), 8-15 SHRAM KiB of all cores, 28-31 product.
Error read_config_word(uint32_t word, const Config& config, StreamConfig* out) {
  const uint32_t macs_log2 = word & 0xfu;
  const uint32_t shram = (word >> 8) & 0xffu;
  if (macs_log2 != log2_floor(static_cast<uint32_t>(config.macs))) {
    KILN_LOG(Error, "COP1 stream was compiled for %u MACs/cycle; this NPU has %d", 1u << macs_log2,
             config.macs);
    return Error::NpuConfigMismatch;
  }
  out->internal_bytes = default_internal_bytes(config);
  const uint32_t per_core = shram / static_cast<uint32_t>(config.cores);
  if (per_core > 0 && per_core * 1024u <= out->internal_bytes) out->internal_bytes = per_core * 1024u;
  return Error::Ok;
}

}  // namespace

const ArchLayer kU55Layer = {"Ethos-U55", 0, cmd0_name, cmd1_name, read_config_word,
                             default_internal_bytes, decode};
const ArchLayer kU65Layer = {"Ethos-U65", 1, cmd0_name, cmd1_name, read_config_word,
                             default_internal_bytes, decode};

}  // namespace kiln::vnpu::u55
