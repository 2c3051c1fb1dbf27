// Which instruction set the Cortex-M kernels are compiled for.
//
// One library, three flavours, chosen at build time from the core the compiler targets
// (TARGET_CPU sets -mcpu, and with it the ACLE feature macros):
//   KILN_CM_MVE       Helium (M-profile Vector Extension, integer): Cortex-M55, M85
//   KILN_CM_DSP       the DSP extension's SIMD32 instructions: Cortex-M4, M7, M33
//   (neither)         portable C++: the host and any other core
// KILN_CORTEX_M_FLAVOUR_PORTABLE / _DSP (set by the CMake option KILN_CORTEX_M_FLAVOUR)
// force a lesser flavour on a core that has more, e.g. to compare them on one M55.
#pragma once

#if defined(KILN_CORTEX_M_FLAVOUR_PORTABLE)
// Portable C++ on any core.
#elif defined(__ARM_FEATURE_MVE) && (__ARM_FEATURE_MVE & 1) && !defined(KILN_CORTEX_M_FLAVOUR_DSP)
#define KILN_CM_MVE 1
#include <arm_mve.h>
#elif defined(__ARM_FEATURE_DSP) && (__ARM_FEATURE_DSP == 1)
#define KILN_CM_DSP 1
#include <arm_acle.h>
#endif

namespace kiln {
namespace cortex_m {

/// The flavour compiled in, for logs and benchmarks: "mve", "dsp" or "portable".
inline const char* kernel_flavour() {
#if defined(KILN_CM_MVE)
  return "mve";
#elif defined(KILN_CM_DSP)
  return "dsp";
#else
  return "portable";
#endif
}

}  // namespace cortex_m
}  // namespace kiln

#if defined(KILN_CM_DSP)
#include <cstdint>
#include <cstring>

namespace kiln {
namespace cortex_m {

/// Four int8 from any address, as one word for the SIMD32 instructions.
inline uint32_t dsp_load_word(const int8_t* p) {
  uint32_t w;
  std::memcpy(&w, p, 4);
  return w;
}

/// `x` rotated right by 8: SXTB16 of it gives bytes 1 and 3.
inline uint32_t dsp_ror8(uint32_t x) { return (x >> 8) | (x << 24); }

/// Bytes 1 and 3 of `x` sign-extended into two halfwords: SXTB16 with its own rotation,
/// one instruction (GCC 12 does not fold a rotate into __sxtb16's operand).
__attribute__((always_inline)) inline uint32_t dsp_sxtb16_odd(uint32_t x) {
  uint32_t r;
  __asm__("sxtb16 %0, %1, ror #8" : "=r"(r) : "r"(x));
  return r;
}

}  // namespace cortex_m
}  // namespace kiln
#endif

// Hot loops are compiled for speed even in size-optimised (-Os) firmware, without GCC's
// scheduling before register allocation: it hoists the loads of an unrolled loop to its
// top, which needs more than the M55's eight Q registers and spills to the stack.
#if defined(__GNUC__) && !defined(__clang__)
#define KILN_CM_HOT __attribute__((optimize("O2", "no-schedule-insns")))
#else
#define KILN_CM_HOT
#endif
