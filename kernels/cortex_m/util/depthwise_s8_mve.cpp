// depthwise_s8 (depthwise_s8.h) with Helium. Output channels go sixteen at a time, as two
// halves of eight int16 lanes (VLDRB.S16 widens eight int8 as it loads them). Per tap and
// half, VMULLB/VMULLT multiply the even and the odd lanes into int32 and two VADDs
// accumulate: a tap of sixteen channels is 2 weight loads, 2 input loads, 4 multiplies,
// 4 adds and a pointer step, 13 instructions for 16 MACs. The four accumulators, the
// loaded pair and one product take 7 of the 8 Q registers, so nothing spills; an empty
// asm after each tap pins the accumulators, or GCC re-associates the sums into a tree of
// products that needs more registers than there are.
//
// The input offset costs nothing per tap: the accumulators start at bias + input_offset *
// (sum of the channel's weights), so a tap adds x * w. A tap in the padding reads the
// input zero point (-input_offset) from a 16-byte buffer instead: (zp + offset) * w = 0,
// as in the reference. Pixels whose window lies inside the image walk it with one pointer;
// the others (the border) take a table of tap addresses. A block's weights are copied once
// into [tap][16] order (zeros past the last channel), so one pointer walks them too.
// Requantization runs on the four accumulators with the block's per-channel parameters in
// the accumulators' lane order (requantize_mve.h); two narrowing stores write 16 bytes.
//
// Blocks of fewer than sixteen channels, and depth multipliers above one (output channel
// o reads input channel o / multiplier), load the input with a predicated gather from a
// per-lane offset vector: the same instruction count plus the offsets' reload.
#include "kernels/cortex_m/util/depthwise_s8.h"
#include "kernels/cortex_m/util/flavour.h"

#if defined(KILN_CM_MVE)
#include "kernels/cortex_m/util/requantize_mve.h"

