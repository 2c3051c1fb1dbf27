// depthwise_s8 (depthwise_s8.h) with the DSP extension: placeholder port of the previous
// four-channel SMLABB/SMLATT loop (replaced below).
#include "kernels/cortex_m/util/depthwise_s8.h"
#include "kernels/cortex_m/util/flavour.h"

#if defined(KILN_CM_DSP)
#include "kernels/cortex_m/util/requantize.h"

namespace kiln {
namespace cortex_m {

void depthwise_s8(const ConvArgs& a, int32_t multiplier, const int8_t* image, const int8_t* weight,
                  const int32_t* bias, int8_t* out) {
  depthwise_s8_scalar(a, multiplier, image, weight, bias, out);
}

}  // namespace cortex_m
}  // namespace kiln
#endif
