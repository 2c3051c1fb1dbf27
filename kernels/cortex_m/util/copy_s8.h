// Byte copies and fills for the kernels' gathers (im2col rows, padding): vector loops
// with Helium, where a call to newlib's byte-at-a-time memcpy would cost more than the
// products that use the bytes; the C library elsewhere.
#pragma once

#include <cstdint>
#include <cstring>

#include "kernels/cortex_m/util/flavour.h"

namespace kiln {
namespace cortex_m {

/// dst[i] = src[i] for i < n.
__attribute__((always_inline)) inline void copy_s8(int8_t* dst, const int8_t* src, int32_t n) {
#if defined(KILN_CM_MVE)
  // Whole vectors without a predicate (VPST costs an instruction per load and store),
  // then the rest with one.
  for (; n >= 16; n -= 16, src += 16, dst += 16) vstrbq_s8(dst, vldrbq_s8(src));
  if (n > 0) {
    const mve_pred16_t p = vctp8q(static_cast<uint32_t>(n));
    vstrbq_p_s8(dst, vldrbq_z_s8(src, p), p);
  }
#else
  std::memcpy(dst, src, static_cast<size_t>(n));
#endif
}

/// dst[i] = value for i < n.
__attribute__((always_inline)) inline void fill_s8(int8_t* dst, int8_t value, int32_t n) {
#if defined(KILN_CM_MVE)
  const int8x16_t v = vdupq_n_s8(value);
  for (int32_t i = 0; i < n; i += 16) vstrbq_p_s8(dst + i, v, vctp8q(static_cast<uint32_t>(n - i)));
#else
  std::memset(dst, value, static_cast<size_t>(n));
#endif
}

}  // namespace cortex_m
}  // namespace kiln
