// gemm_s8 (gemm_s8.h) with the DSP extension (temporary: the previous four-row SMLAD loop).
#include "kernels/cortex_m/util/flavour.h"
#include "kernels/cortex_m/util/gemm_s8.h"

#if defined(KILN_CM_DSP)
#include "kernels/cortex_m/util/requantize.h"

namespace kiln {
namespace cortex_m {

KILN_CM_HOT int32_t sum_s8(const int8_t* x, int32_t n) {
  int32_t sum = 0;
  int32_t i = 0;
  // SXTAB16 adds bytes 0/2 and 1/3 sign-extended into two halfword sums; SMUAD by
  // 0x00010001 then adds the halves.
  for (; i + 4 <= n; i += 4) {
    const uint32_t w = dsp_load_word(x + i);
    const uint32_t pairs = __sxtab16(__sxtb16(w), dsp_ror8(w));
    sum += __smuad(pairs, 0x00010001u);
  }
  for (; i < n; ++i) sum += x[i];
  return sum;
}

size_t gemm_scratch_bytes(int32_t /*depth*/) { return 0; }

void gemm_s8(const int8_t* a, int32_t rows, int32_t a_row_stride, const GemmColumns& k, int32_t b_offset,
             int8_t* out, int32_t out_row_stride, int8_t* /*scratch*/) {
  gemm_s8_scalar(a, rows, a_row_stride, k, b_offset, out, out_row_stride);
}

}  // namespace cortex_m
}  // namespace kiln
#endif
