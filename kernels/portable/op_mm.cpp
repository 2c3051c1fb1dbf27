// aten::mm.out(Tensor self, Tensor mat2, *, Tensor(a!) out)
#include "kernels/portable/util/matmul.h"

namespace kiln {
namespace portable {

void mm_out(KernelContext& ctx, Span<EValue*> args) {
  static constexpr const char* kName = "aten::mm.out";
  ArgReader r(ctx, kName, args, 4);
  Tensor* a = r.tensor(0);
  Tensor* b = r.tensor(1);
  Tensor* out = r.tensor(2);
  if (!r.ok() || !check_matmul(ctx, kName, *a, *b, *out, 2)) return;
  if (out->scalar_type() == ScalarType::Float) {
    matmul_2d<float>(*a, *b, *out);
  } else {
    matmul_2d<double>(*a, *b, *out);
  }
}

}  // namespace portable
}  // namespace kiln
