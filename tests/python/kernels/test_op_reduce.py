"""Reduction kernels against eager PyTorch: mean.out, sum.IntList_out, amax.out,
argmax.out; single, multiple, negative and all dimensions, keepdim, integer and bool
inputs (sum promotes them to int64), dtype arguments, NaN, ties, global average pooling."""

from __future__ import annotations

import pytest
import torch
from torch import nn
from torch.testing import make_tensor

INT_DTYPES = [torch.int8, torch.uint8, torch.int16, torch.int32, torch.int64]


def tensor(shape, dtype=torch.float32, **kwargs) -> torch.Tensor:
    return make_tensor(shape, dtype=dtype, device="cpu", **kwargs)


def name_of(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


# (dims, keepdim) on a [2, 3, 4, 5] input: last, first, middle, negative, several,
# non-adjacent, all four.
DIMS = [
    ([-1], False),
    ([0], True),
    ([1], False),
    ([-2, -1], True),
    ([0, 2], False),
    ([1, 3], True),
    ([3, 0, 1], False),
    ([0, 1, 2, 3], False),
]


def test_mean(check_op) -> None:
    """Float tensors over every kind of dims; integer tensors with a float dtype."""
    cases = []
    for dtype in (torch.float32, torch.float64):
        x = tensor((2, 3, 4, 5), dtype)
        cases += [(f"{name_of(dtype)}_{dims}_keep{keep}", lambda t, d=dims, k=keep: t.mean(d, keepdim=k), (x,)) for dims, keep in DIMS]
        cases.append((f"{name_of(dtype)}_global_avg_pool", nn.AdaptiveAvgPool2d(1), (x,)))
        cases.append((f"{name_of(dtype)}_rank1", lambda t: t.mean(0), (tensor((9,), dtype),)))
    cases += [
        (f"{name_of(d)}_dtype_float32", lambda t: torch.mean(t, (1,), dtype=torch.float32), (tensor((3, 4), d),))
        for d in (torch.int32, torch.int64, torch.uint8)
    ]
    check_op.many(cases, ops=["aten::mean.out"])


@pytest.mark.parametrize("dtypes", [(torch.float32, torch.float64), (*INT_DTYPES, torch.bool)], ids=["float", "int"])
def test_sum(check_op, dtypes: tuple[torch.dtype, ...]) -> None:
    """Integer and bool inputs give an int64 sum, as in PyTorch."""
    cases = []
    for dtype in dtypes:
        x = tensor((2, 3, 4, 5), dtype)
        cases += [(f"{name_of(dtype)}_{dims}_keep{keep}", lambda t, d=dims, k=keep: t.sum(d, keepdim=k), (x,)) for dims, keep in DIMS]
        cases.append((f"{name_of(dtype)}_everything", lambda t: t.sum(), (x,)))
    check_op.many(cases, ops=["aten::sum.IntList_out"])


def test_sum_with_dtype(check_op) -> None:
    cases = [
        ("float32_to_float64", lambda t: t.sum(1, dtype=torch.float64), (tensor((3, 4)),)),
        ("int8_to_int32", lambda t: t.sum(0, dtype=torch.int32), (tensor((3, 4), torch.int8),)),
        ("int32_to_float32", lambda t: t.sum(-1, dtype=torch.float32), (tensor((3, 4), torch.int32),)),
    ]
    check_op.many(cases, ops=["aten::sum.IntList_out"])


def test_sum_of_large_integers_does_not_overflow_int64_accumulation(check_op) -> None:
    x = torch.full((4, 50), 127, dtype=torch.int8)
    check_op(lambda t: t.sum(1), (x,), ops=["aten::sum.IntList_out"])


def test_amax(check_op) -> None:
    cases = []
    for dtype in (torch.float32, torch.float64, *INT_DTYPES, torch.bool):
        x = tensor((2, 3, 4, 5), dtype)
        cases += [(f"{name_of(dtype)}_{dims}_keep{keep}", lambda t, d=dims, k=keep: t.amax(d, keepdim=k), (x,)) for dims, keep in DIMS]
    check_op.many(cases, ops=["aten::amax.out"], exact=True)


def test_amax_nan_propagates(check_op) -> None:
    nan, inf = float("nan"), float("inf")
    x = torch.tensor([[1.0, nan, 3.0], [-inf, -inf, -inf], [2.0, inf, nan]])
    cases = [("rows", lambda t: t.amax(1), (x,)), ("columns", lambda t: t.amax(0, keepdim=True), (x,))]
    check_op.many(cases, ops=["aten::amax.out"], exact=True)


ARGMAX_VARIANTS = [
    ("dim1", lambda t: t.argmax(1)),
    ("dim0_keep", lambda t: t.argmax(0, keepdim=True)),
    ("dim_neg1", lambda t: t.argmax(-1)),
    ("flattened", lambda t: t.argmax()),
    ("flattened_keep", lambda t: torch.argmax(t, keepdim=True)),
]


def test_argmax(check_op) -> None:
    cases = []
    for dtype in (torch.float32, torch.float64, torch.int8, torch.uint8, torch.int32, torch.int64):
        x = tensor((3, 4, 5), dtype, low=0 if dtype is torch.uint8 else -3, high=3)  # a small range: many ties
        cases += [(f"{name_of(dtype)}_{name}", function, (x,)) for name, function in ARGMAX_VARIANTS]
    check_op.many(cases, ops=["aten::argmax.out"])


def test_argmax_ties_and_nan(check_op) -> None:
    """The first maximum wins; NaN counts as the maximum."""
    nan = float("nan")
    x = torch.tensor([[1.0, 3.0, 3.0, 0.0], [nan, 5.0, nan, 1.0], [2.0, 2.0, 2.0, 2.0], [-1.0, 4.0, 0.0, nan]])
    cases = [(name, function, (x,)) for name, function in ARGMAX_VARIANTS]
    check_op.many(cases, ops=["aten::argmax.out"])
