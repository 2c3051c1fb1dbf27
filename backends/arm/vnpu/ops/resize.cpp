// NPU_OP_RESIZE (Ethos-U85): TOSA RESIZE on the NPU. Output (y, x) reads input position
// (y * d_y + offset_y) / n_y, (x * d_x + offset_x) / n_x: its integer part i and remainder r.
// Bilinear weighs the four neighbours (clamped to the IFM) by (n - r) and r per axis, as
// TOSA's integer RESIZE does; nearest takes the neighbour at i + 1 when 2r >= n, replicate
// the one at i. The accumulator carries 16 fractional bits more than TOSA's result, so
// OFM_SCALE holds 2^-(16 + shift) (Vela's RESIZE scaling: the TOSA rescale's shift + 16).
// The IFM extent is KERNEL_HEIGHT/WIDTH (as many rows and columns as the op may read).
#include "backends/arm/vnpu/ops/conv_common.h"

#include "runtime/platform/log.h"

namespace kiln::vnpu {
namespace {

// floor(a / n) and a - n * floor(a / n) for n > 0.
void divide_floor(int64_t a, int64_t n, int64_t* q, int64_t* r) {
  *q = a >= 0 ? a / n : -((-a + n - 1) / n);
  *r = a - *q * n;
}

int64_t clamp(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : (v > hi ? hi : v); }

}  // namespace

Error run_resize(OpContext& ctx) {
  const OpDesc& op = ctx.op;
  const ResizeDesc& z = op.resize;
  const ResizeOp mode = static_cast<ResizeOp>(op.mode);
  const uint32_t oh = op.ofm_height, ow = op.ofm_width, od = op.ofm_depth;
  FeatureMap ifm;
  Error err = bind_input(ctx, op.ifm, "IFM", z.ifm_height, z.ifm_width, od, &ifm);
  if (err != Error::Ok) return err;
  err = charge_work(ctx, uint64_t{oh} * ow * od * (mode == ResizeOp::Bilinear ? 4u : 1u), "NPU_OP_RESIZE");
  if (err != Error::Ok) return err;
  ChannelScales scales;
  err = read_channel_scales(ctx, od, &scales);
  if (err != Error::Ok) return err;
  Epilogue out;
  err = out.init(ctx, scales);
  if (err != Error::Ok) return err;
  const int64_t ny = z.scale_n_y, nx = z.scale_n_x;
  const int64_t last_y = int64_t{z.ifm_height} - 1, last_x = int64_t{z.ifm_width} - 1;
  const int64_t zp = op.ifm.zero_point;
  for (uint32_t oy = 0; oy < oh; ++oy) {
    int64_t iy, ry;
    divide_floor(int64_t{oy} * z.scale_d_y + z.offset_y, ny, &iy, &ry);
    const uint32_t y0 = static_cast<uint32_t>(clamp(iy, 0, last_y));
    const uint32_t y1 = static_cast<uint32_t>(clamp(iy + 1, 0, last_y));
    for (uint32_t ox = 0; ox < ow; ++ox) {
      int64_t ix, rx;
      divide_floor(int64_t{ox} * z.scale_d_x + z.offset_x, nx, &ix, &rx);
      const uint32_t x0 = static_cast<uint32_t>(clamp(ix, 0, last_x));
      const uint32_t x1 = static_cast<uint32_t>(clamp(ix + 1, 0, last_x));
      for (uint32_t c = 0; c < od; ++c) {
        int64_t acc;
        if (mode == ResizeOp::Bilinear) {
          // The weights are at most 2^22 (n <= 2048); only a 64-bit IFM can overflow the sum.
          acc = wrapping_add(wrapping_add(wrapping_mul(wrapping_sub(ifm.read(y0, x0, c), zp), (ny - ry) * (nx - rx)),
                                          wrapping_mul(wrapping_sub(ifm.read(y0, x1, c), zp), (ny - ry) * rx)),
                             wrapping_add(wrapping_mul(wrapping_sub(ifm.read(y1, x0, c), zp), ry * (nx - rx)),
                                          wrapping_mul(wrapping_sub(ifm.read(y1, x1, c), zp), ry * rx)));
        } else if (mode == ResizeOp::Nearest) {
          acc = wrapping_sub(ifm.read(2 * ry >= ny ? y1 : y0, 2 * rx >= nx ? x1 : x0, c), zp);
        } else {
          acc = wrapping_sub(ifm.read(y0, x0, c), zp);
        }
        out.put(oy, ox, c, wrapping_mul(acc, 65536));
      }
    }
  }
  count_read(ctx, ifm, ifm.bytes());
  out.count(ctx);
  return Error::Ok;
}

}  // namespace kiln::vnpu
