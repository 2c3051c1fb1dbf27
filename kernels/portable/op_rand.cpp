// aten::rand.out(SymInt[] size, *, Tensor(a!) out)
// aten::randn.out(SymInt[] size, *, Tensor(a!) out)
//
// Uniform [0, 1) and standard normal values from the portable library's deterministic
// stream (util/random.h): the same numbers on every run, not PyTorch's.
#include "kernels/portable/util/dtype_dispatch.h"
#include "kernels/portable/util/random.h"
#include "kernels/portable/util/shape_args.h"

namespace kiln {
namespace portable {

namespace {

template <typename Draw>
void random_kernel(KernelContext& ctx, const char* name, Span<EValue*> args, Draw draw) {
  ArgReader r(ctx, name, args, 3);
  const Span<const int64_t> size = r.int_list(0);
  Tensor* out = r.tensor(1);
  if (!r.ok() || !resize_to_size_list(ctx, name, size, *out)) return;
  dispatch_dtype<kFloatTypes>(ctx, name, out->scalar_type(), [&](auto tag) {
    using T = decltype(tag);
    T* o = out->mutable_data_ptr<T>();
    for (size_t i = 0; i < out->numel(); ++i) o[i] = draw(T{});
  });
}

}  // namespace

void rand_out(KernelContext& ctx, Span<EValue*> args) {
  random_kernel(ctx, "aten::rand.out", args, [](auto tag) { return random_uniform<decltype(tag)>(); });
}

void randn_out(KernelContext& ctx, Span<EValue*> args) {
  random_kernel(ctx, "aten::randn.out", args,
                [](auto tag) { return static_cast<decltype(tag)>(random_normal()); });
}

}  // namespace portable
}  // namespace kiln
