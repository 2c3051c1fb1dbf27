"""Every TOSA operator Kiln emits: the reference model accepts the graph and matches the
fake-quantized PyTorch module (its own q/dq arithmetic) on the same int8 inputs.

Tolerances (output steps):
* 0 - data movement (TRANSPOSE, RESHAPE, PAD, CONCAT of equal quantization, MAX_POOL2D,
  RESIZE), CLAMP (quantization is monotone) and TABLE (built by running the module's
  own float ops and quantize on all 256 codes): exact by construction.
* 1 - anything with a RESCALE of a sum: TOSA rounds half up with a 31-bit multiplier,
  PyTorch rounds a float32 result half to even; the two differ when the float result
  lies within float32 noise of a .5 boundary. AVG_POOL2D also divides with a 32-bit
  reciprocal.
"""

from __future__ import annotations

import numpy as np
import pytest

# case -> (TOSA ops that must be in the graph, tolerance in output steps)
EXPECTED: dict[str, tuple[set[str], int]] = {
    "conv_relu": ({"CONV2D", "RESCALE"}, 1),
    "conv_stride2_nobias": ({"CONV2D", "RESCALE"}, 1),
    "conv_relu6_dilated": ({"CONV2D", "RESCALE"}, 1),
    "conv_1x1": ({"CONV2D", "RESCALE"}, 1),
    "conv_1x1_stride2_crop": ({"SLICE", "CONV2D", "RESCALE"}, 1),  # unread last column is sliced off
    "depthwise": ({"DEPTHWISE_CONV2D", "RESCALE"}, 1),
    "depthwise_multiplier2": ({"DEPTHWISE_CONV2D", "RESCALE"}, 1),
    "grouped_conv": ({"SLICE", "CONV2D", "CONCAT", "RESCALE"}, 1),
    "linear": ({"CONV2D", "RESHAPE", "RESCALE"}, 1),
    "linear_rank3_relu": ({"CONV2D", "RESHAPE", "RESCALE"}, 1),
    "bmm": ({"MATMUL", "RESCALE"}, 1),
    "add": ({"ADD", "RESCALE"}, 1),
    "add_broadcast": ({"ADD", "RESCALE"}, 1),
    "sub": ({"SUB", "RESCALE"}, 1),
    "mul": ({"MUL", "RESCALE"}, 1),
    "relu": ({"RESCALE"}, 1),
    "relu_shared_qparams": ({"CLAMP"}, 0),
    "relu6_shared_qparams": ({"CLAMP"}, 0),
    "hardtanh": ({"RESCALE"}, 1),
    "sigmoid": ({"TABLE"}, 0),
    "tanh": ({"TABLE"}, 0),
    "hardswish": ({"TABLE"}, 0),
    "max_pool": ({"MAX_POOL2D"}, 1),
    "avg_pool": ({"DEPTHWISE_CONV2D", "RESCALE"}, 1),  # finer output step: exact window sums
    "avg_pool_padded": ({"PAD", "DEPTHWISE_CONV2D", "RESCALE"}, 1),
    "mean_hw": ({"DEPTHWISE_CONV2D", "RESCALE"}, 1),
    "global_pool_flatten": ({"DEPTHWISE_CONV2D", "RESHAPE"}, 1),
    "concat": ({"CONCAT"}, 1),
    "flatten": ({"TRANSPOSE", "RESHAPE"}, 0),
    "permute": ({"TRANSPOSE"}, 0),
    "view_rank3": ({"TRANSPOSE", "RESHAPE"}, 0),
    "as_strided_reshape": ({"TRANSPOSE", "RESHAPE"}, 0),
    "global_pool_restrided": ({"DEPTHWISE_CONV2D", "RESHAPE"}, 1),
    "pad": ({"PAD"}, 0),
    "upsample_nearest": ({"RESIZE"}, 0),
    "upsample_nearest_4x": ({"RESIZE"}, 0),
    "clamp": ({"RESCALE"}, 1),
    "elu": ({"TABLE"}, 0),
    "gelu": ({"TABLE"}, 0),
    "hardsigmoid": ({"TABLE"}, 0),
    "leaky_relu": ({"TABLE"}, 0),
    "mm": ({"MATMUL", "RESCALE"}, 1),
    "expand_to_own_shape": ({"RESCALE"}, 1),
    "unsqueeze_squeeze": ({"RESHAPE"}, 0),
    "adaptive_avg_pool": ({"DEPTHWISE_CONV2D", "RESCALE"}, 1),  # exact window sums, one rounding
    "softmax": ({"REDUCE_MAX", "TABLE", "REDUCE_SUM", "CLZ", "MUL", "ARITHMETIC_RIGHT_SHIFT"}, 1),
    "softmax_attention_scores": ({"REDUCE_MAX", "TABLE", "REDUCE_SUM", "CLZ"}, 1),
    "softmax_channels": ({"REDUCE_MAX", "TABLE", "REDUCE_SUM", "CLZ"}, 1),
    "log_softmax": ({"REDUCE_MAX", "TABLE", "REDUCE_SUM", "CLZ", "MUL", "SUB"}, 1),
    "log_softmax_classes": ({"REDUCE_MAX", "TABLE", "REDUCE_SUM", "CLZ", "MUL", "SUB"}, 1),
    "log_softmax_batch": ({"REDUCE_MAX", "TABLE", "REDUCE_SUM", "CLZ", "MUL", "SUB"}, 1),
    "conv1d": ({"CONV2D", "RESCALE"}, 1),
    "conv1d_depthwise_stride2": ({"DEPTHWISE_CONV2D", "RESCALE"}, 1),
    "conv1d_dilated_1x1": ({"CONV2D", "RESCALE"}, 1),
    "conv_transpose": ({"TRANSPOSE_CONV2D", "RESCALE"}, 1),
    "conv_transpose_stride1": ({"TRANSPOSE_CONV2D", "RESCALE"}, 1),
    "conv_transpose_output_padding": ({"TRANSPOSE_CONV2D", "RESCALE"}, 1),
    "conv_transpose1d": ({"TRANSPOSE_CONV2D", "RESCALE"}, 1),
    "max_pool1d": ({"MAX_POOL2D"}, 0),
    "avg_pool1d": ({"DEPTHWISE_CONV2D"}, 1),
    "mean_last_dim": ({"REDUCE_SUM", "RESCALE"}, 1),
    "mean_channels_keepdim": ({"REDUCE_SUM", "RESCALE"}, 1),
    "mean_height": ({"TRANSPOSE", "REDUCE_SUM", "RESCALE"}, 1),
    "sum_tokens": ({"REDUCE_SUM", "RESCALE"}, 1),
    "slice_channels": ({"SLICE"}, 0),
    "slice_last_dim": ({"SLICE"}, 0),
    "select_first_token": ({"SLICE", "RESHAPE"}, 0),
    "chunk_mul": ({"SLICE", "MUL"}, 1),
    "split_reorder": ({"SLICE", "CONCAT"}, 0),
    "upsample_nearest_index_form": ({"RESIZE"}, 0),
    "upsample_nearest_index_form_4x": ({"RESIZE"}, 0),
    "upsample_bilinear_index_form": ({"RESIZE", "DEPTHWISE_CONV2D", "RESCALE"}, 1),  # U55: nearest + filter
    "upsample_bilinear_aligned_index_form": ({"RESIZE", "RESCALE"}, 1),
    "upsample_bilinear": ({"RESIZE", "DEPTHWISE_CONV2D", "RESCALE"}, 1),
    "upsample_bilinear_3x": ({"RESIZE", "RESCALE"}, 1),
    "embedding": ({"GATHER"}, 0),
    "index_select_rows": ({"GATHER"}, 0),
    "permute_rank5": ({"TRANSPOSE"}, 0),
    "patchify_rank6": ({"TRANSPOSE", "RESHAPE"}, 0),
    "layer_norm": ({"REDUCE_SUM", "CLZ", "MUL", "LOGICAL_LEFT_SHIFT", "RESCALE"}, 1),
    "layer_norm_plain_rows": ({"REDUCE_SUM", "CLZ", "MUL"}, 1),
    "layer_norm_rank4": ({"TRANSPOSE", "REDUCE_SUM", "CLZ", "MUL"}, 1),
    "expand_broadcast": ({"TILE"}, 1),
    "full_like_added": ({"ADD", "RESCALE"}, 1),
    "lengths_mask": ({"GREATER_EQUAL", "GREATER", "EQUAL", "LOGICAL_AND", "LOGICAL_OR", "LOGICAL_NOT", "REDUCE_ANY",
                      "SELECT"}, 0),
}


