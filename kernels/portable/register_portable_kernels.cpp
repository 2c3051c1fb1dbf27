// The table of portable kernels. Keep it in sync with op_table.yaml, from which a later
// code generator will produce this file.
#include "kernels/portable/register_portable_kernels.h"

#include "runtime/kernel/operator_registry.h"

namespace kiln {
namespace portable {

void add_out(KernelContext& ctx, Span<EValue*> args);
void add_scalar_out(KernelContext& ctx, Span<EValue*> args);
void sub_out(KernelContext& ctx, Span<EValue*> args);
void sub_scalar_out(KernelContext& ctx, Span<EValue*> args);
void mul_out(KernelContext& ctx, Span<EValue*> args);
void mul_scalar_out(KernelContext& ctx, Span<EValue*> args);
void div_out(KernelContext& ctx, Span<EValue*> args);
void div_scalar_out(KernelContext& ctx, Span<EValue*> args);
void minimum_out(KernelContext& ctx, Span<EValue*> args);
void maximum_out(KernelContext& ctx, Span<EValue*> args);
void relu_out(KernelContext& ctx, Span<EValue*> args);
void hardtanh_out(KernelContext& ctx, Span<EValue*> args);
void clamp_out(KernelContext& ctx, Span<EValue*> args);
void sigmoid_out(KernelContext& ctx, Span<EValue*> args);
void tanh_out(KernelContext& ctx, Span<EValue*> args);
void hardswish_out(KernelContext& ctx, Span<EValue*> args);
void hardsigmoid_out(KernelContext& ctx, Span<EValue*> args);
void leaky_relu_out(KernelContext& ctx, Span<EValue*> args);
void gelu_out(KernelContext& ctx, Span<EValue*> args);
void exp_out(KernelContext& ctx, Span<EValue*> args);
void log_out(KernelContext& ctx, Span<EValue*> args);
void sqrt_out(KernelContext& ctx, Span<EValue*> args);
void rsqrt_out(KernelContext& ctx, Span<EValue*> args);
void neg_out(KernelContext& ctx, Span<EValue*> args);
void abs_out(KernelContext& ctx, Span<EValue*> args);
void pow_tensor_scalar_out(KernelContext& ctx, Span<EValue*> args);
void gt_scalar_out(KernelContext& ctx, Span<EValue*> args);
void lt_scalar_out(KernelContext& ctx, Span<EValue*> args);
void eq_scalar_out(KernelContext& ctx, Span<EValue*> args);
void where_self_out(KernelContext& ctx, Span<EValue*> args);
void softmax_out(KernelContext& ctx, Span<EValue*> args);
void log_softmax_out(KernelContext& ctx, Span<EValue*> args);
void convolution_out(KernelContext& ctx, Span<EValue*> args);
void native_batch_norm_legit_no_training_out(KernelContext& ctx, Span<EValue*> args);
void native_layer_norm_out(KernelContext& ctx, Span<EValue*> args);
void max_pool2d_with_indices_out(KernelContext& ctx, Span<EValue*> args);
void avg_pool2d_out(KernelContext& ctx, Span<EValue*> args);
void mean_out(KernelContext& ctx, Span<EValue*> args);
void sum_intlist_out(KernelContext& ctx, Span<EValue*> args);
void amax_out(KernelContext& ctx, Span<EValue*> args);
void argmax_out(KernelContext& ctx, Span<EValue*> args);
void mm_out(KernelContext& ctx, Span<EValue*> args);
void bmm_out(KernelContext& ctx, Span<EValue*> args);
void addmm_out(KernelContext& ctx, Span<EValue*> args);
void view_copy_out(KernelContext& ctx, Span<EValue*> args);
void permute_copy_out(KernelContext& ctx, Span<EValue*> args);
void expand_copy_out(KernelContext& ctx, Span<EValue*> args);
void cat_out(KernelContext& ctx, Span<EValue*> args);
void slice_copy_tensor_out(KernelContext& ctx, Span<EValue*> args);
void select_copy_int_out(KernelContext& ctx, Span<EValue*> args);
void squeeze_copy_dims_out(KernelContext& ctx, Span<EValue*> args);
void squeeze_copy_dim_out(KernelContext& ctx, Span<EValue*> args);
void unsqueeze_copy_out(KernelContext& ctx, Span<EValue*> args);
void clone_out(KernelContext& ctx, Span<EValue*> args);
void alias_copy_out(KernelContext& ctx, Span<EValue*> args);
void to_copy_out(KernelContext& ctx, Span<EValue*> args);
void to_dim_order_copy_out(KernelContext& ctx, Span<EValue*> args);
void full_out(KernelContext& ctx, Span<EValue*> args);
void constant_pad_nd_out(KernelContext& ctx, Span<EValue*> args);
void upsample_nearest2d_vec_out(KernelContext& ctx, Span<EValue*> args);
void et_view_default(KernelContext& ctx, Span<EValue*> args);
void quantize_per_tensor_out(KernelContext& ctx, Span<EValue*> args);
void dequantize_per_tensor_out(KernelContext& ctx, Span<EValue*> args);
void quantize_per_channel_out(KernelContext& ctx, Span<EValue*> args);
void dequantize_per_channel_out(KernelContext& ctx, Span<EValue*> args);
void prim_add_scalar(KernelContext& ctx, Span<EValue*> args);
void prim_sub_scalar(KernelContext& ctx, Span<EValue*> args);
void prim_mul_scalar(KernelContext& ctx, Span<EValue*> args);
void prim_floordiv_scalar(KernelContext& ctx, Span<EValue*> args);
void sym_size_int(KernelContext& ctx, Span<EValue*> args);
void sym_numel(KernelContext& ctx, Span<EValue*> args);

}  // namespace portable

Error register_portable_kernels() {
  static const Kernel kKernels[] = {
      {"aten::add.out", portable::add_out},
      {"aten::add.Scalar_out", portable::add_scalar_out},
      {"aten::sub.out", portable::sub_out},
      {"aten::sub.Scalar_out", portable::sub_scalar_out},
      {"aten::mul.out", portable::mul_out},
      {"aten::mul.Scalar_out", portable::mul_scalar_out},
      {"aten::div.out", portable::div_out},
      {"aten::div.Scalar_out", portable::div_scalar_out},
      {"aten::minimum.out", portable::minimum_out},
      {"aten::maximum.out", portable::maximum_out},
      {"aten::relu.out", portable::relu_out},
      {"aten::hardtanh.out", portable::hardtanh_out},
      {"aten::clamp.out", portable::clamp_out},
      {"aten::sigmoid.out", portable::sigmoid_out},
      {"aten::tanh.out", portable::tanh_out},
      {"aten::hardswish.out", portable::hardswish_out},
      {"aten::hardsigmoid.out", portable::hardsigmoid_out},
      {"aten::leaky_relu.out", portable::leaky_relu_out},
      {"aten::gelu.out", portable::gelu_out},
      {"aten::exp.out", portable::exp_out},
      {"aten::log.out", portable::log_out},
      {"aten::sqrt.out", portable::sqrt_out},
      {"aten::rsqrt.out", portable::rsqrt_out},
      {"aten::neg.out", portable::neg_out},
      {"aten::abs.out", portable::abs_out},
      {"aten::pow.Tensor_Scalar_out", portable::pow_tensor_scalar_out},
      {"aten::gt.Scalar_out", portable::gt_scalar_out},
      {"aten::lt.Scalar_out", portable::lt_scalar_out},
      {"aten::eq.Scalar_out", portable::eq_scalar_out},
      {"aten::where.self_out", portable::where_self_out},
      {"aten::_softmax.out", portable::softmax_out},
      {"aten::_log_softmax.out", portable::log_softmax_out},
      {"aten::convolution.out", portable::convolution_out},
      {"aten::_native_batch_norm_legit_no_training.out", portable::native_batch_norm_legit_no_training_out},
      {"aten::native_layer_norm.out", portable::native_layer_norm_out},
      {"aten::max_pool2d_with_indices.out", portable::max_pool2d_with_indices_out},
      {"aten::avg_pool2d.out", portable::avg_pool2d_out},
      {"aten::mean.out", portable::mean_out},
      {"aten::sum.IntList_out", portable::sum_intlist_out},
      {"aten::amax.out", portable::amax_out},
      {"aten::argmax.out", portable::argmax_out},
      {"aten::mm.out", portable::mm_out},
      {"aten::bmm.out", portable::bmm_out},
      {"aten::addmm.out", portable::addmm_out},
      {"aten::view_copy.out", portable::view_copy_out},
      {"aten::permute_copy.out", portable::permute_copy_out},
      {"aten::expand_copy.out", portable::expand_copy_out},
      {"aten::cat.out", portable::cat_out},
      {"aten::slice_copy.Tensor_out", portable::slice_copy_tensor_out},
      {"aten::select_copy.int_out", portable::select_copy_int_out},
      {"aten::squeeze_copy.dims_out", portable::squeeze_copy_dims_out},
      {"aten::squeeze_copy.dim_out", portable::squeeze_copy_dim_out},
      {"aten::unsqueeze_copy.out", portable::unsqueeze_copy_out},
      {"aten::clone.out", portable::clone_out},
      {"aten::alias_copy.out", portable::alias_copy_out},
      {"aten::_to_copy.out", portable::to_copy_out},
      {"dim_order_ops::_to_dim_order_copy.out", portable::to_dim_order_copy_out},
      {"aten::full.out", portable::full_out},
      {"aten::constant_pad_nd.out", portable::constant_pad_nd_out},
      {"aten::upsample_nearest2d.vec_out", portable::upsample_nearest2d_vec_out},
      {"executorch_prim::et_view.default", portable::et_view_default},
      {"quantized_decomposed::quantize_per_tensor.out", portable::quantize_per_tensor_out},
      {"quantized_decomposed::dequantize_per_tensor.out", portable::dequantize_per_tensor_out},
      {"quantized_decomposed::quantize_per_channel.out", portable::quantize_per_channel_out},
      {"quantized_decomposed::dequantize_per_channel.out", portable::dequantize_per_channel_out},
      {"executorch_prim::add.Scalar", portable::prim_add_scalar},
      {"executorch_prim::sub.Scalar", portable::prim_sub_scalar},
      {"executorch_prim::mul.Scalar", portable::prim_mul_scalar},
      {"executorch_prim::floordiv.Scalar", portable::prim_floordiv_scalar},
      {"aten::sym_size.int", portable::sym_size_int},
      {"aten::sym_numel", portable::sym_numel},
  };
  return register_kernels({kKernels, sizeof(kKernels) / sizeof(kKernels[0])});
}

}  // namespace kiln
