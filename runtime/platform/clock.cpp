// Tick conversion shared by every PAL (the PAL only reports its tick rate).
#include "runtime/platform/platform.h"

namespace kiln {

uint64_t ticks_to_ns(uint64_t ticks) {
  uint64_t numerator = 1;
  uint64_t denominator = 1;
  kiln_pal_ticks_to_ns(&numerator, &denominator);
  if (denominator == 0) return 0;
  if (numerator == denominator) return ticks;
  // Split the product so that long runs do not overflow 64 bits.
  const uint64_t whole = ticks / denominator;
  const uint64_t rest = ticks % denominator;
  return whole * numerator + rest * numerator / denominator;
}

}  // namespace kiln
