// aten::upsample_nearest2d.vec_out(Tensor input, SymInt[]? output_size,
//     float[]? scale_factors, *, Tensor(a!) out)
//
// Source index = min(floor(dst * scale), in - 1) with scale = 1 / scale_factor when
// scale factors are given, else in / out — computed in float as PyTorch does, so that
// the same pixels are picked.
#include <cmath>

#include "kernels/portable/util/copy.h"
#include "kernels/portable/util/kernel_args.h"

namespace kiln {
namespace portable {

namespace {

constexpr const char* kName = "aten::upsample_nearest2d.vec_out";

template <typename E>
void upsample(const E* in, E* out, int64_t planes, int64_t in_h, int64_t in_w, int64_t out_h,
              int64_t out_w, float scale_h, float scale_w) {
  for (int64_t p = 0; p < planes; ++p) {
    const E* x = in + p * in_h * in_w;
    E* y = out + p * out_h * out_w;
    for (int64_t oh = 0; oh < out_h; ++oh) {
      int64_t ih = static_cast<int64_t>(std::floor(static_cast<float>(oh) * scale_h));
      ih = ih < in_h - 1 ? ih : in_h - 1;
      for (int64_t ow = 0; ow < out_w; ++ow) {
        int64_t iw = static_cast<int64_t>(std::floor(static_cast<float>(ow) * scale_w));
        iw = iw < in_w - 1 ? iw : in_w - 1;
        y[oh * out_w + ow] = x[ih * in_w + iw];
      }
    }
  }
}

}  // namespace

void upsample_nearest2d_vec_out(KernelContext& ctx, Span<EValue*> args) {
  ArgReader r(ctx, kName, args, 5);
  Tensor* in = r.tensor(0);
  bool has_size = false;
  bool has_scales = false;
  const Span<const int64_t> output_size = r.optional_int_list(1, &has_size);
  const Span<const double> scales = r.optional_double_list(2, &has_scales);
  Tensor* out = r.tensor(3);
  if (!r.ok()) return;
  KILN_KERNEL_CHECK(ctx, in->dim() == 4, Error::InvalidArgument, kName, "input must be 4-D, got %s",
                    ShapeString(*in).c_str());
  KILN_KERNEL_CHECK(ctx, has_size != has_scales, Error::InvalidArgument, kName,
                    "exactly one of output_size and scale_factors must be given");
  KILN_KERNEL_CHECK(ctx, (has_size ? output_size.size() : scales.size()) == 2, Error::InvalidArgument,
                    kName, "output_size / scale_factors must have 2 entries");
  if (!check_same_dtype(ctx, kName, *in, *out, "input", "out")) return;
  const int64_t in_h = in->size(2);
  const int64_t in_w = in->size(3);
  int64_t out_h = 0;
  int64_t out_w = 0;
  float scale_h = 0;
  float scale_w = 0;
  if (has_size) {
    out_h = output_size[0];
    out_w = output_size[1];
    KILN_KERNEL_CHECK(ctx, out_h > 0 && out_w > 0 && out_h <= INT32_MAX && out_w <= INT32_MAX,
                      Error::InvalidArgument, kName, "output size must be positive");
    scale_h = static_cast<float>(in_h) / static_cast<float>(out_h);
    scale_w = static_cast<float>(in_w) / static_cast<float>(out_w);
  } else {
    KILN_KERNEL_CHECK(ctx, scales[0] > 0 && scales[1] > 0, Error::InvalidArgument, kName,
                      "scale factors must be positive");
    out_h = static_cast<int64_t>(std::floor(static_cast<double>(in_h) * scales[0]));
    out_w = static_cast<int64_t>(std::floor(static_cast<double>(in_w) * scales[1]));
    scale_h = static_cast<float>(1.0 / scales[0]);
    scale_w = static_cast<float>(1.0 / scales[1]);
  }
  SizesType sizes[4] = {in->size(0), in->size(1), static_cast<SizesType>(out_h),
                        static_cast<SizesType>(out_w)};
  if (!resize_output(ctx, kName, *out, {sizes, 4})) return;
  if (out->numel() == 0 || in->numel() == 0) return;
  const int64_t planes = static_cast<int64_t>(in->size(0)) * in->size(1);
  switch (in->element_size()) {
    case 1: upsample(in->const_data_ptr<uint8_t>(), out->mutable_data_ptr<uint8_t>(), planes, in_h, in_w, out_h, out_w, scale_h, scale_w); break;
    case 2: upsample(in->const_data_ptr<uint16_t>(), out->mutable_data_ptr<uint16_t>(), planes, in_h, in_w, out_h, out_w, scale_h, scale_w); break;
    case 4: upsample(in->const_data_ptr<uint32_t>(), out->mutable_data_ptr<uint32_t>(), planes, in_h, in_w, out_h, out_w, scale_h, scale_w); break;
    case 8: upsample(in->const_data_ptr<uint64_t>(), out->mutable_data_ptr<uint64_t>(), planes, in_h, in_w, out_h, out_w, scale_h, scale_w); break;
    default:
      KILN_KERNEL_FAIL(ctx, Error::InvalidType, kName, "dtype %s is not supported",
                       scalar_type_name(in->scalar_type()));
  }
}

}  // namespace portable
}  // namespace kiln
