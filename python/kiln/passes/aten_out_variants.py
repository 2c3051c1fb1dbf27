"""Which out-variant kernel implements each core-ATen operator.

Keys are the operators that appear in a core-ATen graph (``OpOverload.name()``,
e.g. ``"aten::convolution"`` for ``aten.convolution.default``, ``"aten::add.Tensor"``);
values are the out-variant operators the runtime registers, named the way
ExecuTorch programs name them (``"aten::convolution.out"``). View operators map to
their ``_copy`` variants because a kernel call always writes a fresh output.

An operator missing here is rejected by ``kiln.passes.to_out_variants`` with an
:class:`kiln.UnsupportedOperatorError` naming the node. To support a new operator,
add a line here and a kernel with the out-variant name to the runtime.
"""

from __future__ import annotations

from collections.abc import Mapping

# fmt: off
OUT_VARIANTS: dict[str, str] = {
    # Convolution, matrix products, normalization, pooling.
    "aten::convolution": "aten::convolution.out",
    "aten::addmm": "aten::addmm.out",
    "aten::mm": "aten::mm.out",
    "aten::bmm": "aten::bmm.out",
    "aten::_native_batch_norm_legit_no_training": "aten::_native_batch_norm_legit_no_training.out",
    "aten::_native_batch_norm_legit": "aten::_native_batch_norm_legit.out",
    "aten::_native_batch_norm_legit.no_stats": "aten::_native_batch_norm_legit.no_stats_out",
    "aten::native_layer_norm": "aten::native_layer_norm.out",
    "aten::native_group_norm": "aten::native_group_norm.out",
    "aten::max_pool2d_with_indices": "aten::max_pool2d_with_indices.out",
    "aten::max_pool2d_with_indices_backward": "aten::max_pool2d_with_indices_backward.grad_input",
    "aten::convolution_backward": "aten::convolution_backward.out",
    "aten::avg_pool2d": "aten::avg_pool2d.out",
    "aten::_adaptive_avg_pool2d": "aten::_adaptive_avg_pool2d.out",
    "aten::upsample_nearest2d.vec": "aten::upsample_nearest2d.vec_out",
    "aten::upsample_bilinear2d.vec": "aten::upsample_bilinear2d.vec_out",
    "aten::_upsample_bilinear2d_aa": "aten::_upsample_bilinear2d_aa.out",
    "aten::grid_sampler_2d": "aten::grid_sampler_2d.out",
    "aten::constant_pad_nd": "aten::constant_pad_nd.out",
    # torch decomposes the reflection/replication pads by default; kept, they reach the kernels.
    "aten::reflection_pad1d": "aten::reflection_pad1d.out",
    "aten::reflection_pad2d": "aten::reflection_pad2d.out",
    "aten::reflection_pad3d": "aten::reflection_pad3d.out",
    "aten::replication_pad1d": "aten::replication_pad1d.out",
    "aten::replication_pad2d": "aten::replication_pad2d.out",
    "aten::replication_pad3d": "aten::replication_pad3d.out",
    "aten::embedding": "aten::embedding.out",
    "aten::native_dropout": "aten::native_dropout.out",
    "aten::_cdist_forward": "aten::_cdist_forward.out",
    "aten::_pdist_forward": "aten::_pdist_forward.out",
    # Activations and softmax.
    "aten::relu": "aten::relu.out",
    "aten::hardtanh": "aten::hardtanh.out",
    "aten::clamp": "aten::clamp.out",
    "aten::clamp.Tensor": "aten::clamp.Tensor_out",
    "aten::sigmoid": "aten::sigmoid.out",
    "aten::tanh": "aten::tanh.out",
    # torch decomposes these two by default; graphs exported with them kept reach the kernels.
    "aten::hardswish": "aten::hardswish.out",
    "aten::hardsigmoid": "aten::hardsigmoid.out",
    "aten::gelu": "aten::gelu.out",
    "aten::leaky_relu": "aten::leaky_relu.out",
    "aten::elu": "aten::elu.out",
    "aten::glu": "aten::glu.out",  # core ATen decomposes glu and logit: kept, they reach these
    "aten::logit": "aten::logit.out",
    "aten::_softmax": "aten::_softmax.out",
    "aten::_log_softmax": "aten::_log_softmax.out",
    # Element-wise arithmetic.
    "aten::add.Tensor": "aten::add.out",
    "aten::add.Scalar": "aten::add.Scalar_out",
    "aten::sub.Tensor": "aten::sub.out",
    "aten::sub.Scalar": "aten::sub.Scalar_out",
    "aten::rsub.Scalar": "aten::rsub.Scalar_out",
    "aten::mul.Tensor": "aten::mul.out",
    "aten::mul.Scalar": "aten::mul.Scalar_out",
    "aten::div.Tensor": "aten::div.out",
    "aten::div.Tensor_mode": "aten::div.out_mode",
    "aten::div.Scalar_mode": "aten::div.Scalar_mode_out",
    "aten::floor_divide": "aten::floor_divide.out",
    "aten::fmod.Tensor": "aten::fmod.Tensor_out",
    "aten::fmod.Scalar": "aten::fmod.Scalar_out",
    "aten::remainder.Tensor": "aten::remainder.Tensor_out",
    "aten::remainder.Scalar": "aten::remainder.Scalar_out",
    "aten::div.Scalar": "aten::div.Scalar_out",
    "aten::pow.Tensor_Scalar": "aten::pow.Tensor_Scalar_out",
    "aten::pow.Tensor_Tensor": "aten::pow.Tensor_Tensor_out",
    "aten::pow.Scalar": "aten::pow.Scalar_out",
    "aten::maximum": "aten::maximum.out",
    "aten::minimum": "aten::minimum.out",
    "aten::where.self": "aten::where.self_out",
    "aten::masked_fill.Scalar": "aten::masked_fill.Scalar_out",
    "aten::abs": "aten::abs.out",
    "aten::neg": "aten::neg.out",
    "aten::exp": "aten::exp.out",
    "aten::log": "aten::log.out",
    "aten::sqrt": "aten::sqrt.out",
    "aten::rsqrt": "aten::rsqrt.out",
    "aten::reciprocal": "aten::reciprocal.out",
    "aten::erf": "aten::erf.out",
    "aten::expm1": "aten::expm1.out",
    "aten::log10": "aten::log10.out",
    "aten::log1p": "aten::log1p.out",
    "aten::log2": "aten::log2.out",
    "aten::sin": "aten::sin.out",
    "aten::cos": "aten::cos.out",
    "aten::tan": "aten::tan.out",
    "aten::asin": "aten::asin.out",
    "aten::acos": "aten::acos.out",
    "aten::atan": "aten::atan.out",
    "aten::atan2": "aten::atan2.out",
    "aten::sinh": "aten::sinh.out",
    "aten::cosh": "aten::cosh.out",
    "aten::asinh": "aten::asinh.out",
    "aten::acosh": "aten::acosh.out",
    "aten::atanh": "aten::atanh.out",
    "aten::floor": "aten::floor.out",
    "aten::ceil": "aten::ceil.out",
    "aten::round": "aten::round.out",
    "aten::trunc": "aten::trunc.out",
    "aten::sign": "aten::sign.out",
    "aten::_conj_physical": "aten::_conj_physical.out",  # the identity on real tensors
    "aten::logical_not": "aten::logical_not.out",
    "aten::logical_and": "aten::logical_and.out",
    "aten::logical_or": "aten::logical_or.out",
    "aten::logical_xor": "aten::logical_xor.out",
    "aten::isnan": "aten::isnan.out",
    "aten::isinf": "aten::isinf.out",
    # Bitwise ops; the operators << and >> export as __lshift__ / __rshift__.
    "aten::bitwise_and.Tensor": "aten::bitwise_and.Tensor_out",
    "aten::bitwise_and.Scalar": "aten::bitwise_and.Scalar_out",
    "aten::bitwise_or.Tensor": "aten::bitwise_or.Tensor_out",
    "aten::bitwise_or.Scalar": "aten::bitwise_or.Scalar_out",
    "aten::bitwise_xor.Tensor": "aten::bitwise_xor.Tensor_out",
    "aten::bitwise_xor.Scalar": "aten::bitwise_xor.Scalar_out",
    "aten::bitwise_not": "aten::bitwise_not.out",
    "aten::bitwise_left_shift.Tensor": "aten::bitwise_left_shift.Tensor_out",
    "aten::bitwise_left_shift.Tensor_Scalar": "aten::bitwise_left_shift.Tensor_Scalar_out",
    "aten::bitwise_right_shift.Tensor": "aten::bitwise_right_shift.Tensor_out",
    "aten::bitwise_right_shift.Tensor_Scalar": "aten::bitwise_right_shift.Tensor_Scalar_out",
    "aten::__lshift__.Tensor": "aten::bitwise_left_shift.Tensor_out",
    "aten::__lshift__.Scalar": "aten::bitwise_left_shift.Tensor_Scalar_out",
    "aten::__rshift__.Tensor": "aten::bitwise_right_shift.Tensor_out",
    "aten::__rshift__.Scalar": "aten::bitwise_right_shift.Tensor_Scalar_out",
    # Comparisons.
    "aten::eq.Scalar": "aten::eq.Scalar_out",
    "aten::eq.Tensor": "aten::eq.Tensor_out",
    "aten::ne.Scalar": "aten::ne.Scalar_out",
    "aten::ne.Tensor": "aten::ne.Tensor_out",
    "aten::lt.Scalar": "aten::lt.Scalar_out",
    "aten::lt.Tensor": "aten::lt.Tensor_out",
    "aten::le.Scalar": "aten::le.Scalar_out",
    "aten::le.Tensor": "aten::le.Tensor_out",
    "aten::gt.Scalar": "aten::gt.Scalar_out",
    "aten::gt.Tensor": "aten::gt.Tensor_out",
    "aten::ge.Scalar": "aten::ge.Scalar_out",
    "aten::ge.Tensor": "aten::ge.Tensor_out",
    # Reductions.
    "aten::mean.dim": "aten::mean.out",
    "aten::mean": "aten::mean.dtype_out",
    "aten::sum.dim_IntList": "aten::sum.IntList_out",
    "aten::amax": "aten::amax.out",
    "aten::amin": "aten::amin.out",
    "aten::argmax": "aten::argmax.out",
    "aten::argmin": "aten::argmin.out",
    "aten::max.dim": "aten::max.dim_max",
    "aten::min.dim": "aten::min.dim_min",
    "aten::max": "aten::max.unary_out",
    "aten::min": "aten::min.unary_out",
    "aten::any": "aten::any.all_out",
    "aten::any.dim": "aten::any.out",
    "aten::any.dims": "aten::any.dims_out",
    "aten::prod": "aten::prod.out",
    "aten::prod.dim_int": "aten::prod.int_out",
    "aten::var.correction": "aten::var.correction_out",
    "aten::var.dim": "aten::var.out",  # core ATen turns var.dim into var.correction
    "aten::var_mean.correction": "aten::var_mean.correction_out",
    "aten::cumsum": "aten::cumsum.out",
    # Views and data movement (views become copies).
    "aten::view": "aten::view_copy.out",
    "aten::permute": "aten::permute_copy.out",
    "aten::expand": "aten::expand_copy.out",
    "aten::squeeze.dims": "aten::squeeze_copy.dims_out",
    "aten::squeeze.dim": "aten::squeeze_copy.dim_out",
    "aten::unsqueeze": "aten::unsqueeze_copy.out",
    "aten::slice.Tensor": "aten::slice_copy.Tensor_out",
    "aten::select.int": "aten::select_copy.int_out",
    "aten::alias": "aten::alias_copy.out",
    "aten::split_with_sizes": "aten::split_with_sizes_copy.out",
    "aten::diagonal": "aten::diagonal_copy.out",
    "aten::unfold": "aten::unfold_copy.out",
    "aten::narrow": "aten::narrow_copy.out",
    "aten::clone": "aten::clone.out",
    "aten::copy": "aten::copy.out",
    "aten::lift_fresh_copy": "aten::lift_fresh_copy.out",
    "aten::_to_copy": "aten::_to_copy.out",
    "aten::cat": "aten::cat.out",
    "aten::repeat": "aten::repeat.out",
    "aten::flip": "aten::flip.out",
    # Kept out of torch's default decompositions, these reach their own kernels.
    "aten::detach": "aten::detach_copy.out",
    "aten::t": "aten::t_copy.out",
    "aten::transpose.int": "aten::transpose_copy.int_out",
    "aten::split.Tensor": "aten::split_copy.Tensor_out",
    "aten::unbind.int": "aten::unbind_copy.int_out",
    "aten::stack": "aten::stack.out",
    "aten::roll": "aten::roll.out",
    "aten::tril": "aten::tril.out",
    "aten::pixel_unshuffle": "aten::pixel_unshuffle.out",
    "aten::pixel_shuffle": "aten::pixel_shuffle.out",
    "aten::select_scatter": "aten::select_scatter.out",
    # Reads of a storage in eager PyTorch's strides: kiln.passes.as_strided turns them into
    # views, or into this copy of a row-major tensor (what runtime tensors are).
    "aten::as_strided": "aten::as_strided_copy.out",
    # Indexing.
    "aten::gather": "aten::gather.out",
    "aten::index.Tensor": "aten::index.Tensor_out",
    "aten::index_put": "aten::index_put.out",
    "aten::index_select": "aten::index_select.out",
    "aten::scatter.src": "aten::scatter.src_out",
    "aten::scatter.value": "aten::scatter.value_out",
    "aten::scatter_add": "aten::scatter_add.out",
    "aten::slice_scatter": "aten::slice_scatter.out",
    "aten::masked_scatter": "aten::masked_scatter.out",
    "aten::topk": "aten::topk.values",
    # Data-dependent output shapes: torch.export makes them dynamic, which Kiln refuses;
    # ExecuTorch's programs call their kernels.
    "aten::nonzero": "aten::nonzero.out",
    "aten::masked_select": "aten::masked_select.out",
    "aten::repeat_interleave.Tensor": "aten::repeat_interleave.Tensor_out",
    # Tensor creation (their dtype comes from the out tensor).
    "aten::full": "aten::full.out",
    "aten::full_like": "aten::full_like.out",
    "aten::scalar_tensor": "aten::scalar_tensor.out",
    "aten::arange": "aten::arange.out",
    "aten::arange.start": "aten::arange.start_out",
    "aten::arange.start_step": "aten::arange.start_out",
    "aten::empty.memory_format": "aten::empty.out",
    "aten::ones": "aten::ones.out",
    "aten::zeros": "aten::zeros.out",
    "aten::fill.Scalar": "aten::fill.Scalar_out",
    "aten::fill.Tensor": "aten::fill.Tensor_out",
    "aten::rand": "aten::rand.out",
    "aten::randn": "aten::randn.out",
    # Quantization (PT2E quantized graphs).
    "quantized_decomposed::quantize_per_tensor": "quantized_decomposed::quantize_per_tensor.out",
    "quantized_decomposed::dequantize_per_tensor": "quantized_decomposed::dequantize_per_tensor.out",
    "quantized_decomposed::quantize_per_channel": "quantized_decomposed::quantize_per_channel.out",
    "quantized_decomposed::dequantize_per_channel": "quantized_decomposed::dequantize_per_channel.out",
}
# fmt: on


def register_out_variants(table: Mapping[str, str]) -> None:
    """Add a backend's operators (operator name -> out-variant name) to :data:`OUT_VARIANTS`.

    A backend that defines its own operators registers them when it defines them
    (``kiln.backends.cortex_m.ops`` does on import), so a graph that calls them has them
    here; this module imports no backend and no torch, which keeps ``.pte`` readers light."""
    for name, out_name in table.items():
        known = OUT_VARIANTS.setdefault(name, out_name)
        if known != out_name:
            raise ValueError(f"operator {name!r} registered with out variant {out_name!r}, already {known!r}")


# Checks torch.export leaves in the graph; they hold at compile time (static shapes
# and dtypes), produce no value, and are dropped.
COMPILE_TIME_CHECKS: frozenset[str] = frozenset(
    {
        "aten::_assert_tensor_metadata",
        "aten::_assert_scalar",
        "aten::_assert_async",
        "aten::_assert_async.msg",
        "aten::sym_constrain_range",
        "aten::sym_constrain_range_for_size",
    }
)


def out_variant_name(core_operator: str) -> str | None:
    """Out-variant operator for a core-ATen operator name, or None if Kiln has none."""
    return OUT_VARIANTS.get(core_operator)