namespace kiln {
namespace cortex_m {
namespace {

constexpr int32_t kBlock = 16;
/// Taps a block's copied weights hold (7x7 and smaller kernels); larger ones run scalar.
constexpr int32_t kMaxTaps = 64;

/// The accumulators of one pixel: lane l of a<half><parity> is the block's channel
/// 8 * half + 2 * l + parity (VMULLB takes the even lanes of a half, VMULLT the odd).
/// Four named vectors, never an array: an array indexed in a loop lives on the stack.
struct Accumulators {
  int32x4_t a00, a01, a10, a11;
};

/// Position of block channel i in the accumulators' lane order.
inline int32_t lane_slot(int32_t i) { return ((i / 8) * 2 + (i % 2)) * 4 + (i % 8) / 2; }

/// One block of output channels, prepared once for all of its pixels.
/// The per-channel vectors come first: each pixel loads them at immediate offsets (up to
/// 508 bytes) from the block's address.
struct Block {
  int32_t terms[kBlock];       // lane order: bias + input_offset * sum of the channel's weights
  int32_t multiplier[kBlock];  // lane order
  int32_t left[kBlock];        // lane order: max(shift, 0)
  int32_t neg_right[kBlock];   // lane order: min(shift, 0)
  uint16_t offsets[kBlock];    // channel order: each channel's input channel minus the block's first
  uint8_t offsets8[kBlock];    // the same as bytes (a border pixel's gather of all sixteen lanes)
  int16_t weights[kMaxTaps * kBlock];  // [tap][channel], zeros past `count`
  int8_t zero_point[kBlock];   // what a tap in the padding reads
  int32_t count;               // channels in the block
  int32_t input_channel;       // the block's first input channel
};

void prepare_block(const ConvArgs& a, int32_t multiplier, const int8_t* weight, const int32_t* bias, int32_t c0,
                   Block* b) {
  const int32_t channels = a.output.c;
  const int32_t taps = a.kernel[0] * a.kernel[1];
  b->count = channels - c0 < kBlock ? channels - c0 : kBlock;
  b->input_channel = c0 / multiplier;
  for (int32_t t = 0; t < taps; ++t) {
    for (int32_t i = 0; i < kBlock; ++i) {
      b->weights[t * kBlock + i] = i < b->count ? weight[static_cast<int64_t>(t) * channels + c0 + i] : 0;
    }
  }
  for (int32_t i = 0; i < kBlock; ++i) {
    const int32_t slot = lane_slot(i);
    const int32_t c = c0 + (i < b->count ? i : b->count - 1);
    int32_t sum = 0;
    for (int32_t t = 0; t < taps; ++t) sum += b->weights[t * kBlock + i];
    const int32_t shift = a.shifts[c];
    b->terms[slot] = (bias != nullptr && i < b->count ? bias[c] : 0) + a.input_offset * sum;
    b->multiplier[slot] = a.multipliers[c];
    b->left[slot] = shift > 0 ? shift : 0;
    b->neg_right[slot] = shift < 0 ? shift : 0;
    b->offsets[i] = static_cast<uint16_t>(c / multiplier - b->input_channel);
    b->offsets8[i] = static_cast<uint8_t>(b->offsets[i]);
    b->zero_point[i] = static_cast<int8_t>(-a.input_offset);
  }
}

/// Eight channels of input for half `h` of a block at `x` (the block's first input
/// channel of one pixel): a plain load, or (kGather) a predicated gather by the offsets.
template <bool kGather>
__attribute__((always_inline)) inline int16x8_t load_half(const int8_t* x, const Block& b, int32_t h,
                                                          mve_pred16_t p) {
  if (kGather) return vldrbq_gather_offset_z_s16(x, vldrhq_u16(b.offsets + 8 * h), p);
  return vldrbq_s16(x + 8 * h);
}

template <bool kGather>
__attribute__((always_inline)) inline void tap(Accumulators& acc, const int8_t* x, const int16_t* w, const Block& b,
                                               mve_pred16_t p0, mve_pred16_t p1) {
  int16x8_t wv = vldrhq_s16(w);
  int16x8_t xv = load_half<kGather>(x, b, 0, p0);
  acc.a00 = vaddq_s32(acc.a00, vmullbq_int_s16(xv, wv));
  acc.a01 = vaddq_s32(acc.a01, vmulltq_int_s16(xv, wv));
  wv = vldrhq_s16(w + 8);
  xv = load_half<kGather>(x, b, 1, p1);
  acc.a10 = vaddq_s32(acc.a10, vmullbq_int_s16(xv, wv));
  acc.a11 = vaddq_s32(acc.a11, vmulltq_int_s16(xv, wv));
  __asm__("" : "+w"(acc.a00), "+w"(acc.a01), "+w"(acc.a10), "+w"(acc.a11));
}

/// The nine taps of a 3x3 window inside the image, sixteen contiguous channels: `x` is the
/// top-left tap's first channel, `w` the block's weights ([tap][16] int16). In assembly
/// because GCC 12 cannot allocate it: VLDRB.S16 (a widening load) takes its address only
/// from r0-r7, so GCC computes each tap's address in a high register and copies it, and it
/// hoists the 18 weight addresses out of the pixel loop and reloads them from the stack;
/// here each tap is its 12 instructions (2 weight loads at immediate offsets, 2 input
/// loads, 4 multiplies, 4 adds) and a window row adds 4 address steps. Q registers: the
/// four accumulators, a weight vector, an input vector and a product: 7 of 8.
__attribute__((always_inline)) inline void taps_3x3(Accumulators& acc, const int8_t* x, int32_t col_step,
                                                    int32_t row_step, const int16_t* w) {
  int16x8_t wv, xv;
  int32x4_t p;
  const int8_t* t;
#define KILN_DW_TAP(OFFSET, PTR)                                                         \
  "vldrh.16  %q[wv], [%[w], #" #OFFSET "]\n\t"                                           \
  "vldrb.s16 %q[xv], [" PTR ", #0]\n\t"                                                  \
  "vmullb.s16 %q[p], %q[xv], %q[wv]\n\t"                                                 \
  "vadd.i32  %q[a00], %q[a00], %q[p]\n\t"                                                \
  "vmullt.s16 %q[p], %q[xv], %q[wv]\n\t"                                                 \
  "vadd.i32  %q[a01], %q[a01], %q[p]\n\t"                                                \
  "vldrh.16  %q[wv], [%[w], #" #OFFSET "+16]\n\t"                                        \
  "vldrb.s16 %q[xv], [" PTR ", #8]\n\t"                                                  \
  "vmullb.s16 %q[p], %q[xv], %q[wv]\n\t"                                                 \
  "vadd.i32  %q[a10], %q[a10], %q[p]\n\t"                                                \
  "vmullt.s16 %q[p], %q[xv], %q[wv]\n\t"                                                 \
  "vadd.i32  %q[a11], %q[a11], %q[p]\n\t"
#define KILN_DW_ROW                                                                      \
  KILN_DW_TAP(0, "%[x]")                                                                \
  "add %[t], %[x], %[col]\n\t"                                                           \
  KILN_DW_TAP(32, "%[t]")                                                               \
  "add %[t], %[t], %[col]\n\t"                                                           \
  KILN_DW_TAP(64, "%[t]")                                                               \
  "add %[x], %[x], %[row]\n\t"                                                           \
  "add %[w], %[w], #96\n\t"
  __asm__(KILN_DW_ROW KILN_DW_ROW KILN_DW_ROW
          : [a00] "+w"(acc.a00), [a01] "+w"(acc.a01), [a10] "+w"(acc.a10), [a11] "+w"(acc.a11),
            [wv] "=&w"(wv), [xv] "=&w"(xv), [p] "=&w"(p), [x] "+l"(x), [t] "=&l"(t), [w] "+r"(w)
          : [col] "r"(col_step), [row] "r"(row_step)
          : "memory");
#undef KILN_DW_ROW
#undef KILN_DW_TAP
}

inline Accumulators start(const Block& b) {
  return {vldrwq_s32(b.terms), vldrwq_s32(b.terms + 4), vldrwq_s32(b.terms + 8), vldrwq_s32(b.terms + 12)};
}

/// Requantizes accumulator `q` (0-3: lane order) of a block.
template <ShiftKind kKind>
__attribute__((always_inline)) inline int32x4_t requantize_slot(int32x4_t acc, const Block& b, int32_t q) {
  return requantize_lanes<kKind>(acc, vldrwq_s32(b.multiplier + 4 * q), vldrwq_s32(b.left + 4 * q),
                                 vldrwq_s32(b.neg_right + 4 * q));
}

template <ShiftKind kKind>
__attribute__((always_inline)) inline void finish(const Accumulators& acc, const Block& b, const ConvArgs& a,
                                                  int8_t* dst) {
  const int16x8_t lo = vdupq_n_s16(static_cast<int16_t>(a.activation_min));
  const int16x8_t hi = vdupq_n_s16(static_cast<int16_t>(a.activation_max));
  const int32x4_t even0 = requantize_slot<kKind>(acc.a00, b, 0);
  const int32x4_t odd0 = requantize_slot<kKind>(acc.a01, b, 1);
  if (b.count >= kBlock) {
    store_even_odd(even0, odd0, a.output_offset, lo, hi, dst);
    store_even_odd(requantize_slot<kKind>(acc.a10, b, 2), requantize_slot<kKind>(acc.a11, b, 3), a.output_offset,
                   lo, hi, dst + 8);
    return;
  }
  if (b.count <= 8) {
    store_even_odd_first(even0, odd0, a.output_offset, lo, hi, dst, b.count);
    return;
  }
  store_even_odd(even0, odd0, a.output_offset, lo, hi, dst);
  store_even_odd_first(requantize_slot<kKind>(acc.a10, b, 2), requantize_slot<kKind>(acc.a11, b, 3),
                       a.output_offset, lo, hi, dst + 8, b.count - 8);
}

/// The geometry a block's pixel loop needs, in bytes where it is a step.
struct Walk {
  int64_t col_step;   // from a tap to the next in a row of the window
  int64_t row_step;   // from a window row to the next
  int64_t pixel_step; // from an output pixel's window to the next one's
  int32_t kh, kw;
  mve_pred16_t p0, p1;  // the lanes of each half that hold channels (gathers only)
};

/// The taps of one pixel's window: `x` is its top-left tap, `col_step` and `row_step` the
/// steps to the next tap of a row and to the next row.
template <bool kGather, bool kKernel3x3>
__attribute__((always_inline)) inline void window_taps(Accumulators& acc, const int8_t* x, int32_t col_step,
                                                       int32_t row_step, const Block& b, const Walk& g) {
  const int16_t* w = b.weights;
  if (kKernel3x3 && !kGather) {
    taps_3x3(acc, x, col_step, row_step, w);
    return;
  }
  for (int32_t y = 0; y < g.kh; ++y, x += row_step) {
    const int8_t* t = x;
    for (int32_t i = 0; i < g.kw; ++i, t += col_step, w += kBlock) tap<kGather>(acc, t, w, b, g.p0, g.p1);
  }
}

/// A run of `count` output pixels of one row whose windows lie inside the image: `x` is
/// the first one's top-left tap, `dst` its output. A function of its own, so that only
/// what the loop needs is live in it.
template <bool kGather, bool kKernel3x3, ShiftKind kKind>
__attribute__((noinline, optimize("O2", "no-schedule-insns", "no-auto-inc-dec"))) void interior_run(
    const ConvArgs& a, const Block& b, const Walk& g, const int8_t* x, int8_t* dst, int32_t count) {
  const int32_t col_step = static_cast<int32_t>(g.col_step), row_step = static_cast<int32_t>(g.row_step);
  const int64_t pixel_step = g.pixel_step;
  const int32_t cout = a.output.c;
  for (; count > 0; --count, x += pixel_step, dst += cout) {
    // The block's address is opaque in each iteration: otherwise GCC hoists the address of
    // every field the loop reads out of it, into registers it does not have, and reloads
    // them from the stack (two instructions per load instead of one).
    const Block* bp = &b;
    __asm__ volatile("" : "+r"(bp));
    Accumulators acc = start(*bp);
    window_taps<kGather, kKernel3x3>(acc, x, col_step, row_step, *bp, g);
    finish<kKind>(acc, *bp, a, dst);
  }
}

/// Output pixels [ox, end) of row oy, whose windows reach into the padding. Each window is
/// copied into a patch, [tap][16 lanes] as the lanes load (gathered for a gather block),
/// taps in the padding holding the zero point; the contiguous path then runs on the patch.
template <bool kGather, bool kKernel3x3, ShiftKind kKind>
__attribute__((noinline)) KILN_CM_HOT void border_run(const ConvArgs& a, const Block& b, const Walk& g,
                                                      const int8_t* image, int32_t oy, int32_t ox, int32_t end,
                                                      int8_t* dst) {
  alignas(16) int8_t patch[kMaxTaps * kBlock];
  const int8x16_t zero_point = vldrbq_s8(b.zero_point);
  const int32_t iy0 = oy * a.stride[0] - a.padding[0];
  const int32_t cin = a.in.c;
  for (; ox < end; ++ox, dst += a.output.c) {
    const int32_t ix0 = ox * a.stride[1] - a.padding[1];
    int8_t* to = patch;
    for (int32_t y = 0, iy = iy0; y < g.kh; ++y, iy += a.dilation[0]) {
      const bool row_inside = iy >= 0 && iy < a.in.h;
      const int8_t* row = image + iy * a.in.w * cin + b.input_channel;
      for (int32_t i = 0, ix = ix0; i < g.kw; ++i, ix += a.dilation[1], to += kBlock) {
        int8x16_t v = zero_point;
        if (row_inside && ix >= 0 && ix < a.in.w) {
          const int8_t* x = row + ix * cin;
          v = kGather ? vldrbq_gather_offset_z_s8(x, vldrbq_u8(b.offsets8), vctp8q(static_cast<uint32_t>(b.count)))
                      : vldrbq_s8(x);
        }
        vstrbq_s8(to, v);
      }
    }
    Accumulators acc = start(b);
    window_taps<false, kKernel3x3>(acc, patch, kBlock, kBlock * g.kw, b, g);
    finish<kKind>(acc, b, a, dst);
  }
}

/// Every pixel of one block of output channels.
template <bool kGather, bool kKernel3x3, ShiftKind kKind>
KILN_CM_HOT void run_block(const ConvArgs& a, const Block& block, const int8_t* image, int8_t* out) {
  const int32_t cin = a.in.c, cout = a.output.c;
  Walk g;
  g.col_step = static_cast<int64_t>(a.dilation[1]) * cin;
  g.row_step = static_cast<int64_t>(a.dilation[0]) * a.in.w * cin;
  g.pixel_step = static_cast<int64_t>(a.stride[1]) * cin;
  g.kh = a.kernel[0];
  g.kw = a.kernel[1];
  g.p0 = vctp16q(static_cast<uint32_t>(block.count < 8 ? block.count : 8));
  g.p1 = vctp16q(static_cast<uint32_t>(block.count > 8 ? block.count - 8 : 0));
  const InteriorRange rows = interior_range(a.in.h, a.output.h, g.kh, a.stride[0], a.padding[0], a.dilation[0]);
  const InteriorRange cols = interior_range(a.in.w, a.output.w, g.kw, a.stride[1], a.padding[1], a.dilation[1]);
  for (int32_t oy = 0; oy < a.output.h; ++oy) {
    int8_t* dst = out + static_cast<int64_t>(oy) * a.output.w * cout;
    const bool inside = oy >= rows.first && oy < rows.last;
    const int32_t first = inside ? cols.first : a.output.w;
    const int32_t last = inside ? cols.last : a.output.w;
    if (first > 0) border_run<kGather, kKernel3x3, kKind>(a, block, g, image, oy, 0, first, dst);
    if (last > first) {
      const int8_t* x = image + (static_cast<int64_t>(oy * a.stride[0] - a.padding[0]) * a.in.w +
                                 (first * a.stride[1] - a.padding[1])) * cin + block.input_channel;
      interior_run<kGather, kKernel3x3, kKind>(a, block, g, x, dst + static_cast<int64_t>(first) * cout,
                                               last - first);
    }
    if (last < a.output.w) {
      border_run<kGather, kKernel3x3, kKind>(a, block, g, image, oy, last, a.output.w,
                                             dst + static_cast<int64_t>(last) * cout);
    }
  }
}

template <bool kGather, bool kKernel3x3>
void run_block_for_shifts(const ConvArgs& a, const Block& b, bool right_only, const int8_t* image, int8_t* out) {
  if (right_only) {
    run_block<kGather, kKernel3x3, ShiftKind::kRightOnly>(a, b, image, out);
  } else {
    run_block<kGather, kKernel3x3, ShiftKind::kAny>(a, b, image, out);
  }
}

}  // namespace

void depthwise_s8(const ConvArgs& a, int32_t multiplier, const int8_t* image, const int8_t* weight,
                  const int32_t* bias, int8_t* out) {
  if (a.kernel[0] * a.kernel[1] > kMaxTaps) {
    depthwise_s8_scalar(a, multiplier, image, weight, bias, out);
    return;
  }
  Block b;
  for (int32_t c0 = 0; c0 < a.output.c; c0 += kBlock) {
    prepare_block(a, multiplier, weight, bias, c0, &b);
    const bool gather = multiplier != 1 || b.count < kBlock;
    const bool kernel3x3 = a.kernel[0] == 3 && a.kernel[1] == 3;
    const bool right_only = shift_kind(a.shifts + c0, b.count) == ShiftKind::kRightOnly;
    int8_t* dst = out + c0;
    if (gather) {
      kernel3x3 ? run_block_for_shifts<true, true>(a, b, right_only, image, dst)
                : run_block_for_shifts<true, false>(a, b, right_only, image, dst);
    } else {
      kernel3x3 ? run_block_for_shifts<false, true>(a, b, right_only, image, dst)
                : run_block_for_shifts<false, false>(a, b, right_only, image, dst);
    }
  }
}

}  // namespace cortex_m
}  // namespace kiln
#endif
