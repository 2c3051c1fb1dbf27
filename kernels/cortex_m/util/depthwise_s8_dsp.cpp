// depthwise_s8 (depthwise_s8.h) with the DSP extension. A depthwise convolution never
// sums two channels, so SMLAD (two products into one sum) has nothing to pair but taps of
// one channel, which would need PKHBT/PKHTB to build; SMLABB/SMLATT (one product each)
// take the channels as they come instead. Four output channels go at a time: per tap, one
// LDR of the four input channels, two SXTB16 split them into the even (0, 2) and odd
// (1, 3) halfword pairs, one LDRD loads the block's pre-widened weights in the same
// pairing, four multiply-accumulates: 8 instructions and a pointer step for 4 MACs.
//
// As with Helium, the accumulators start at bias + input_offset * (sum of the weights),
// and taps in the padding read the input zero point (from a word of four), so no tap adds
// an offset. Requantization is scalar, once per output (requantize_dsp.h: SMMULR and three
// instructions of rounding where the block's values allow it).
//
// A depth multiplier above one (output channel o reads input channel o / multiplier)
// assembles each tap's four input bytes with byte loads; a block of fewer than four
// channels reads the zero point for the missing ones.
#include "kernels/cortex_m/util/depthwise_s8.h"
#include "kernels/cortex_m/util/flavour.h"

#if defined(KILN_CM_DSP)
#include "kernels/cortex_m/util/requantize_dsp.h"

