"""Logical and bitwise kernels against eager PyTorch (exact): logical_and/or/xor/not on
every dtype (non-zero and NaN are true; mixed dtypes, broadcasting),
bitwise and/or/xor/not with tensors and scalars (bool included), shifts with tensor and
scalar amounts (negative amounts and amounts past the dtype's width), and the any
reductions (all elements, one dim, several dims, dim=None vs dim=[])."""

from __future__ import annotations

import torch
from torch.testing import make_tensor

aten = torch.ops.aten

INT_DTYPES = [torch.int8, torch.uint8, torch.int16, torch.int32, torch.int64]
DTYPES = [torch.float32, torch.float64, *INT_DTYPES, torch.bool]
NAN = float("nan")

LOGICAL = {
    "and": torch.logical_and,
    "or": torch.logical_or,
    "xor": torch.logical_xor,
}
LOGICAL_OPS = [f"aten::logical_{name}.out" for name in LOGICAL]


def tensor(shape, dtype, **kwargs) -> torch.Tensor:
    return make_tensor(shape, dtype=dtype, device="cpu", **kwargs)


def name_of(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def sparse(shape, dtype) -> torch.Tensor:
    """Values with many zeros, so that both truth values occur."""
    t = tensor(shape, dtype, low=0 if dtype in (torch.uint8, torch.bool) else -2, high=2)
    return t if dtype is torch.bool else t * (torch.rand(shape) > 0.4).to(dtype)


def test_logical_binary(check_op) -> None:
    cases = []
    for dtype in DTYPES:
        x, y = sparse((3, 4), dtype), sparse((4,), dtype)
        cases += [(f"{name}_{name_of(dtype)}", f, (x, y)) for name, f in LOGICAL.items()]
    special = torch.tensor([NAN, 0.0, -0.0, NAN, 1.0])
    other = torch.tensor([0, 0, 1, 1, 0], dtype=torch.int32)
    cases += [(f"{name}_nan_is_true", f, (special, other)) for name, f in LOGICAL.items()]
    cases += [(f"{name}_0dim", f, (torch.tensor(True), sparse((5,), torch.float32))) for name, f in LOGICAL.items()]
    cases += [(f"{name}_uint8_int64", f, (sparse((2, 3), torch.uint8), sparse((2, 1), torch.int64))) for name, f in LOGICAL.items()]
    check_op.many(cases, ops=LOGICAL_OPS)


def test_logical_not(check_op) -> None:
    cases = [(name_of(d), torch.logical_not, (sparse((3, 4), d),)) for d in DTYPES]
    cases.append(("nan_and_zeros", torch.logical_not, (torch.tensor([NAN, 0.0, -0.0, float("inf")]),)))
    cases.append(("0dim", torch.logical_not, (torch.tensor(0),)))
    cases.append(("empty", torch.logical_not, (torch.empty(3, 0),)))
    check_op.many(cases, ops=["aten::logical_not.out"])


BITWISE = {
    "and": (torch.bitwise_and, lambda x, y: x & y),
    "or": (torch.bitwise_or, lambda x, y: x | y),
    "xor": (torch.bitwise_xor, lambda x, y: x ^ y),
}
BITWISE_DTYPES = [*INT_DTYPES, torch.bool]


def test_bitwise_tensors(check_op) -> None:
    cases = []
    for dtype in BITWISE_DTYPES:
        x, y = tensor((3, 4), dtype), tensor((4,), dtype)
        for name, (function, operator) in BITWISE.items():
            cases.append((f"{name}_{name_of(dtype)}", function, (x, y)))
        cases.append((f"not_{name_of(dtype)}", torch.bitwise_not, (x,)))
    cases += [(f"{name}_int8_int32", operator, (tensor((3, 4), torch.int8), tensor((3, 1), torch.int32))) for name, (_, operator) in BITWISE.items()]
    cases += [(f"{name}_bool_int16", operator, (tensor((4,), torch.bool), tensor((4,), torch.int16))) for name, (_, operator) in BITWISE.items()]
    cases.append(("not_extremes", torch.bitwise_not, (torch.tensor([0, -1, 2**63 - 1, -(2**63)]),)))
    ops = [f"aten::bitwise_{name}.Tensor_out" for name in BITWISE] + ["aten::bitwise_not.out"]
    check_op.many(cases, ops=ops, exact=True)


def test_bitwise_scalars(check_op) -> None:
    """Integral scalars (wrapping into narrow dtypes: 300 is 44 in int8), negative ones,
    bool scalars on bool tensors, and an int scalar on a bool tensor (int64 result)."""
    cases = []
    for dtype in INT_DTYPES:
        x = tensor((3, 4), dtype)
        for name, (function, _) in BITWISE.items():
            cases += [(f"{name}_{name_of(dtype)}_{s}", lambda t, s=s, f=function: f(t, s), (x,)) for s in (5, -3, 300)]
    for name, (function, _) in BITWISE.items():
        cases.append((f"{name}_bool_true", lambda t, f=function: f(t, True), (tensor((6,), torch.bool),)))
        cases.append((f"{name}_bool_int", lambda t, f=function: f(t, 6), (tensor((6,), torch.bool),)))
    check_op.many(cases, ops=[f"aten::bitwise_{name}.Scalar_out" for name in BITWISE], exact=True)


SHIFTS = {
    "left": (torch.bitwise_left_shift, lambda x, y: x << y),
    "right": (torch.bitwise_right_shift, lambda x, y: x >> y),
}
SHIFT_OPS = [f"aten::bitwise_{name}_shift.{overload}" for name in SHIFTS for overload in ("Tensor_out", "Tensor_Scalar_out")]


def test_shifts(check_op) -> None:
    """Amounts from 0 to past the width, negative amounts (0, or -1 for negative values
    shifted right), values that lose bits; the << and >> operators; scalar amounts."""
    cases = []
    for dtype in INT_DTYPES:
        bits = torch.iinfo(dtype).bits
        info = torch.iinfo(dtype)
        values = torch.tensor([1, -1, info.min, info.max, 5, -5, 3, -128, 77] if dtype.is_signed else [1, 255, 0, 128, 5, 77, 3, 9, 200], dtype=torch.int64)
        amounts = torch.tensor([0, 1, bits - 1, bits, bits + 3, -1, 2, 7, 70] if dtype.is_signed else [0, 1, bits - 1, bits, bits + 3, 130, 2, 7, 200])
        x, y = values.to(dtype), amounts.to(dtype)
        for name, (function, operator) in SHIFTS.items():
            cases.append((f"{name}_{name_of(dtype)}", function, (x, y)))
            cases.append((f"{name}_operator_{name_of(dtype)}", operator, (x, y[:1].clone())))
            cases += [(f"{name}_{name_of(dtype)}_by_{s}", lambda t, s=s, f=function: f(t, s), (x,)) for s in (3, bits + 1)]
        cases.append((f"left_operator_scalar_{name_of(dtype)}", lambda t: t << 2, (x,)))
        cases.append((f"right_operator_scalar_{name_of(dtype)}", lambda t: t >> 1, (x,)))
    check_op.many(cases, ops=SHIFT_OPS, exact=True)


# (label, function): any over everything, over one dim (any.dim), over several dims
# (any.dims), with keepdim, and dim=[] which reduces nothing.
ANY_VARIANTS = [
    ("all", lambda t: t.any()),
    ("dim1", lambda t: t.any(1)),
    ("dim_neg1_keep", lambda t: t.any(-1, keepdim=True)),
    ("dims_0_2", lambda t: t.any((0, 2))),
    ("dims_all_keep", lambda t: aten.any.dims(t, [0, 1, 2], True)),
    ("dims_none", lambda t: aten.any.dims(t, None)),
    ("dims_empty", lambda t: aten.any.dims(t, [])),
]


def test_any(check_op) -> None:
    """Every dtype (uint8 gives a uint8 result, the others bool: the kernels' path for
    truth values into a non-bool out); rows with no non-zero element; NaN counts as
    true; an empty reduction is false."""
    cases = []
    for dtype in DTYPES:
        x = torch.zeros(2, 3, 4, dtype=dtype)
        x[0, 1, 2] = 1
        x[1, 2, 0] = 1
        cases += [(f"{name}_{name_of(dtype)}", f, (x,)) for name, f in ANY_VARIANTS]
    cases += [
        ("nan", lambda t: t.any(1), (torch.tensor([[NAN, 0.0], [0.0, -0.0]]),)),
        ("empty_all", lambda t: t.any(), (torch.empty(0, 3),)),
        ("empty_dim", lambda t: t.any(0), (torch.empty(0, 3),)),
        ("0dim", lambda t: t.any(), (torch.tensor(2.0),)),
    ]
    check_op.many(cases, ops=["aten::any.all_out", "aten::any.out", "aten::any.dims_out"])
