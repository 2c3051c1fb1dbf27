// aten::repeat_interleave.Tensor_out(Tensor repeats, *, SymInt? output_size=None,
//     Tensor(a!) out)
//
// For a 1-D Int or Long tensor of counts, out (same dtype) holds index i repeats[i]
// times: [0, 0, 1, 2, 2, 2] for [2, 1, 3]. Its length, sum(repeats), depends on the
// data; output_size, when given, must equal it.
#include "kernels/portable/util/dtype_dispatch.h"

namespace kiln {
namespace portable {

void repeat_interleave_tensor_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "aten::repeat_interleave.Tensor_out";
  ArgReader r(ctx, kName, args, 4);
  Tensor* repeats = r.tensor(0);
  bool has_size = false;
  const int64_t output_size = r.optional_int(1, 0, &has_size);
  Tensor* out = r.tensor(2);
  if (!r.ok()) return;
  KILN_KERNEL_CHECK(ctx, repeats->dim() == 1, Error::InvalidArgument, kName, "repeats must be 1-D, got %s",
                    ShapeString(*repeats).c_str());
  KILN_KERNEL_CHECK(ctx, repeats->scalar_type() == ScalarType::Int || repeats->scalar_type() == ScalarType::Long,
                    Error::InvalidType, kName, "repeats has dtype %s, expected Int or Long",
                    scalar_type_name(repeats->scalar_type()));
  if (!check_same_dtype(ctx, kName, *repeats, *out, "repeats", "out")) return;
  int64_t total = 0;
  for (size_t i = 0; i < repeats->numel(); ++i) {
    const int64_t count = load_as<int64_t>(repeats->scalar_type(), repeats->const_data_ptr(), i);
    KILN_KERNEL_CHECK(ctx, count >= 0 && count <= INT32_MAX - total, Error::InvalidArgument, kName,
                      "repeats[%zu] = %lld is negative or makes the result too long", i, static_cast<long long>(count));
    total += count;
  }
  KILN_KERNEL_CHECK(ctx, !has_size || output_size == total, Error::InvalidArgument, kName,
                    "output_size %lld differs from sum(repeats) = %lld", static_cast<long long>(output_size),
                    static_cast<long long>(total));
  const SizesType size = static_cast<SizesType>(total);
  if (!resize_output(ctx, kName, *out, {&size, 1})) return;
  visit_dtype<kIntTypes>(out->scalar_type(), [&](auto tag) {
    using T = decltype(tag);
    T* o = out->mutable_data_ptr<T>();
    size_t k = 0;
    const size_t end = static_cast<size_t>(total);  // bounds the writes even if out overlaps repeats
    for (size_t i = 0; i < repeats->numel(); ++i) {
      const int64_t count = load_as<int64_t>(repeats->scalar_type(), repeats->const_data_ptr(), i);
      for (int64_t j = 0; j < count && k < end; ++j) o[k++] = static_cast<T>(i);
    }
  });
}

}  // namespace portable
}  // namespace kiln
