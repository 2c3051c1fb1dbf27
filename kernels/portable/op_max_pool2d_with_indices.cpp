// aten::max_pool2d_with_indices.out(Tensor self, int[2] kernel_size, int[2] stride=[],
//     int[2] padding=0, int[2] dilation=1, bool ceil_mode=False, *, Tensor(a!) out,
//     Tensor(b!) indices)
//
// indices (Long) hold each maximum's flat position within its input plane (h * W + w),
// as in PyTorch. Padding never wins; NaN does (it propagates).
#include "kernels/portable/util/dtype_dispatch.h"
#include "kernels/portable/util/pool2d.h"

namespace kiln {
namespace portable {

namespace {

constexpr const char* kName = "aten::max_pool2d_with_indices.out";

template <typename T>
void max_pool(const Pool2dShape& s, const T* in, T* out, int64_t* indices) {
  for (int64_t p = 0; p < s.planes; ++p) {
    const T* x = in + p * s.in_h * s.in_w;
    for (int64_t oh = 0; oh < s.out_h; ++oh) {
      for (int64_t ow = 0; ow < s.out_w; ++ow) {
        const int64_t h0 = oh * s.stride_h - s.pad_h;
        const int64_t w0 = ow * s.stride_w - s.pad_w;
        bool found = false;
        T best = T{};
        int64_t best_index = 0;
        for (int64_t kh = 0; kh < s.kernel_h; ++kh) {
          const int64_t h = h0 + kh * s.dilation_h;
          if (h < 0 || h >= s.in_h) continue;
          for (int64_t kw = 0; kw < s.kernel_w; ++kw) {
            const int64_t w = w0 + kw * s.dilation_w;
            if (w < 0 || w >= s.in_w) continue;
            const T v = x[h * s.in_w + w];
            if (!found || v > best || v != v) {
              best = v;
              best_index = h * s.in_w + w;
              found = true;
            }
          }
        }
        const int64_t o = (p * s.out_h + oh) * s.out_w + ow;
        out[o] = best;
        indices[o] = best_index;
      }
    }
  }
}

}  // namespace

void max_pool2d_with_indices_out(KernelContext& ctx, Span<EValue*> args) {
  ArgReader r(ctx, kName, args, 9);
  Tensor* in = r.tensor(0);
  const Span<const int64_t> kernel = r.int_list(1);
  const Span<const int64_t> stride = r.int_list(2);
  const Span<const int64_t> padding = r.int_list(3);
  const Span<const int64_t> dilation = r.int_list(4);
  const bool ceil_mode = r.bool_value(5);
  Tensor* out = r.tensor(6);
  Tensor* indices = r.tensor(7);
  if (!r.ok()) return;
  Pool2dShape s{};
  if (!check_same_dtype(ctx, kName, *in, *out, "self", "out") ||
      !check_dtype(ctx, kName, *indices, ScalarType::Long, "indices") ||
      !make_pool2d_shape(ctx, kName, *in, kernel, stride, padding, dilation, ceil_mode, *out, &s) ||
      !resize_output_like(ctx, kName, *indices, *out)) {
    return;
  }
  dispatch_dtype<kRealTypes>(ctx, kName, in->scalar_type(), [&](auto tag) {
    using T = decltype(tag);
    max_pool<T>(s, in->const_data_ptr<T>(), out->mutable_data_ptr<T>(),
                indices->mutable_data_ptr<int64_t>());
  });
}

}  // namespace portable
}  // namespace kiln