def test_every_case_has_an_expectation(qdq) -> None:
    assert set(EXPECTED) == set(qdq.CASES)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_reference_matches_fake_quant(name: str, lowered_case) -> None:
    case, ints, _, subgraph = lowered_case(name)
    ops, tolerance = EXPECTED[name]
    assert ops <= set(subgraph.op_counts), f"{name}: {subgraph.op_counts}"
    (result,) = subgraph.run_reference([x.numpy() for x in ints])
    expected = case(*ints).numpy()
    assert result.shape == expected.shape and result.dtype == expected.dtype
    difference = np.abs(result.astype(np.int32) - expected.astype(np.int32))
    assert difference.max() <= tolerance, f"{name}: max diff {difference.max()}"
    # Off-by-one results are rounding coincidences, not a bias: few and both ways. Bilinear
    # weights are multiples of 1/16: exact ties are common, and TOSA rounds them up where
    # PyTorch rounds to even.
    share = 0.15 if "bilinear" in name else 0.05
    assert (difference > 0).mean() <= share, f"{name}: {(difference > 0).mean():.1%} of outputs differ"
    assert len(np.unique(expected)) > 3, "the case exercises too few output codes to mean anything"


def test_graph_is_tosa_1_0_final(lowered_case, tmp_path) -> None:
    """Vela 5.2 takes TOSA 1.0.0 (not the serializer's default 1.1 draft)."""
    import tosa_serializer as ts

    _, _, _, subgraph = lowered_case("conv_relu")
    path = tmp_path / "conv.tosa"
    path.write_bytes(subgraph.flatbuffer)
    reader = ts.TosaSerializer()
    assert reader.loadTosaFlatbuffer(str(path))
    assert reader.getGraphTosaVersion().to_string() == "1.0.0"


@pytest.mark.parametrize("name", ["adaptive_avg_pool", "mean_hw", "global_pool_flatten"])
def test_averages_with_a_finer_output_step_round_once(name: str, lowered_case) -> None:
    """Odd window counts have no rounding ties: summed exactly and rounded once, these averages
    equal quantized PyTorch everywhere (averaging in int16 first and rescaling after put 3% of
    the adaptive pool's outputs one step off)."""
    case, ints, _, subgraph = lowered_case(name)
    assert "AVG_POOL2D" not in subgraph.op_counts
    (result,) = subgraph.run_reference([x.numpy() for x in ints])
    np.testing.assert_array_equal(result, case(*ints).numpy())
