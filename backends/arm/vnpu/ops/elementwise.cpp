// NPU_OP_ELEMENTWISE: binary (add, sub, mul, min, max, shr, shl) and unary (abs, clz, lrelu)
// operations on IFM and IFM2 (a tensor, broadcast along H/W/C, or a scalar), with input
// scaling (OPA/OPB) for add/sub and the global output scale.
//
// Add/sub input scaling (IFM_PRECISION scale_mode), established against Vela 5.2 and the
// TOSA reference model (RESCALE a, RESCALE b, ADD, RESCALE fused into one ADD):
// - OPA_OPB_16: IFM * OPA_SCALE >> OPA shift, IFM2 * OPB_SCALE.
// - OPA_32 / OPB_32: one operand (IFM / IFM2) is scaled by the 32-bit OPA_SCALE with its
//   shift; the other is not multiplied but shifted left to the same fixed point, 2^19 for
//   8-bit inputs (the "2 * max / 2^20" common scale TFLite and Vela use) and 2^14 for
//   16-bit ones. OPB_SCALE is 0 in these modes; reading it as a multiplier zeroes the
//   unscaled operand (a residual add then mismatches the reference).
// Operands A/B are IFM/IFM2 after the reversed-order swap (IFM2_BROADCAST bit 6): with a
// reversed order, OPB_32 scales the IFM (checked against the reference with a broadcast
// first operand).
#include "backends/arm/vnpu/ops/op_context.h"

#include "runtime/platform/log.h"

