"""Questions about the constraint table, each answered with a reason or None.

``convolution_objection("ethos-u55-128", stride=(4, 4), padding=(1, 1), ...)`` says why
the family cannot run that convolution, in the words the partition report shows. The
partitioner's checks (``partitioner/checks.py``) and the TOSA lowering's checks
(``tosa/ops/*.py``) both ask these functions, each with the arguments it reads from the
FX node, so they refuse the same nodes with the same reason. ``target`` is a target
name, a family name or a compile spec (:func:`family_constraints`). Rules that are the
TOSA lowering's own (what it emits, not what the NPU runs) stay with the lowering.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Optional

from kiln.backends.arm.constraints.families import family_constraints
from kiln.backends.arm.constraints.operators import support_for


def _either(values: Sequence[int]) -> str:
    """(2, 4, 8) -> "2, 4 or 8"."""
    words = [str(v) for v in values]
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} or {words[-1]}"


def operator_objection(operator: str, target: Any) -> Optional[str]:
    """Why ``target``'s family has no NPU operation for ``operator`` ("aten::embedding"),
    or None (also for operators the table does not list)."""
    support = support_for(operator)
    family = family_constraints(target).family
    if support is None or family in support.families:
        return None
    return f"{operator} ({support.tosa}) is not supported by {family} (only {', '.join(sorted(support.families))})"


def convolution_objection(target: Any, stride: Sequence[int], padding: Sequence[int], dilation: Sequence[int], *,
                          depthwise: bool = False, transposed: bool = False, one_d: bool = False) -> Optional[str]:
    """Why ``target``'s family cannot run a convolution with these (H, W) stride, padding
    and dilation; a 1-D one (``one_d``) runs along W with H = 1."""
    limits = family_constraints(target)
    stride, padding, dilation = list(stride), list(padding), list(dilation)
    if transposed:
        allowed = limits.transposed_strides
        strides = set(stride[1:]) if one_d else set(stride)
        if allowed is not None and (len(strides) > 1 or not strides <= set(allowed)):
            return (f"transposed convolution stride {stride}: {limits.family} supports stride {_either(allowed)} "
                    "(equal in both dims)")
        return None
    if depthwise and limits.max_depthwise_stride is not None and max(stride) > limits.max_depthwise_stride:
        return f"depthwise convolution stride {stride}: {limits.family} supports stride 1-{limits.max_depthwise_stride}"
    if limits.max_stride is not None and max(stride) > limits.max_stride and (max(dilation) > 1 or any(padding)):
        return (f"stride {stride} > {limits.max_stride} on {limits.family} with dilation {dilation} and padding "
                f"{padding}: Vela supports it only with dilation 1 and no padding")
    return None


def weight_sum_objection(target: Any, largest_sum: int) -> Optional[str]:
    """Why a convolution whose output channels sum at most ``largest_sum`` absolute int8
    weights cannot run (Vela's weight encoder's limit)."""
    limit = family_constraints(target).max_weight_sum
    if largest_sum > limit:
        return f"sum of absolute weights of one output channel is {largest_sum} (Vela's limit {limit})"
    return None


def pooling_objection(target: Any, kind: str, kernel: Sequence[int], stride: Sequence[int],
                      padding: Sequence[int]) -> Optional[str]:
    """Why ``target``'s family cannot run a ``kind`` ("max" or "avg") pooling with this
    (H, W) kernel, stride and padding."""
    limits = family_constraints(target)
    kernel, stride, padding = list(kernel), list(stride), list(padding)
    largest = limits.max_padded_pool_kernel
    if any(padding) and max(kernel) > largest:
        name = "average" if kind == "avg" else "max"
        return f"{name} pooling kernel {kernel} with padding: at most {largest}x{largest}"
    if kernel[0] > limits.max_kernel_height or kernel[0] * kernel[1] > limits.max_kernel_product:
        return (f"pooling kernel {kernel}: height <= {limits.max_kernel_height} and product "
                f"<= {limits.max_kernel_product}")
    if any(padding) and max(stride) > limits.max_padded_pool_stride:
        return (f"pooling stride {stride} with padding: {limits.family} supports stride > "
                f"{limits.max_padded_pool_stride} only without padding")
    return None


def upsampling_objection(target: Any, mode: str, in_hw: Sequence[int], out_hw: Sequence[int],
                         align_corners: bool = False) -> Optional[str]:
    """Why ``target``'s family cannot upsample (H, W) ``in_hw`` to ``out_hw`` by ``mode``
    ("nearest" or "bilinear") RESIZE."""
    (ih, iw), (oh, ow) = in_hw, out_hw
    if oh % ih or ow % iw:
        return f"upsampling {[ih, iw]} to {[oh, ow]} is not by integer factors"
    factors = (oh // ih, ow // iw)
    limits = family_constraints(target)
    if limits.bilinear_resize or mode == "nearest":
        if limits.resize_factors is None:
            if max(factors) > limits.max_resize_factor:
                return f"upsampling factors {factors}: at most {limits.max_resize_factor}"
            return None
        if factors != (1, 1) and (factors[0] != factors[1] or factors[0] not in limits.resize_factors):
            return f"upsampling factors {factors}: {limits.family} supports equal factors of {_either(limits.resize_factors)}"
        return None
    if factors == (2, 2) and not align_corners:
        return None  # nearest 2x and a 3x3 filter (tosa/ops/resize.py: emit_bilinear_2x_as_filter)
    return (f"bilinear upsampling by {list(factors)}{' with aligned corners' if align_corners else ''}: "
            f"{limits.family} runs 2x without aligned corners (Vela's bilinear RESIZE is Ethos-U85 only)")


def bilinear_as_filter(target: Any) -> bool:
    """Whether bilinear upsampling on ``target`` is nearest 2x and a 3x3 filter (the family has
    no bilinear RESIZE)."""
    return not family_constraints(target).bilinear_resize


def reduction_objection(target: Any, reduced: Sequence[int], bits: int = 8, *, global_pool: bool = False) -> Optional[str]:
    """Why ``target``'s family cannot reduce axes of sizes ``reduced`` of ``bits``-bit data;
    a ``global_pool`` (a mean over H and W of a 4-D tensor) runs as one pooling window."""
    limits = family_constraints(target)
    reduced = [int(size) for size in reduced]
    if any(size >= limits.max_reduced_axis for size in reduced):
        return f"reduces an axis of size {max(reduced)}; Vela supports reduced axes < {limits.max_reduced_axis}"
    count, most = math.prod(reduced), limits.reduced_elements_limit(bits)
    if count > most:
        return f"reduces {count} elements; Vela's limit for int{bits} is {most}"
    if global_pool:
        return pooling_objection(target, "avg", reduced, reduced, (0, 0))
    if count > limits.max_reduced_axis:
        return f"reduces {count} elements per output; Vela supports at most {limits.max_reduced_axis}"
    return None


def softmax_objection(target: Any, rows: int) -> Optional[str]:
    """Why ``target``'s family cannot run a softmax over ``rows`` rows."""
    limit = family_constraints(target).max_softmax_rows
    if rows >= limit:
        return f"softmax over {rows} rows; Vela supports fewer than {limit}"
    return None


def matmul_objection(target: Any, reduced: int, dtypes: Sequence[str] = ()) -> Optional[str]:
    """Why ``target``'s family cannot multiply two computed matrices over a reduced axis of
    ``reduced`` elements whose quantized inputs have ``dtypes`` ("int8", "int16")."""
    limits = family_constraints(target)
    if reduced > limits.max_matmul_reduced_axis:
        return f"matrix product over {reduced} elements; Vela's limit is {limits.max_matmul_reduced_axis}"
    for dtype in dtypes:
        if dtype not in limits.dynamic_matmul_dtypes:
            return (f"matrix product of two tensors with {dtype} input: {limits.family} needs "
                    f"{_either(limits.dynamic_matmul_dtypes)}")
    return None