namespace kiln {
namespace cortex_m {
namespace {

constexpr int32_t kBlock = 4;
/// Taps a block's weights hold (7x7 and smaller kernels); larger ones run scalar.
constexpr int32_t kMaxTaps = 64;

struct Block {
  uint32_t weights[kMaxTaps][2];  // per tap: (w0, w2) and (w1, w3) as int16 halfword pairs
  int32_t terms[kBlock];
  FastRequant fast[kBlock];
  int32_t multiplier[kBlock];
  int32_t shift[kBlock];
  int32_t count;          // channels in the block
  int32_t input_channel;  // the block's first input channel
  int32_t offsets[kBlock];  // multiplier > 1: each channel's input channel minus input_channel
  bool use_fast;          // every channel takes requantize_fast
  uint32_t zero_point;    // four bytes of the input zero point
};

inline uint32_t pair(int32_t low, int32_t high) {
  return (static_cast<uint32_t>(low) & 0xFFFFu) | (static_cast<uint32_t>(high) << 16);
}

void prepare_block(const ConvArgs& a, int32_t multiplier, const int8_t* weight, const int32_t* bias, int32_t c0,
                   Block* b) {
  const int32_t channels = a.output.c;
  const int32_t taps = a.kernel[0] * a.kernel[1];
  b->count = channels - c0 < kBlock ? channels - c0 : kBlock;
  b->input_channel = c0 / multiplier;
  int32_t w[kBlock];
  int64_t largest_term = 0;
  int32_t sums[kBlock] = {0, 0, 0, 0};
  for (int32_t t = 0; t < taps; ++t) {
    for (int32_t i = 0; i < kBlock; ++i) {
      w[i] = i < b->count ? weight[static_cast<int64_t>(t) * channels + c0 + i] : 0;
      sums[i] += w[i];
    }
    b->weights[t][0] = pair(w[0], w[2]);
    b->weights[t][1] = pair(w[1], w[3]);
  }
  b->use_fast = true;
  for (int32_t i = 0; i < kBlock; ++i) {
    const int32_t c = c0 + (i < b->count ? i : b->count - 1);
    b->terms[i] = (bias != nullptr && i < b->count ? bias[c] : 0) + a.input_offset * sums[i];
    b->multiplier[i] = a.multipliers[c];
    b->shift[i] = a.shifts[c];
    b->offsets[i] = c / multiplier - b->input_channel;
    const int32_t right = -a.shifts[c];
    b->fast[i] = {a.multipliers[c], right, right >= 1 && right <= 31 ? 1 << (right - 1) : 0};
    const int64_t term = b->terms[i] < 0 ? -static_cast<int64_t>(b->terms[i]) : b->terms[i];
    if (term > largest_term) largest_term = term;
  }
  // |acc| <= |term| + taps * 128 * 128: each product of two int8 is at most 2^14.
  const int64_t bound = largest_term + static_cast<int64_t>(taps) * 16384;
  for (int32_t i = 0; i < b->count; ++i) b->use_fast = b->use_fast && requantize_fast_ok(b->shift[i], bound);
  const uint32_t zp = static_cast<uint8_t>(-a.input_offset);
  b->zero_point = zp * 0x01010101u;
}

/// The four input bytes of a block at `x` (the block's first input channel of a pixel):
/// one word, or (kGathered) byte by byte with each channel's offset, the zero point past
/// the block's channels.
template <bool kGathered>
__attribute__((always_inline)) inline uint32_t load_x(const int8_t* x, const Block& b) {
  if (!kGathered) return dsp_load_word(x);
  uint32_t word = 0;
  for (int32_t i = 0; i < kBlock; ++i) {
    const uint32_t v = i < b.count ? static_cast<uint8_t>(x[b.offsets[i]]) : (b.zero_point & 0xFFu);
    word |= v << (8 * i);
  }
  return word;
}

struct Acc {
  int32_t a0, a1, a2, a3;
};

__attribute__((always_inline)) inline void tap(Acc& acc, uint32_t xw, const uint32_t* w) {
  const uint32_t x02 = __sxtb16(xw);
  const uint32_t x13 = dsp_sxtb16_odd((xw));
  acc.a0 = __smlabb(x02, w[0], acc.a0);
  acc.a2 = __smlatt(x02, w[0], acc.a2);
  acc.a1 = __smlabb(x13, w[1], acc.a1);
  acc.a3 = __smlatt(x13, w[1], acc.a3);
}

template <bool kFast, bool kClamp>
__attribute__((always_inline)) inline int8_t output(int32_t acc, const Block& b, int32_t i, const ConvArgs& a) {
  const int32_t y = kFast ? requantize_fast(acc, b.fast[i]) : requantize(acc, b.multiplier[i], b.shift[i]);
  return to_output<kClamp>(y, a.output_offset, a.activation_min, a.activation_max);
}

/// The four outputs of a pixel (kFull: all four channels exist; else the first count).
template <bool kFull, bool kFast, bool kClamp>
__attribute__((always_inline)) inline void finish(const Acc& acc, const Block& b, const ConvArgs& a, int8_t* dst) {
  if (kFull) {
    dst[0] = output<kFast, kClamp>(acc.a0, b, 0, a);
    dst[1] = output<kFast, kClamp>(acc.a1, b, 1, a);
    dst[2] = output<kFast, kClamp>(acc.a2, b, 2, a);
    dst[3] = output<kFast, kClamp>(acc.a3, b, 3, a);
    return;
  }
  const int32_t v[kBlock] = {acc.a0, acc.a1, acc.a2, acc.a3};
  for (int32_t i = 0; i < b.count; ++i) dst[i] = output<kFast, kClamp>(v[i], b, i, a);
}

/// The taps of one pixel whose window lies inside the image; `x` its top-left tap.
template <bool kGathered, bool kKernel3x3>
__attribute__((always_inline)) inline void interior_taps(Acc& acc, const int8_t* x, int32_t col_step,
                                                         int32_t row_step, int32_t kh, int32_t kw, const Block& b) {
  const uint32_t* w = b.weights[0];
  if (kKernel3x3) {
    // Unrolled: the weights at immediate offsets, no loop counters.
#pragma GCC unroll 3
    for (int32_t y = 0; y < 3; ++y, x += row_step, w += 6) {
      tap(acc, load_x<kGathered>(x, b), w);
      tap(acc, load_x<kGathered>(x + col_step, b), w + 2);
      tap(acc, load_x<kGathered>(x + 2 * col_step, b), w + 4);
    }
    return;
  }
  for (int32_t y = 0; y < kh; ++y, x += row_step) {
    const int8_t* t = x;
    for (int32_t i = 0; i < kw; ++i, t += col_step, w += 2) tap(acc, load_x<kGathered>(t, b), w);
  }
}

/// Output pixel (oy, ox), whose window reaches into the padding: those taps read the zero
/// point. A function of its own (the border is a small part of the pixels): the interior
/// loop keeps its registers.
template <bool kGathered, bool kFast, bool kClamp>
__attribute__((noinline)) KILN_CM_HOT void border_pixel(const ConvArgs& a, const Block& b, const int8_t* image,
                                                        int32_t oy, int32_t ox, int8_t* dst) {
  Acc acc{b.terms[0], b.terms[1], b.terms[2], b.terms[3]};
  const uint32_t* w = b.weights[0];
  const int32_t iy0 = oy * a.stride[0] - a.padding[0], ix0 = ox * a.stride[1] - a.padding[1];
  for (int32_t y = 0, iy = iy0; y < a.kernel[0]; ++y, iy += a.dilation[0]) {
    const bool row_inside = iy >= 0 && iy < a.in.h;
    for (int32_t i = 0, ix = ix0; i < a.kernel[1]; ++i, ix += a.dilation[1], w += 2) {
      const bool inside = row_inside && ix >= 0 && ix < a.in.w;
      tap(acc, inside ? load_x<kGathered>(image + (iy * a.in.w + ix) * a.in.c + b.input_channel, b) : b.zero_point,
          w);
    }
  }
  finish<!kGathered, kFast, kClamp>(acc, b, a, dst);
}

template <bool kGathered, bool kKernel3x3, bool kFast, bool kClamp>
KILN_CM_HOT void run_block(const ConvArgs& a, const Block& b, const int8_t* image, int8_t* out) {
  const int32_t cin = a.in.c, cout = a.output.c, kh = a.kernel[0], kw = a.kernel[1];
  const int32_t col_step = a.dilation[1] * cin;
  const int32_t row_step = a.dilation[0] * a.in.w * cin;
  const int32_t pixel_step = a.stride[1] * cin;
  const InteriorRange rows = interior_range(a.in.h, a.output.h, kh, a.stride[0], a.padding[0], a.dilation[0]);
  const InteriorRange cols = interior_range(a.in.w, a.output.w, kw, a.stride[1], a.padding[1], a.dilation[1]);
  for (int32_t oy = 0; oy < a.output.h; ++oy) {
    const bool inside_rows = oy >= rows.first && oy < rows.last;
    const int32_t first = inside_rows ? cols.first : a.output.w;
    const int32_t last = inside_rows ? cols.last : a.output.w;
    int8_t* dst = out + oy * a.output.w * cout;
    int32_t ox = 0;
    for (; ox < first; ++ox, dst += cout) border_pixel<kGathered, kFast, kClamp>(a, b, image, oy, ox, dst);
    const int8_t* x = image + ((oy * a.stride[0] - a.padding[0]) * a.in.w + ox * a.stride[1] - a.padding[1]) * cin +
                      b.input_channel;
    for (; ox < last; ++ox, dst += cout, x += pixel_step) {
      Acc acc{b.terms[0], b.terms[1], b.terms[2], b.terms[3]};
      interior_taps<kGathered, kKernel3x3>(acc, x, col_step, row_step, kh, kw, b);
      finish<!kGathered, kFast, kClamp>(acc, b, a, dst);
    }
    for (; ox < a.output.w; ++ox, dst += cout) border_pixel<kGathered, kFast, kClamp>(a, b, image, oy, ox, dst);
  }
}

template <bool kGathered, bool kKernel3x3>
void run_block_for(const ConvArgs& a, const Block& b, const int8_t* image, int8_t* out) {
  const bool clamp = a.activation_min > -128 || a.activation_max < 127;
  if (b.use_fast) {
    clamp ? run_block<kGathered, kKernel3x3, true, true>(a, b, image, out)
          : run_block<kGathered, kKernel3x3, true, false>(a, b, image, out);
  } else {
    clamp ? run_block<kGathered, kKernel3x3, false, true>(a, b, image, out)
          : run_block<kGathered, kKernel3x3, false, false>(a, b, image, out);
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
    const bool kernel3x3 = a.kernel[0] == 3 && a.kernel[1] == 3;
    if (multiplier != 1 || b.count < kBlock) {
      kernel3x3 ? run_block_for<true, true>(a, b, image, out + c0) : run_block_for<true, false>(a, b, image, out + c0);
    } else {
      kernel3x3 ? run_block_for<false, true>(a, b, image, out + c0)
                : run_block_for<false, false>(a, b, image, out + c0);
    }
  }
}

}  // namespace cortex_m
}  // namespace kiln
#endif
