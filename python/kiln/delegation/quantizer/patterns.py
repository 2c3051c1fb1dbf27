"""Which aten operators the Ethos-U quantizer annotates, grouped by how their qparams work.

Names are those of ``torch.export.export``'s graph (before decomposition to core
ATen), plus the core-ATen spellings so that already-decomposed graphs quantize too.
Each group has a different rule in :mod:`annotator`.
"""

from __future__ import annotations

import torch

aten = torch.ops.aten

# Convolutions and fully connected layers: int8 input, per-channel int8 weight
# (args[1]), int32 bias (args[2]); output quantized after an optional fused
# batch norm (QAT only: PTQ folds it before annotation) and activation.
WEIGHTED = {
    aten.conv1d.default, aten.conv1d.padding, aten.conv2d.default, aten.conv2d.padding, aten.linear.default,
    aten.conv_transpose1d.default, aten.conv_transpose2d.input,
}
# Weighted ops whose weight holds the output channels in axis 1 ([IC, OC / groups, ...]):
# their per-channel weight scales run along that axis.
OUTPUT_CHANNELS_AXIS_1 = {aten.conv_transpose1d.default, aten.conv_transpose2d.input}

BATCH_NORM = {aten.batch_norm.default, aten._native_batch_norm_legit_no_training.default}

# Activations that TOSA folds into the preceding op's output rescale (a clamp of the
# quantized range), so the pair needs one quantized output, not two.
FUSABLE_ACTIVATIONS = {
    aten.relu.default, aten.relu_.default, aten.hardtanh.default, aten.hardtanh_.default,
    aten.clamp.default,
}

# Elementwise arithmetic: each input and the output have their own qparams; TOSA
# rescales inputs to a common int32 scale (add/sub) or multiplies in int32 (mul).
ARITHMETIC = {
    aten.add.Tensor, aten.add_.Tensor, aten.sub.Tensor, aten.sub_.Tensor,
    aten.mul.Tensor, aten.mul_.Tensor,
    aten.matmul.default, aten.bmm.default, aten.mm.default,
}
# Which of ARITHMETIC may absorb a following activation (add + relu in ResNets).
FUSES_ACTIVATION = WEIGHTED | {aten.add.Tensor, aten.add_.Tensor, aten.sub.Tensor, aten.sub_.Tensor}

# Unary functions that TOSA computes with a 256-entry int8 lookup table: any input
# qparams map to any output qparams, so the output is observed unless its range
# is known (then fixed, see FIXED_RANGE).
TABLE = {
    aten.sigmoid.default, aten.tanh.default, aten.hardswish.default, aten.hardswish_.default,
    aten.hardsigmoid.default, aten.hardsigmoid_.default, aten.gelu.default, aten.silu.default,
    aten.silu_.default, aten.exp.default, aten.rsqrt.default, aten.elu.default,
    aten.leaky_relu.default, aten.log.default, aten.reciprocal.default,
}

# Reductions whose result leaves the input's range (a sum): their output is observed.
SUM = {aten.sum.dim_IntList}

# Averages get their own output step. Their range is narrower than the input's (a window's
# mean), so a shared step would waste output precision, and with the input's step a mean
# over an even count lands exactly on a rounding tie (k + 1/2) once in `count` elements:
# TOSA rounds ties up, quantized PyTorch's float mean falls either side by float noise, and
# a squeeze-excite block amplifies each such step into several. The lowering sums each
# window exactly and rounds once (tosa/ops/pooling.py).
AVERAGE = {
    aten.avg_pool2d.default, aten.adaptive_avg_pool2d.default, aten._adaptive_avg_pool2d.default,
    aten.avg_pool1d.default, aten.adaptive_avg_pool1d.default, aten.mean.dim, aten.mean.default,
}

SOFTMAX = {aten.softmax.int, aten._softmax.default, aten._safe_softmax.default, aten.log_softmax.int,
           aten._log_softmax.default}

# Output ranges known in advance: sigmoid and softmax in [0, 1], tanh in [-1, 1].
FIXED_RANGE: dict[object, tuple[float, float]] = {
    aten.sigmoid.default: (0.0, 1.0),
    aten.tanh.default: (-1.0, 1.0),
    aten.softmax.int: (0.0, 1.0),
    aten._softmax.default: (0.0, 1.0),
    aten._safe_softmax.default: (0.0, 1.0),
}

# Ops with float parameters that Kiln keeps as one unit (CPU float, or a backend
# that decomposes it): quantized input and output, parameters left float.
NORMALIZATION = {aten.layer_norm.default, aten.native_layer_norm.default, aten.group_norm.default}

# Ops that move or select values without arithmetic (or only pick the max / average
# them): TOSA has no rescale in them, so the output must have the input's qparams.
SHARED = {
    aten.view.default, aten.reshape.default, aten._unsafe_view.default, aten.view_copy.default,
    aten.permute.default, aten.permute_copy.default, aten.transpose.int, aten.t.default,
    aten.flatten.using_ints, aten.unflatten.int, aten.squeeze.dim, aten.squeeze.dims, aten.squeeze.default,
    aten.unsqueeze.default, aten.unsqueeze_copy.default, aten.squeeze_copy.dims,
    aten.max_pool2d.default, aten.max_pool2d_with_indices.default, aten.max_pool1d.default,
    aten.upsample_nearest2d.default, aten.upsample_nearest2d.vec,
    # A bilinear sample is a convex combination of inputs: it stays in the input's range.
    aten.upsample_bilinear2d.vec, aten.upsample_bilinear2d.default,
    aten.pad.default, aten.constant_pad_nd.default,
    aten.clone.default, aten.contiguous.default, aten.dropout.default, aten.alias.default,
    aten.slice.Tensor, aten.slice_copy.Tensor, aten.select.int, aten.expand.default,
    aten.repeat.default,
    # A read of the input's elements at other places (a restride, or overlapping windows).
    aten.as_strided.default, aten.as_strided_copy.default,
    # A clamp with no producer to fuse into: TOSA CLAMP keeps the input's qparams.
    *FUSABLE_ACTIVATIONS,
}

CONCAT = {aten.cat.default, aten.concat.default, aten.stack.default}

# Reads of a table (args[0]) at integer positions: the result holds table values, so it
# shares the table's qparams (an embedding's weight is quantized per tensor for that).
GATHER = {aten.embedding.default, aten.index_select.default}

# Operators deliberately left float: a batch norm that no convolution absorbs keeps its
# float parameters (it runs on the CPU). Every other operator without a rule above is
# quantized at its own boundary (annotator._annotate_standalone).
LEFT_FLOAT = {*BATCH_NORM, aten._native_batch_norm_legit.default}
