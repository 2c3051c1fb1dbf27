// aten::avg_pool2d.out(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0,
//     bool ceil_mode=False, bool count_include_pad=True, int? divisor_override=None,
//     *, Tensor(a!) out)
//
// The divisor follows PyTorch: divisor_override if given; else the window size clipped
// to the padded input (count_include_pad) or to the input itself.
#include "kernels/portable/util/pool2d.h"

namespace kiln {
namespace portable {

namespace {

constexpr const char* kName = "aten::avg_pool2d.out";

template <typename T>
void avg_pool(const Pool2dShape& s, const T* in, T* out, bool count_include_pad, int64_t divisor_override) {
  for (int64_t p = 0; p < s.planes; ++p) {
    const T* x = in + p * s.in_h * s.in_w;
    for (int64_t oh = 0; oh < s.out_h; ++oh) {
      for (int64_t ow = 0; ow < s.out_w; ++ow) {
        int64_t h0 = oh * s.stride_h - s.pad_h;
        int64_t w0 = ow * s.stride_w - s.pad_w;
        int64_t h1 = h0 + s.kernel_h < s.in_h + s.pad_h ? h0 + s.kernel_h : s.in_h + s.pad_h;
        int64_t w1 = w0 + s.kernel_w < s.in_w + s.pad_w ? w0 + s.kernel_w : s.in_w + s.pad_w;
        const int64_t padded_count = (h1 - h0) * (w1 - w0);
        h0 = h0 < 0 ? 0 : h0;
        w0 = w0 < 0 ? 0 : w0;
        h1 = h1 > s.in_h ? s.in_h : h1;
        w1 = w1 > s.in_w ? s.in_w : w1;
        double sum = 0;
        for (int64_t h = h0; h < h1; ++h) {
          for (int64_t w = w0; w < w1; ++w) sum += static_cast<double>(x[h * s.in_w + w]);
        }
        int64_t divisor = divisor_override;
        if (divisor == 0) divisor = count_include_pad ? padded_count : (h1 - h0) * (w1 - w0);
        const int64_t o = (p * s.out_h + oh) * s.out_w + ow;
        out[o] = divisor > 0 ? static_cast<T>(sum / static_cast<double>(divisor)) : static_cast<T>(0);
      }
    }
  }
}

}  // namespace

void avg_pool2d_out(KernelContext& ctx, Span<EValue*> args) {
  ArgReader r(ctx, kName, args, 9);
  Tensor* in = r.tensor(0);
  const Span<const int64_t> kernel = r.int_list(1);
  const Span<const int64_t> stride = r.int_list(2);
  const Span<const int64_t> padding = r.int_list(3);
  const bool ceil_mode = r.bool_value(4);
  const bool count_include_pad = r.bool_value(5);
  bool has_divisor = false;
  const int64_t divisor = r.optional_int(6, 0, &has_divisor);
  Tensor* out = r.tensor(7);
  if (!r.ok()) return;
  KILN_KERNEL_CHECK(ctx, !has_divisor || divisor != 0, Error::InvalidArgument, kName,
                    "divisor_override must not be 0");
  const int64_t one[1] = {1};
  Pool2dShape s{};
  if (!check_same_dtype(ctx, kName, *in, *out, "self", "out") ||
      !make_pool2d_shape(ctx, kName, *in, kernel, stride, padding, {one, 1}, ceil_mode, *out, &s)) {
    return;
  }
  if (in->scalar_type() == ScalarType::Float) {
    avg_pool<float>(s, in->const_data_ptr<float>(), out->mutable_data_ptr<float>(), count_include_pad, divisor);
  } else if (in->scalar_type() == ScalarType::Double) {
    avg_pool<double>(s, in->const_data_ptr<double>(), out->mutable_data_ptr<double>(), count_include_pad, divisor);
  } else {
    KILN_KERNEL_FAIL(ctx, Error::InvalidType, kName, "dtype %s is not supported (Float, Double)",
                     scalar_type_name(in->scalar_type()));
  }
}

}  // namespace portable
}  // namespace kiln
