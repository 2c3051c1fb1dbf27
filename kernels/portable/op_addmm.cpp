// aten::addmm.out(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1,
//     Tensor(a!) out)
//
// out = beta * self + alpha * (mat1 @ mat2), self broadcast to [M, N] (nn.Linear's bias
// is [N]). With beta = 0, self is ignored (NaN in it does not propagate), as in PyTorch.
#include "kernels/portable/util/broadcast.h"
#include "kernels/portable/util/matmul.h"

namespace kiln {
namespace portable {

namespace {

template <typename T>
void addmm(const Tensor& bias, const Tensor& a, const Tensor& b, double beta, double alpha, Tensor& out) {
  matmul_2d<T>(a, b, out);
  T* o = out.mutable_data_ptr<T>();
  const T* c = bias.const_data_ptr<T>();
  const T tb = static_cast<T>(beta);
  const T ta = static_cast<T>(alpha);
  const size_t M = static_cast<size_t>(out.size(0));
  const size_t N = static_cast<size_t>(out.size(1));
  // Broadcast self as [M or 1, N or 1].
  const size_t rows = bias.dim() == 2 ? static_cast<size_t>(bias.size(0)) : 1;
  const size_t cols = bias.dim() >= 1 ? static_cast<size_t>(bias.size(-1)) : 1;
  for (size_t i = 0; i < M; ++i) {
    const T* c_row = c + (rows == 1 ? 0 : i * cols);
    T* o_row = o + i * N;
    if (beta == 0) {
      for (size_t j = 0; j < N; ++j) o_row[j] = ta * o_row[j];
    } else if (cols == 1) {
      for (size_t j = 0; j < N; ++j) o_row[j] = ta * o_row[j] + tb * c_row[0];
    } else {
      for (size_t j = 0; j < N; ++j) o_row[j] = ta * o_row[j] + tb * c_row[j];
    }
  }
}

}  // namespace

void addmm_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "aten::addmm.out";
  ArgReader r(ctx, kName, args, 7);
  Tensor* bias = r.tensor(0);
  Tensor* a = r.tensor(1);
  Tensor* b = r.tensor(2);
  const double beta = r.scalar(3);
  const double alpha = r.scalar(4);
  Tensor* out = r.tensor(5);
  if (!r.ok() || !check_matmul(ctx, kName, *a, *b, *out, 2)) return;
  if (!check_same_dtype(ctx, kName, *bias, *out, "self", "out")) return;
  KILN_KERNEL_CHECK(ctx, bias->dim() <= 2 && broadcasts_to(bias->sizes(), out->sizes()),
                    Error::InvalidArgument, kName, "self %s does not broadcast to %s",
                    ShapeString(*bias).c_str(), ShapeString(*out).c_str());
  KILN_KERNEL_CHECK(ctx, out->numel() == 0 || out->const_data_ptr() != bias->const_data_ptr(),
                    Error::InvalidArgument, kName, "out must not share memory with self");
  if (out->scalar_type() == ScalarType::Float) {
    addmm<float>(*bias, *a, *b, beta, alpha, *out);
  } else {
    addmm<double>(*bias, *a, *b, beta, alpha, *out);
  }
}

}  // namespace portable
}  // namespace kiln
