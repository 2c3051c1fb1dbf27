// NPU_OP_ELEMENTWISE: binary (add, sub, mul, div, min, max, shifts, comparisons, bitwise)
// and unary (abs, clz, not, lrelu) operations on IFM and IFM2, each a tensor (possibly
// broadcast along H/W/C or read from a chaining buffer) or a scalar; input scaling of each
// operand, the global output scale and the output stage.
//
// The decoder states how the inputs are scaled (op_desc.h): on the Ethos-U55 only ADD/SUB
// scale their inputs (three modes, see u55/decode.cpp), on the Ethos-U85 every input has
// its own IFM_SCALE/IFM2_SCALE. LRELU multiplies non-negative inputs by ifm_scale and
// negative ones by ifm2_scale (alpha). SHR rounds by op.shift_round. Comparisons give 1 or 0.
#include "backends/arm/vnpu/ops/op_context.h"
#include "backends/arm/vnpu/ops/wrapping.h"

#include "runtime/platform/log.h"

namespace kiln::vnpu {
namespace {

bool is_unary(ElementwiseOp m) {
  return m == ElementwiseOp::Abs || m == ElementwiseOp::Clz || m == ElementwiseOp::LRelu || m == ElementwiseOp::Not;
}

int64_t count_leading_zeros(uint32_t v) {
  int64_t n = 0;
  for (uint32_t bit = 0x80000000u; bit != 0 && (v & bit) == 0; bit >>= 1) ++n;
  return n;
}

int64_t shift_amount(int64_t b) { return b < 0 ? 0 : (b > 31 ? 31 : b); }

// a >> s with the rounding of the OFM (floor, or round half up / away etc.).
int64_t shift_right(int64_t a, int64_t s, RoundMode round) {
  if (s == 0) return a;
  return scale_value_wide(a, Scaling{1, static_cast<uint32_t>(s), round, 0});
}

int64_t apply(ElementwiseOp mode, int64_t a, int64_t b, RoundMode shift_round) {
  switch (mode) {
    // 64-bit inputs (an Ethos-U85 IFM may be 64-bit) wrap as the NPU's registers do.
    case ElementwiseOp::Add: return wrapping_add(a, b);
    case ElementwiseOp::Sub: return wrapping_sub(a, b);
    case ElementwiseOp::Mul: return wrapping_mul(a, b);
    case ElementwiseOp::Min: return a < b ? a : b;
    case ElementwiseOp::Max: return a > b ? a : b;
    case ElementwiseOp::Abs: return a < 0 ? wrapping_neg(a) : a;
    case ElementwiseOp::Clz: return count_leading_zeros(static_cast<uint32_t>(a));
    case ElementwiseOp::Shr: return shift_right(a, shift_amount(b), shift_round);
    case ElementwiseOp::Shl:
      return static_cast<int32_t>(static_cast<uint32_t>(a) << shift_amount(b));
    case ElementwiseOp::Lsr: return static_cast<int32_t>(static_cast<uint32_t>(a) >> shift_amount(b));
    case ElementwiseOp::Div:
      // Integer division toward zero; a zero divisor gives 0 (TOSA leaves it undefined).
      if (b == 0) return 0;
      if (a == INT32_MIN && b == -1) return INT32_MAX;
      if (a == INT64_MIN && b == -1) return INT64_MAX;
      return a / b;
    // True is all ones (a bool8 0xFF): Vela's SELECT is (a & condition) | (b & ~condition).
    case ElementwiseOp::CmpEq: return a == b ? -1 : 0;
    case ElementwiseOp::CmpNe: return a != b ? -1 : 0;
    case ElementwiseOp::CmpGe: return a >= b ? -1 : 0;
    case ElementwiseOp::CmpGt: return a > b ? -1 : 0;
    case ElementwiseOp::And: return static_cast<int32_t>(static_cast<uint32_t>(a) & static_cast<uint32_t>(b));
    case ElementwiseOp::Or: return static_cast<int32_t>(static_cast<uint32_t>(a) | static_cast<uint32_t>(b));
    case ElementwiseOp::Xor: return static_cast<int32_t>(static_cast<uint32_t>(a) ^ static_cast<uint32_t>(b));
    case ElementwiseOp::AndNot: return static_cast<int32_t>(static_cast<uint32_t>(a) & ~static_cast<uint32_t>(b));
    case ElementwiseOp::Not: return static_cast<int32_t>(~static_cast<uint32_t>(a));
    case ElementwiseOp::LRelu: return a;
  }
  return a;
}

// One input of the op: a bound map (with broadcast axes) or a scalar.
struct Operand {
  FeatureMap map;
  bool scalar = false;
  int64_t value = 0;
  bool bc_h = false, bc_w = false, bc_c = false;
  int64_t zero_point = 0;