namespace kiln::vnpu {
namespace {

bool is_unary(ElementwiseMode m) {
  return m == ElementwiseMode::Abs || m == ElementwiseMode::Clz || m == ElementwiseMode::LRelu;
}

int32_t count_leading_zeros(uint32_t v) {
  int32_t n = 0;
  for (uint32_t bit = 0x80000000u; bit != 0 && (v & bit) == 0; bit >>= 1) ++n;
  return n;
}

}  // namespace

Error run_elementwise(OpContext& ctx) {
  const RegisterFile& regs = ctx.regs;
  if (ctx.param > 9) {
    KILN_LOG(Error, "elementwise mode %u is reserved", ctx.param);
    return Error::NpuInvalidRegister;
  }
  const ElementwiseMode mode = static_cast<ElementwiseMode>(ctx.param);
  const OfmShape o = ofm_shape(regs);
  const uint32_t bc = regs.get(Cmd0::Ifm2Broadcast);
  const bool bc_h = (bc & 1u) != 0, bc_w = (bc & 2u) != 0, bc_c = (bc & 4u) != 0;
  const bool reversed = (bc & 0x40u) != 0;
  const bool scalar = (bc & 0x80u) != 0;
  const bool unary = is_unary(mode);

  FeatureMap ifm, ifm2, ofm;
  Error err = ifm.bind(FeatureMapKind::Ifm, regs, ctx.regions, o.height, o.width, o.depth);
  if (err != Error::Ok) return err;
  if (!unary && !scalar) {
    err = ifm2.bind(FeatureMapKind::Ifm2, regs, ctx.regions, bc_h ? 1u : o.height,
                    bc_w ? 1u : o.width, bc_c ? 1u : o.depth);
    if (err != Error::Ok) return err;
  }
  err = ofm.bind(FeatureMapKind::Ofm, regs, ctx.regions, o.height, o.width, o.depth);
  if (err != Error::Ok) return err;
  OutputStage stage;
  err = make_output_stage(ctx, ofm, &stage);
  if (err != Error::Ok) return err;
  err = charge_work(ctx, uint64_t{o.height} * o.width * o.depth, "NPU_OP_ELEMENTWISE");
  if (err != Error::Ok) return err;

  int32_t zp1 = ifm.is_signed() ? regs.get_signed(Cmd0::IfmZeroPoint) : regs.get(Cmd0::IfmZeroPoint);
  if (ifm.elem_size() == 4) zp1 = 0;
  int32_t zp2 = 0;
  if (!unary && !scalar) {
    zp2 = ifm2.is_signed() ? regs.get_signed(Cmd0::Ifm2ZeroPoint) : regs.get(Cmd0::Ifm2ZeroPoint);
    if (ifm2.elem_size() == 4) zp2 = 0;
  } else if (scalar) {
    zp2 = regs.get_signed(Cmd0::Ifm2ZeroPoint);
  }
  const int32_t scalar_value = regs.get_signed(Cmd0::Ifm2Scalar);
  const uint32_t ifm_precision = regs.get(Cmd0::IfmPrecision);
  const uint32_t scale_mode = (ifm_precision >> 8) & 3u;
  if (scale_mode > 2) {
    KILN_LOG(Error, "IFM_PRECISION scale mode %u is reserved", scale_mode);
    return Error::NpuInvalidRegister;
  }
  const IfmScaleMode in_scaling = static_cast<IfmScaleMode>(scale_mode);
  // Left shift of the operand that OPA_32/OPB_32 leave unscaled.
  const uint32_t unscaled_shift = ifm.elem_size() == 1 ? 19u : 14u;
  const RoundMode in_round = static_cast<RoundMode>(((ifm_precision >> 14) & 3u) > 2 ? 0 : (ifm_precision >> 14) & 3u);
  const uint32_t opa_scale = regs.get(Cmd1::OpaScale);
  const uint32_t opa_shift = regs.param(Cmd1::OpaScale) & 0x3fu;
  const uint32_t opb_scale = regs.get(Cmd1::OpbScale);
  const uint32_t ofm_scale = regs.get(Cmd1::OfmScale);
  const uint32_t ofm_shift = regs.param(Cmd1::OfmScale) & 0x3fu;
  const bool add_sub = mode == ElementwiseMode::Add || mode == ElementwiseMode::Sub;

  for (uint32_t y = 0; y < o.height; ++y) {
    for (uint32_t x = 0; x < o.width; ++x) {
      for (uint32_t c = 0; c < o.depth; ++c) {
        int64_t a = int64_t{ifm.read(y, x, c)} - zp1;
        int64_t b = 0;
        if (!unary) {
          b = scalar ? scalar_value : ifm2.read(bc_h ? 0 : y, bc_w ? 0 : x, bc_c ? 0 : c);
          b -= zp2;
          if (reversed) {
            const int64_t t = a;
            a = b;
            b = t;
          }
        }
        if (add_sub) {
          switch (in_scaling) {
            case IfmScaleMode::Scale16Bit:
              a = scale_value(a, opa_scale, opa_shift, in_round);
              b = scale_value(b, opb_scale, 0, in_round);
              break;
            case IfmScaleMode::OpaScale32Bit:
              a = scale_value(a, opa_scale, opa_shift, in_round);
              b = b * (int64_t{1} << unscaled_shift);
              break;
            case IfmScaleMode::OpbScale32Bit:
              a = a * (int64_t{1} << unscaled_shift);
              b = scale_value(b, opa_scale, opa_shift, in_round);
              break;
          }
        }
        int64_t r = 0;
        switch (mode) {
          case ElementwiseMode::Add: r = a + b; break;
          case ElementwiseMode::Sub: r = a - b; break;
          case ElementwiseMode::Mul: r = a * b; break;
          case ElementwiseMode::Min: r = a < b ? a : b; break;
          case ElementwiseMode::Max: r = a > b ? a : b; break;
          case ElementwiseMode::Abs: r = a < 0 ? -a : a; break;
          case ElementwiseMode::Clz: r = count_leading_zeros(static_cast<uint32_t>(a)); break;
          case ElementwiseMode::Shr: {
            const int64_t s = b < 0 ? 0 : (b > 31 ? 31 : b);
            r = a >> s;
            break;
          }
          case ElementwiseMode::Shl: {
            const int64_t s = b < 0 ? 0 : (b > 31 ? 31 : b);
            r = static_cast<int32_t>(static_cast<uint32_t>(a) << s);
            break;
          }
          case ElementwiseMode::LRelu: r = a; break;
        }
        int64_t scaled;
        if (ofm.elem_size() == 4 && (mode == ElementwiseMode::Shr || mode == ElementwiseMode::Shl ||
                                     mode == ElementwiseMode::Clz)) {
          scaled = r;
        } else if (mode == ElementwiseMode::LRelu) {
          scaled = a < 0 ? scale_value(a, ofm_scale, ofm_shift, stage.round) : a;
        } else {
          scaled = scale_value(r, ofm_scale, ofm_shift, stage.round);
        }
        ofm.write(y, x, c, stage.finish(scaled));
      }
    }
  }
  const uint64_t n = uint64_t{o.height} * o.width * o.depth;
  ctx.bytes_read[ifm.region()] += n * ifm.elem_size();
  ctx.record.bytes_read += n * ifm.elem_size();
  ctx.bytes_written[ofm.region()] += n * ofm.elem_size();
  ctx.record.bytes_written += n * ofm.elem_size();
  return Error::Ok;
}

}  // namespace kiln::vnpu
