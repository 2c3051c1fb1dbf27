"""Reduction and scan kernels against eager PyTorch: mean (over dims and over
everything), sum, prod, amax/amin, argmax/argmin, max/min (along a dim with indices,
and over everything), var (correction and unbiased forms), var_mean, cumsum; single,
multiple, negative and all dimensions, keepdim, integer and bool inputs (sum, prod and
cumsum promote them to int64), dtype arguments, NaN, ties, empty reductions, global
average pooling."""

from __future__ import annotations

import pytest
import torch
from torch import nn
from torch.testing import make_tensor

INT_DTYPES = [torch.int8, torch.uint8, torch.int16, torch.int32, torch.int64]
FLOAT_DTYPES = [torch.float32, torch.float64]
ALL_DTYPES = [*FLOAT_DTYPES, *INT_DTYPES, torch.bool]
aten = torch.ops.aten
NAN, INF = float("nan"), float("inf")


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


def test_mean_of_everything(check_op) -> None:
    """mean() with no dim exports as aten.mean (mean.dtype_out): a 0-dim result; a dtype
    argument averages integer tensors."""
    cases = [(f"{name_of(d)}", lambda t: t.mean(), (tensor((2, 3, 4), d),)) for d in FLOAT_DTYPES]
    cases += [(f"{name_of(d)}_dtype", lambda t: t.mean(dtype=torch.float64), (tensor((3, 5), d),)) for d in (torch.float32, torch.int32, torch.uint8, torch.bool)]
    cases += [("0dim", lambda t: t.mean(), (torch.tensor(2.5),)), ("empty", lambda t: t.mean(), (torch.empty(0, 2),))]
    check_op.many(cases, ops=["aten::mean.dtype_out"])


def test_amin(check_op) -> None:
    cases = []
    for dtype in ALL_DTYPES:
        x = tensor((2, 3, 4, 5), dtype)
        cases += [(f"{name_of(dtype)}_{dims}_keep{keep}", lambda t, d=dims, k=keep: t.amin(d, keepdim=k), (x,)) for dims, keep in DIMS]
    x = torch.tensor([[1.0, NAN, -3.0], [INF, INF, INF], [2.0, -INF, NAN]])
    cases += [("nan_rows", lambda t: t.amin(1), (x,)), ("nan_all", lambda t: t.amin(), (x,))]
    check_op.many(cases, ops=["aten::amin.out"], exact=True)


ARG_VARIANTS = [
    ("dim1", lambda t, f: f(t, 1)),
    ("dim0_keep", lambda t, f: f(t, 0, keepdim=True)),
    ("dim_neg1", lambda t, f: f(t, -1)),
    ("flattened", lambda t, f: f(t)),
    ("flattened_keep", lambda t, f: f(t, keepdim=True)),
]


def test_argmin(check_op) -> None:
    """Ties give the first minimum; NaN counts as the minimum. (PyTorch refuses bool.)"""
    cases = []
    for dtype in (*FLOAT_DTYPES, *INT_DTYPES):
        x = tensor((3, 4, 5), dtype, low=0 if dtype is torch.uint8 else -3, high=3)
        cases += [(f"{name_of(dtype)}_{name}", lambda t, v=variant: v(t, torch.argmin), (x,)) for name, variant in ARG_VARIANTS]
    x = torch.tensor([[1.0, -3.0, -3.0, 0.0], [NAN, -5.0, NAN, 1.0], [2.0, 2.0, 2.0, 2.0], [-1.0, -4.0, 0.0, NAN]])
    cases += [(f"nan_{name}", lambda t, v=variant: v(t, torch.argmin), (x,)) for name, variant in ARG_VARIANTS]
    check_op.many(cases, ops=["aten::argmin.out"])


@pytest.mark.parametrize("name", ["max", "min"])
def test_max_min_along_dim(check_op, name: str) -> None:
    """Values and the first position of the extreme along dim, keepdim, negative dims,
    NaN (the first NaN wins), 0-dim input, every dtype."""
    function = getattr(torch, name)
    cases = []
    for dtype in ALL_DTYPES:
        x = tensor((3, 4, 5), dtype, low=0 if dtype in (torch.uint8, torch.bool) else -3, high=3)
        cases += [
            (f"{name_of(dtype)}_dim1", lambda t: tuple(function(t, 1)), (x,)),
            (f"{name_of(dtype)}_dim_neg1_keep", lambda t: tuple(function(t, -1, keepdim=True)), (x,)),
        ]
    x = torch.tensor([[1.0, NAN, 3.0, NAN], [-INF, -INF, INF, 0.0]])
    cases += [("nan", lambda t: tuple(function(t, 1)), (x,)), ("0dim", lambda t: tuple(function(t, 0)), (torch.tensor(4.0),))]
    check_op.many(cases, ops=[f"aten::{name}.dim_{name}"])


def test_max_min_of_everything(check_op) -> None:
    cases = []
    for name in ("max", "min"):
        function = getattr(torch, name)
        cases += [(f"{name}_{name_of(d)}", function, (tensor((2, 3, 4), d),)) for d in ALL_DTYPES]
        cases += [(f"{name}_nan", function, (torch.tensor([1.0, NAN, -INF]),)), (f"{name}_0dim", function, (torch.tensor(-2),))]
    check_op.many(cases, ops=["aten::max.unary_out", "aten::min.unary_out"], exact=True)


