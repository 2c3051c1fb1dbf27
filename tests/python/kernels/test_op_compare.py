"""Comparison and selection kernels against eager PyTorch (exact): gt/lt/eq with a
Scalar on float, integer and bool tensors (integral and fractional scalars, NaN,
infinities, large int64 values), and where.self with three-way broadcasting, mixed
dtypes and conditions computed in the program or given as inputs."""

from __future__ import annotations

import pytest
import torch
from torch.testing import make_tensor

DTYPES = [torch.float32, torch.float64, torch.int8, torch.uint8, torch.int16, torch.int32, torch.int64, torch.bool]

COMPARISONS = {
    "gt": (lambda x, s: x > s, "aten::gt.Scalar_out"),
    "lt": (lambda x, s: x < s, "aten::lt.Scalar_out"),
    "eq": (lambda x, s: x == s, "aten::eq.Scalar_out"),
}


def tensor(shape, dtype=torch.float32, **kwargs) -> torch.Tensor:
    return make_tensor(shape, dtype=dtype, device="cpu", **kwargs)


def name_of(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def test_compare_with_scalar(check_op) -> None:
    """Every dtype against an integral scalar (hit exactly by some elements: small
    value range) and a fractional one."""
    cases = []
    for (name, (function, _)), dtype in ((c, d) for c in COMPARISONS.items() for d in DTYPES):
        x = tensor((4, 6), dtype, low=0 if dtype is torch.uint8 else -4, high=4)
        if dtype.is_floating_point:
            x = x.round()  # integral values, so that == 2 is true somewhere
        for scalar in ((1,) if dtype is torch.bool else (2, 1.5, -1)):
            cases.append((f"{name}_{name_of(dtype)}_{scalar}", lambda t, s=scalar, f=function: f(t, s), (x,)))
    check_op.many(cases, ops=[op for _, op in COMPARISONS.values()], exact=True)


@pytest.mark.parametrize("name", sorted(COMPARISONS))
def test_compare_special_values(check_op, name: str) -> None:
    """NaN compares false (and != itself); infinities order correctly; int64 values
    beyond 2**53 compare exactly against an integral scalar."""
    function, op = COMPARISONS[name]
    floats = torch.tensor([float("nan"), float("inf"), float("-inf"), 0.0, -0.0, 3.0])
    big = torch.tensor([2**53, 2**53 + 1, 2**62, -(2**62), 2**53 - 1], dtype=torch.int64)
    cases = [
        ("nan_scalar", lambda t: function(t, float("nan")), (floats,)),
        ("inf_scalar", lambda t: function(t, float("inf")), (floats,)),
        ("zero", lambda t: function(t, 0), (floats,)),
        ("int64_beyond_2_53", lambda t: function(t, 2**53 + 1), (big,)),
    ]
    # The scalar is converted to the tensor's dtype first, as in PyTorch: float32(0.1)
    # is above 0.1; -1 and 300 wrap into uint8; an int tensor meets a float scalar in float32.
    tenths = torch.tensor([0.1, 0.2, 0.3], dtype=torch.float32)
    cases += [
        ("float32_vs_0.1", lambda t: function(t, 0.1), (tenths,)),
        ("float64_vs_0.1", lambda t: function(t, 0.1), (tenths.double(),)),
        ("uint8_vs_-1", lambda t: function(t, -1), (torch.tensor([0, 1, 255], dtype=torch.uint8),)),
        ("int8_vs_300", lambda t: function(t, 300), (torch.tensor([44, 45, -1], dtype=torch.int8),)),
        ("int32_vs_float", lambda t: function(t, 16777216.5), (torch.tensor([16777217, 16777215], dtype=torch.int32),)),
        ("bool_vs_int", lambda t: function(t, 1), (torch.tensor([True, False]),)),
        ("bool_vs_float", lambda t: function(t, 0.5), (torch.tensor([True, False]),)),
    ]
    check_op.many(cases, ops=[op], exact=True)


def test_where(check_op) -> None:
    """Condition, self and other broadcast against each other."""
    cases = []
    for cond_shape, x_shape, y_shape in [((3, 4), (3, 4), (3, 4)), ((3, 1), (1, 4), (3, 4)), ((4,), (3, 4), (1,)), ((2, 1, 4), (3, 1), ())]:
        cases.append((
            f"{cond_shape}_{x_shape}_{y_shape}",
            torch.where,
            (tensor(cond_shape, torch.bool), tensor(x_shape), tensor(y_shape)),
        ))  # fmt: skip
    check_op.many(cases, ops=["aten::where.self_out"], exact=True)


def test_where_dtypes(check_op) -> None:
    cases = [
        (name_of(d), torch.where, (tensor((3, 4), torch.bool), tensor((3, 4), d), tensor((1, 4), d)))
        for d in DTYPES
    ]
    cases.append(("int32_float32", torch.where, (tensor((3, 4), torch.bool), tensor((3, 4), torch.int32), tensor((3, 4)))))
    cases.append(("int8_int64", torch.where, (tensor((3, 4), torch.bool), tensor((3, 4), torch.int8), tensor((3, 4), torch.int64))))
    check_op.many(cases, ops=["aten::where.self_out"], exact=True)


def test_where_with_computed_condition(check_op) -> None:
    """A comparison feeding where (the usual masking pattern) and a NaN-carrying branch."""
    x = torch.tensor([[1.0, float("nan"), -2.0], [0.5, -0.5, float("inf")]])
    y = tensor((2, 3))
    cases = [
        ("gt", lambda a, b: torch.where(a > 0, a, b), (x, y)),
        ("lt", lambda a, b: torch.where(a < 0.75, b, a), (x, y)),
        ("eq", lambda a, b: torch.where(a == -2, b, a), (x, y)),
    ]
    check_op.many(cases, ops=["aten::where.self_out", "aten::gt.Scalar_out", "aten::lt.Scalar_out", "aten::eq.Scalar_out"], exact=True)