  int64_t read(uint32_t y, uint32_t x, uint32_t c) const {
    if (scalar) return wrapping_sub(value, zero_point);
    return wrapping_sub(map.read(bc_h ? 0 : y, bc_w ? 0 : x, bc_c ? 0 : c), zero_point);
  }
};

Error bind_operand(OpContext& ctx, const FmDesc& fm, const char* name, Operand* in) {
  const OpDesc& op = ctx.op;
  in->zero_point = fm.zero_point;
  if (fm.storage == FmStorage::Scalar) {
    in->scalar = true;
    in->value = fm.scalar;
    return Error::Ok;
  }
  in->bc_h = (fm.broadcast & kBroadcastAxisH) != 0;
  in->bc_w = (fm.broadcast & kBroadcastAxisW) != 0;
  in->bc_c = (fm.broadcast & kBroadcastAxisC) != 0;
  Error err = bind_input(ctx, fm, name, in->bc_h ? 1u : op.ofm_height, in->bc_w ? 1u : op.ofm_width,
                         in->bc_c ? 1u : op.ofm_depth, &in->map);
  if (err == Error::Ok) count_read(ctx, in->map, in->map.bytes());
  return err;
}

}  // namespace

Error run_elementwise(OpContext& ctx) {
  const OpDesc& op = ctx.op;
  const ElementwiseOp mode = static_cast<ElementwiseOp>(op.mode);
  const uint32_t oh = op.ofm_height, ow = op.ofm_width, od = op.ofm_depth;
  Operand in1, in2;
  Error err = bind_operand(ctx, op.ifm, "IFM", &in1);
  if (err != Error::Ok) return err;
  const bool unary = is_unary(mode);
  if (!unary) {
    err = bind_operand(ctx, op.ifm2, "IFM2", &in2);
    if (err != Error::Ok) return err;
  }
  FeatureMap ofm;
  bool bound = false;
  err = bind_output(ctx, &ofm, &bound);
  if (err != Error::Ok) return err;
  OutputStage stage;
  err = make_output_stage(ctx, &stage);
  if (err != Error::Ok) return err;
  err = charge_work(ctx, uint64_t{oh} * ow * od, "NPU_OP_ELEMENTWISE");
  if (err != Error::Ok) return err;

  for (uint32_t y = 0; y < oh; ++y) {
    for (uint32_t x = 0; x < ow; ++x) {
      for (uint32_t c = 0; c < od; ++c) {
        int64_t a = in1.read(y, x, c);
        int64_t r;
        if (mode == ElementwiseOp::LRelu) {
          r = scale_value(a, a >= 0 ? op.ifm_scale : op.ifm2_scale);
        } else {
          int64_t b = unary ? 0 : in2.read(y, x, c);
          if (op.swap_operands) {
            const int64_t t = a;
            a = b;
            b = t;
          }
          if (op.input_scaling) {
            a = scale_value(a, op.ifm_scale);
            if (!unary) b = scale_value(b, op.ifm2_scale);
          }
          r = apply(mode, a, b, op.shift_round);
        }
        const int64_t v = stage.finish(scale_value(stage.before_scaling(r), op.output.scale));
        if (bound) ofm.write(y, x, c, v);
      }
    }
  }
  if (bound) {
    count_written(ctx, ofm, ofm.bytes());
    ctx.state.condition = oh > 0 && ow > 0 && od > 0 && ofm.read(0, 0, 0) != 0;
  }
  return Error::Ok;
}

}  // namespace kiln::vnpu
