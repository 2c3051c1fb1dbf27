#include "backends/arm/vnpu/decode_common.h"

#include "runtime/platform/log.h"

namespace kiln::vnpu {

int64_t elem_min(ElemType t) {
  switch (t) {
    case ElemType::U8: case ElemType::U16: return 0;
    case ElemType::S8: return -128;
    case ElemType::S16: return -32768;
    case ElemType::S32: return INT32_MIN;
    default: return -(int64_t{1} << 47);  // 64-bit maps hold 48-bit accumulators
  }
}

int64_t elem_max(ElemType t) {
  switch (t) {
    case ElemType::U8: return 255;
    case ElemType::S8: return 127;
    case ElemType::U16: return 65535;
    case ElemType::S16: return 32767;
    case ElemType::S32: return INT32_MAX;
    default: return (int64_t{1} << 47) - 1;
  }
}

int32_t zero_point_of(ElemType type, uint16_t raw) {
  if (elem_bytes(type) >= 4) return 0;
  return elem_signed(type) ? static_cast<int16_t>(raw) : static_cast<int32_t>(raw);
}

Error decode_upscale(uint32_t field, UpscaleMode* mode) {
  const uint32_t m = field & 3u;
  if (m > 2) {
    KILN_LOG(Error, "IFM upscale mode %u is reserved", m);
    return Error::NpuInvalidRegister;
  }
  *mode = static_cast<UpscaleMode>(m);
  return Error::Ok;
}

namespace {
constexpr uint32_t kMaxKernelHeight = 256;
constexpr uint64_t kMaxKernelArea = 256 * 256;
}  // namespace

Error finish_kernel(uint32_t height_m1, uint32_t width_m1, uint32_t pad_top, uint32_t pad_left,
                    uint32_t pad_bottom, uint32_t pad_right, KernelGeometry* k) {
  if (width_m1 % k->dilation_x != 0 || height_m1 % k->dilation_y != 0) {
    KILN_LOG(Error, "kernel extent %ux%u is not a multiple of the dilation %ux%u", height_m1 + 1,
             width_m1 + 1, k->dilation_y, k->dilation_x);
    return Error::NpuInvalidRegister;
  }
  k->width = width_m1 / k->dilation_x + 1u;
  k->height = height_m1 / k->dilation_y + 1u;
  k->pad_top = static_cast<int32_t>(pad_top);
  k->pad_left = static_cast<int32_t>(pad_left);
  k->pad_bottom = static_cast<int32_t>(pad_bottom);
  k->pad_right = static_cast<int32_t>(pad_right);
  // Kernel extents as Vela bounds pooling (regor's constraints: height at most 256, area at
  // most 256 x 256): it runs a reduction over a long axis as a 1xN pooling (a softmax's row
  // sums over 197 keys: 1x197). Convolutions' own limit is IfmRows::init's.
  if (k->height > kMaxKernelHeight || uint64_t{k->height} * k->width > kMaxKernelArea || pad_top > 255 ||
      pad_left > 255 || pad_bottom > 255 || pad_right > 255) {
    KILN_LOG(Error, "kernel %ux%u / padding t%u l%u b%u r%u out of range", k->height, k->width,
             pad_top, pad_left, pad_bottom, pad_right);
    return Error::NpuInvalidRegister;
  }
  return Error::Ok;
}

Error check_shift(const Scaling& s, const char* what) {
  // TOSA allows shifts up to 62; at 63 the rounding term 2^62 plus the double-rounding step
  // leaves the 64-bit range the NPU's scaling unit works in.
  if (s.shift > 62 || s.double_round > 30) {
    KILN_LOG(Error, "%s shift %u (double-round %u) is out of range (at most 62 and 30)", what,
             s.shift, s.double_round);
    return Error::NpuInvalidRegister;
  }
  return Error::Ok;
}

}  // namespace kiln::vnpu