def test_prod(check_op) -> None:
    """Along a dim (prod.int_out) and over everything (prod.out); integer and bool inputs
    give int64 (wrapping on overflow); dtype arguments; empty products are 1."""
    cases = []
    for dtype in ALL_DTYPES:
        x = tensor((3, 4, 2), dtype, low=-3 if dtype.is_signed else 0, high=3)
        cases += [
            (f"{name_of(dtype)}_dim1", lambda t: t.prod(1), (x,)),
            (f"{name_of(dtype)}_dim_neg1_keep", lambda t: t.prod(-1, keepdim=True), (x,)),
            (f"{name_of(dtype)}_all", lambda t: t.prod(), (x,)),
        ]
    cases += [
        ("int8_dtype_int32", lambda t: t.prod(0, dtype=torch.int32), (tensor((4, 3), torch.int8),)),
        ("float32_dtype_float64", lambda t: t.prod(dtype=torch.float64), (tensor((6,), torch.float32),)),
        ("int64_wraps", lambda t: t.prod(), (torch.tensor([2**40, 2**30, 3]),)),
        ("special", lambda t: t.prod(1), (torch.tensor([[NAN, 1.0], [INF, 0.0], [INF, -2.0]]),)),
        ("empty_dim", lambda t: t.prod(1), (torch.empty(3, 0),)),
        ("empty_all", lambda t: t.prod(), (torch.empty(0),)),
    ]
    check_op.many(cases, ops=["aten::prod.int_out", "aten::prod.out"])


VARIANCES = [
    ("dim1", lambda t: t.var(1)),
    ("dim_neg1_keep", lambda t: t.var(-1, keepdim=True)),
    ("dims_0_2", lambda t: t.var((0, 2))),
    ("all", lambda t: t.var()),
    ("correction0", lambda t: t.var(1, correction=0)),
    ("correction2.5", lambda t: torch.var(t, 1, correction=2.5)),
    ("correction_too_large", lambda t: torch.var(t, 1, correction=5)),  # N - correction < 0: inf
]


def test_var(check_op) -> None:
    cases = []
    for dtype in FLOAT_DTYPES:
        x = tensor((3, 4, 5), dtype, low=-10, high=10)
        cases += [(f"{name_of(dtype)}_{name}", f, (x,)) for name, f in VARIANCES]
    cases += [
        ("one_element", lambda t: t.var(1), (torch.tensor([[2.0], [3.0]]),)),  # 0 / 0: NaN
        ("constant_large", lambda t: t.var(), (torch.full((7,), 1e6) + torch.arange(7.0),)),
        ("nan", lambda t: t.var(1), (torch.tensor([[1.0, NAN, 2.0], [1.0, 2.0, 4.0]]),)),
    ]
    check_op.many(cases, ops=["aten::var.correction_out"])


def test_var_unbiased_form(check_op) -> None:
    """Core ATen turns var(dim, unbiased) into var.correction; kept, var.dim reaches
    var.out."""
    x = tensor((3, 4, 5), torch.float32)
    cases = [
        (f"unbiased_{unbiased}_{dims}_keep{keep}", lambda t, u=unbiased, d=dims, k=keep: aten.var.dim(t, d, u, k), (x,))
        for unbiased in (True, False)
        for dims, keep in (([1], False), ([0, -1], True), (None, False))
    ]
    cases.append(("float64", lambda t: aten.var.dim(t, [0]), (tensor((4, 2), torch.float64),)))
    check_op.many(cases, ops=["aten::var.out"], preserve=[aten.var.dim])


def test_var_mean(check_op) -> None:
    cases = []
    for dtype in FLOAT_DTYPES:
        x = tensor((3, 4, 5), dtype, low=-10, high=10)
        cases += [
            (f"{name_of(dtype)}_dim1", lambda t: torch.var_mean(t, 1), (x,)),
            (f"{name_of(dtype)}_dims_keep", lambda t: torch.var_mean(t, (0, 2), keepdim=True), (x,)),
            (f"{name_of(dtype)}_all_correction0", lambda t: torch.var_mean(t, correction=0), (x,)),
        ]
    check_op.many(cases, ops=["aten::var_mean.correction_out"])


def test_cumsum(check_op) -> None:
    """Every dim (negative too), integer and bool inputs (int64 result, wrapping), dtype
    arguments, NaN and infinities carried along, 0-dim and empty inputs."""
    cases = []
    for dtype in ALL_DTYPES:
        x = tensor((3, 4, 5), dtype)
        cases += [(f"{name_of(dtype)}_dim{dim}", lambda t, d=dim: t.cumsum(d), (x,)) for dim in (0, 1, -1)]
    cases += [
        ("int8_dtype_int8", lambda t: t.cumsum(0, dtype=torch.int8), (torch.full((5,), 100, dtype=torch.int8),)),
        ("int32_dtype_float32", lambda t: t.cumsum(0, dtype=torch.float32), (torch.tensor([16777217, 1, 2], dtype=torch.int32),)),
        ("int64_wraps", lambda t: t.cumsum(0), (torch.tensor([2**62, 2**62, 2**62]),)),
        ("special", lambda t: t.cumsum(1), (torch.tensor([[1.0, NAN, 2.0], [INF, -INF, 1.0]]),)),
        ("0dim", lambda t: t.cumsum(0), (torch.tensor(3.0),)),
        ("empty", lambda t: t.cumsum(1), (torch.empty(2, 0),)),
        ("long_row", lambda t: t.cumsum(0), (torch.rand(1000),)),
    ]
    check_op.many(cases, ops=["aten::cumsum.out"])
