"""Comparison and selection kernels against eager PyTorch (exact): eq/ne/lt/le/gt/ge
with a Scalar and with a Tensor on float, integer and bool tensors (integral and
fractional scalars, NaN, infinities, large int64 values; broadcasting and PyTorch's
type promotion between tensors, 0-dim ones included), isnan/isinf, and where.self with
three-way broadcasting, mixed dtypes and conditions computed in the program or given
as inputs."""

from __future__ import annotations

import pytest
import torch
from torch.testing import make_tensor

DTYPES = [torch.float32, torch.float64, torch.int8, torch.uint8, torch.int16, torch.int32, torch.int64, torch.bool]

COMPARISONS = {
    "gt": (lambda x, s: x > s, "aten::gt.Scalar_out"),
    "lt": (lambda x, s: x < s, "aten::lt.Scalar_out"),
    "eq": (lambda x, s: x == s, "aten::eq.Scalar_out"),
    "ne": (lambda x, s: x != s, "aten::ne.Scalar_out"),
    "ge": (lambda x, s: x >= s, "aten::ge.Scalar_out"),
    "le": (lambda x, s: x <= s, "aten::le.Scalar_out"),
}
TENSOR_OPS = [f"aten::{name}.Tensor_out" for name in COMPARISONS]


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


def test_compare_tensors(check_op) -> None:
    """Every comparison on every dtype, a small value range so that ties occur, with
    broadcasting (a row against a matrix, 0-dim against a vector)."""
    cases = []
    for dtype in DTYPES:
        x = tensor((3, 4), dtype, low=0 if dtype is torch.uint8 else -3, high=3)
        row = tensor((4,), dtype, low=0 if dtype is torch.uint8 else -3, high=3)
        if dtype.is_floating_point:
            x, row = x.round(), row.round()
        for name, (function, _) in COMPARISONS.items():
            cases.append((f"{name}_{name_of(dtype)}", function, (x, row)))
    cases += [(f"{name}_0dim", f, (torch.tensor(1.0), torch.tensor([0.0, 1.0, 2.0]))) for name, (f, _) in COMPARISONS.items()]
    check_op.many(cases, ops=TENSOR_OPS, exact=True)


# (dtype of self and shape, dtype of other and shape): PyTorch compares in their result
# dtype, where a 0-dim tensor only counts when it is of a higher category.
PROMOTIONS = [
    ((torch.int8, (4,)), (torch.uint8, (4,))),  # int16: 200 (uint8) > -56 (int8)
    ((torch.int32, (4,)), (torch.float32, (4,))),  # float32: 16777217 rounds to 16777216
    ((torch.bool, (4,)), (torch.int16, (4,))),
    ((torch.int8, (4,)), (torch.int64, ())),  # int8: the 0-dim 300 wraps to 44
    ((torch.float32, (4,)), (torch.float64, ())),  # float32: the 0-dim 0.1 rounds
    ((torch.int32, (4,)), (torch.float64, ())),  # float64: a 0-dim float of a higher category
    ((torch.bool, (4,)), (torch.int64, ())),  # int64
]


def test_compare_tensors_with_type_promotion(check_op) -> None:
    values = {
        torch.int8: torch.tensor([44, -56, 0, 127], dtype=torch.int8),
        torch.uint8: torch.tensor([44, 200, 0, 127], dtype=torch.uint8),
        torch.int32: torch.tensor([16777217, -3, 7, 0], dtype=torch.int32),
        torch.float32: torch.tensor([16777216.0, -3.0, 7.5, 0.1], dtype=torch.float32),
        torch.bool: torch.tensor([True, False, True, False]),
        torch.int16: torch.tensor([1, 0, 2, -1], dtype=torch.int16),
    }
    zero_dim = {torch.int64: torch.tensor(300), torch.float64: torch.tensor(0.1, dtype=torch.float64)}
    cases = []
    for (a_type, a_shape), (b_type, b_shape) in PROMOTIONS:
        a = values[a_type]
        b = zero_dim[b_type] if b_shape == () else values[b_type]
        label = f"{name_of(a_type)}_{name_of(b_type)}{'_0dim' if b_shape == () else ''}"
        cases += [(f"{name}_{label}", f, (a, b)) for name, (f, _) in COMPARISONS.items()]
        cases += [(f"{name}_{label}_swapped", f, (b, a)) for name, (f, _) in (("lt", COMPARISONS["lt"]),)]
    check_op.many(cases, ops=TENSOR_OPS, exact=True)


def test_compare_tensors_special_values(check_op) -> None:
    nan, inf = float("nan"), float("inf")
    x = torch.tensor([nan, nan, 1.0, inf, -inf, 0.0, -0.0, inf])
    y = torch.tensor([nan, 1.0, nan, inf, inf, -0.0, 0.0, 1e38])
    big = torch.tensor([2**53, 2**53 + 1, 2**62, -(2**62)], dtype=torch.int64)
    big_other = torch.tensor([2**53 + 1, 2**53 + 1, 2**62 - 1, -(2**62)], dtype=torch.int64)
    cases = [(f"{name}_{name_of(d)}", f, (x.to(d), y.to(d))) for name, (f, _) in COMPARISONS.items() for d in (torch.float32, torch.float64)]
    cases += [(f"{name}_int64_beyond_2_53", f, (big, big_other)) for name, (f, _) in COMPARISONS.items()]
    check_op.many(cases, ops=TENSOR_OPS, exact=True)


def test_isnan_isinf(check_op) -> None:
    nan, inf = float("nan"), float("inf")
    x = torch.tensor([nan, inf, -inf, 0.0, -0.0, 1e38, -3.5, float("-nan")])
    cases = []
    for name, function in (("isnan", torch.isnan), ("isinf", torch.isinf)):
        cases += [(f"{name}_{name_of(d)}", function, (x.to(d),)) for d in (torch.float32, torch.float64)]
        cases += [(f"{name}_{name_of(d)}", function, (tensor((2, 3), d),)) for d in DTYPES if not d.is_floating_point]
        cases.append((f"{name}_0dim", function, (torch.tensor(nan),)))
        cases.append((f"{name}_empty", function, (torch.empty(0, 2),)))
    check_op.many(cases, ops=["aten::isnan.out", "aten::isinf.out"], exact=True)


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
