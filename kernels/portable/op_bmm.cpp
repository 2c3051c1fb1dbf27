// aten::bmm.out(Tensor self, Tensor mat2, *, Tensor(a!) out)
//
// [B, M, K] x [B, K, N] -> [B, M, N], one matrix multiply per batch entry.
#include "kernels/portable/util/matmul.h"

namespace kiln {
namespace portable {

namespace {
template <typename T>
void batched(const Tensor& a, const Tensor& b, Tensor& out) {
  const size_t batch = static_cast<size_t>(a.size(0));
  const size_t M = static_cast<size_t>(a.size(1));
  const size_t K = static_cast<size_t>(a.size(2));
  const size_t N = static_cast<size_t>(b.size(2));
  for (size_t i = 0; i < batch; ++i) {
    gemm<T>(M, N, K, a.const_data_ptr<T>() + i * M * K, K, b.const_data_ptr<T>() + i * K * N, N,
            out.mutable_data_ptr<T>() + i * M * N, N);
  }
}
}  // namespace

void bmm_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "aten::bmm.out";
  ArgReader r(ctx, kName, args, 4);
  Tensor* a = r.tensor(0);
  Tensor* b = r.tensor(1);
  Tensor* out = r.tensor(2);
  if (!r.ok() || !check_matmul(ctx, kName, *a, *b, *out, 3)) return;
  if (out->scalar_type() == ScalarType::Float) {
    batched<float>(*a, *b, *out);
  } else {
    batched<double>(*a, *b, *out);
  }
}

}  // namespace portable
}  // namespace kiln
