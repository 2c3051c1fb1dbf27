"""The ``cortex_m::`` operators as torch custom operators, so that FX graphs can call them.

Their schemas are those of ExecuTorch 1.5.1's ``backends/cortex_m/ops/operators.yaml``
without the out argument: :func:`kiln.passes.to_out_variants` derives each
``cortex_m::<name>.out`` call from them (same arguments, then ``*, Tensor(a!) out``),
and ``kernels/cortex_m/op_table.yaml`` has a kernel for every one. The graph never runs
them (the lowering writes each node's output shape into its metadata), so no
implementation is registered here: the integer semantics live in the kernels.
"""

from __future__ import annotations

import torch

from kiln.passes.aten_out_variants import register_out_variants

SCHEMAS: dict[str, str] = {
    "quantize_per_tensor": "(Tensor input, float scale, int zero_point, int quant_min, int quant_max, "
                           "ScalarType dtype) -> Tensor",
    "dequantize_per_tensor": "(Tensor input, float scale, int zero_point, int quant_min, int quant_max, "
                             "ScalarType dtype) -> Tensor",
    "quantized_add": "(Tensor self, int self_zero_point, int self_multiplier, int self_shift, Tensor other, "
                     "int other_zero_point, int other_multiplier, int other_shift, int output_zero_point, "
                     "int output_multiplier, int output_shift, int activation_min, int activation_max) -> Tensor",
    "quantized_mul": "(Tensor self, int self_zero_point, Tensor other, int other_zero_point, int output_zero_point, "
                     "int output_multiplier, int output_shift) -> Tensor",
    "quantized_activation": "(Tensor input, Tensor lut) -> Tensor",
    "quantized_linear": "(Tensor input, Tensor weights, Tensor? bias, Tensor? kernel_sum, int input_offset, "
                        "int filter_offset, int output_offset, int[] requantize_multipliers, "
                        "int[] requantize_shifts, int activation_max, int activation_min) -> Tensor",
    "softmax": "(Tensor input, int dim, int input_zero_point, int output_zero_point, int input_multiplier, "
               "int input_shift, int diff_min) -> Tensor",
    "transpose": "(Tensor input, int[] perm) -> Tensor",
    "pad": "(Tensor input, int[] pre_pad, int[] post_pad, int pad_value) -> Tensor",
    "quantized_conv2d_nhwc": "(Tensor input, Tensor weight, Tensor? bias, int[] stride, int[] padding, "
                             "int[] dilation, int input_offset, int output_offset, Tensor requantize_multipliers, "
                             "Tensor requantize_shifts, int activation_min, int activation_max, Tensor scratch) "
                             "-> Tensor",
    "quantized_depthwise_conv2d_nhwc": "(Tensor input, Tensor weight, Tensor? bias, int[] stride, int[] padding, "
                                       "int[] dilation, int depth_multiplier, int input_offset, int output_offset, "
                                       "Tensor requantize_multipliers, Tensor requantize_shifts, "
                                       "int activation_min, int activation_max, Tensor scratch) -> Tensor",
    "quantized_avg_pool2d_nhwc": "(Tensor input, int[] kernel_size, int[] stride, int[] padding, bool ceil_mode, "
                                 "int zero_point, int multiplier, int shift, Tensor scratch) -> Tensor",
    "quantized_max_pool2d_nhwc": "(Tensor input, int[] kernel_size, int[] stride, int[] padding, int[] dilation, "
                                 "bool ceil_mode, int input_zero_point, int output_zero_point, int activation_min, "
                                 "int activation_max) -> Tensor",
    "quantized_batch_matmul": "(Tensor lhs, int lhs_zero_point, Tensor rhs_transposed, int rhs_zero_point, "
                              "int output_zero_point, int output_multiplier, int output_shift, Tensor scratch) "
                              "-> Tensor",
    "quantized_div": "(Tensor self, int self_zero_point, Tensor other, int other_zero_point, int output_zero_point, "
                     "float output_scale) -> Tensor",
    "minimum": "(Tensor self, Tensor other) -> Tensor",
    "maximum": "(Tensor self, Tensor other) -> Tensor",
    "quantized_transpose_conv2d_nhwc": "(Tensor input, Tensor weight, Tensor? bias, int[] stride, int[] padding, "
                                       "int[] output_padding, int[] dilation, int input_offset, int output_offset, "
                                       "Tensor requantize_multipliers, Tensor requantize_shifts, int activation_min, "
                                       "int activation_max, Tensor scratch, Tensor output_scratch) -> Tensor",
}

#: Kiln's own int8 operators for what ExecuTorch's cortex_m:: set has no operator for
#: (kernels/cortex_m/op_table.yaml lists them beside the cortex_m:: ones). A namespace of
#: their own: a cortex_m:: operator ExecuTorch adds later must not clash with them.
KILN_SCHEMAS: dict[str, str] = {
    "quantized_layer_norm": "(Tensor input, int input_zero_point, float input_scale, Tensor? weight, Tensor? bias, "
                            "float eps, int output_zero_point, float output_scale, int activation_min, "
                            "int activation_max) -> Tensor",
}

# Kept alive for the process: dropping a Library object unregisters its operators.
_LIBRARY = torch.library.Library("cortex_m", "FRAGMENT")
for _name, _schema in SCHEMAS.items():
    if not hasattr(torch.ops.cortex_m, _name):  # another library (ExecuTorch's) may define them already
        _LIBRARY.define(_name + _schema)


_KILN_LIBRARY = torch.library.Library("kiln", "FRAGMENT")
for _name, _schema in KILN_SCHEMAS.items():
    if not hasattr(torch.ops.kiln, _name):
        _KILN_LIBRARY.define(_name + _schema)


def op(name: str) -> torch._ops.OpOverload:
    """The default overload of ``cortex_m::<name>``."""
    return getattr(torch.ops.cortex_m, name).default


def kiln_op(name: str) -> torch._ops.OpOverload:
    """The default overload of Kiln's own ``kiln::<name>``."""
    return getattr(torch.ops.kiln, name).default


#: Operator names as :func:`kiln.passes.to_out_variants` maps them to their out variants.
OUT_VARIANTS: dict[str, str] = {f"cortex_m::{name}": f"cortex_m::{name}.out" for name in SCHEMAS}
OUT_VARIANTS.update({f"kiln::{name}": f"kiln::{name}.out" for name in KILN_SCHEMAS})
register_out_variants(OUT_VARIANTS)
