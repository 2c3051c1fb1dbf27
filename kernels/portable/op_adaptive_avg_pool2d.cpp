// aten::_adaptive_avg_pool2d.out(Tensor self, SymInt[2] output_size, *, Tensor(a!) out)
//
// Average pooling of each [H, W] plane (3-D or 4-D self) to output_size: out cell
// (i, j) averages rows [floor(i * H / OH), ceil((i + 1) * H / OH)) and the same for
// columns, so windows overlap when the sizes do not divide.
#include "kernels/portable/util/dtype_dispatch.h"

namespace kiln {
namespace portable {

namespace {

constexpr const char* kName = "aten::_adaptive_avg_pool2d.out";

int64_t window_start(int64_t o, int64_t in, int64_t out) { return (o * in) / out; }
int64_t window_end(int64_t o, int64_t in, int64_t out) { return ((o + 1) * in + out - 1) / out; }

template <typename T>
void adaptive_avg_pool(const T* in, T* out, int64_t planes, int64_t in_h, int64_t in_w, int64_t out_h, int64_t out_w) {
  for (int64_t p = 0; p < planes; ++p) {
    const T* x = in + p * in_h * in_w;
    for (int64_t i = 0; i < out_h; ++i) {
      const int64_t h0 = window_start(i, in_h, out_h), h1 = window_end(i, in_h, out_h);
      for (int64_t j = 0; j < out_w; ++j) {
        const int64_t w0 = window_start(j, in_w, out_w), w1 = window_end(j, in_w, out_w);
        double sum = 0;
        for (int64_t h = h0; h < h1; ++h) {
          for (int64_t w = w0; w < w1; ++w) sum += static_cast<double>(x[h * in_w + w]);
        }
        out[(p * out_h + i) * out_w + j] = static_cast<T>(sum / static_cast<double>((h1 - h0) * (w1 - w0)));
      }
    }
  }
}

}  // namespace

void adaptive_avg_pool2d_out(KernelContext& ctx, Span<EValue*> args) {
  ArgReader r(ctx, kName, args, 4);
  Tensor* in = r.tensor(0);
  const Span<const int64_t> output_size = r.int_list(1);
  Tensor* out = r.tensor(2);
  if (!r.ok()) return;
  KILN_KERNEL_CHECK(ctx, in->dim() == 3 || in->dim() == 4, Error::InvalidArgument, kName,
                    "self must be 3-D or 4-D, got %s", ShapeString(*in).c_str());
  KILN_KERNEL_CHECK(ctx, output_size.size() == 1 || output_size.size() == 2, Error::InvalidArgument, kName,
                    "output_size must have 1 or 2 entries, got %zu", output_size.size());
  const int64_t out_h = output_size[0];
  const int64_t out_w = output_size[output_size.size() - 1];
  const int64_t in_h = in->size(-2), in_w = in->size(-1);
  KILN_KERNEL_CHECK(ctx, out_h >= 0 && out_w >= 0 && out_h <= INT32_MAX && out_w <= INT32_MAX, Error::InvalidArgument,
                    kName, "output_size (%lld, %lld) is invalid", static_cast<long long>(out_h), static_cast<long long>(out_w));
  KILN_KERNEL_CHECK(ctx, (in_h > 0 && in_w > 0) || out_h * out_w == 0, Error::InvalidArgument, kName,
                    "cannot pool the empty planes of %s", ShapeString(*in).c_str());
  if (!check_same_dtype(ctx, kName, *in, *out, "self", "out")) return;
  SizesType sizes[4];
  int64_t planes = 1;
  for (int32_t d = 0; d < in->dim() - 2; ++d) {
    sizes[d] = in->size(d);
    planes *= in->size(d);
  }
  sizes[in->dim() - 2] = static_cast<SizesType>(out_h);
  sizes[in->dim() - 1] = static_cast<SizesType>(out_w);
  if (!resize_output(ctx, kName, *out, {sizes, static_cast<size_t>(in->dim())})) return;
  dispatch_dtype<kFloatTypes>(ctx, kName, in->scalar_type(), [&](auto tag) {
    using T = decltype(tag);
    adaptive_avg_pool<T>(in->const_data_ptr<T>(), out->mutable_data_ptr<T>(), planes, in_h, in_w, out_h, out_w);
  });
}

}  // namespace portable
}  // namespace kiln
