"""Elementwise binary kernels against eager PyTorch: add, sub, mul, div (Tensor and
Scalar overloads), minimum, maximum; broadcasting, wrapped-number scalars, dtype
promotion, 0-dim operands and integer wrap-around.

The variants of a test (operators x dtypes x shapes) are compiled into one program
with check_op.many: one export per test keeps the suite fast, and a failure names
every variant that differs."""

from __future__ import annotations

import torch
from torch.testing import make_tensor

aten = torch.ops.aten

INT_DTYPES = [torch.int8, torch.uint8, torch.int16, torch.int32, torch.int64]
REAL_DTYPES = [torch.float32, torch.float64, *INT_DTYPES]

# (shape of self, shape of other): equal, trailing, both sides, rank-1 vs rank-2, 0-dim.
BROADCASTS = [
    ((2, 3, 4), (2, 3, 4)),
    ((2, 3, 4), (4,)),
    ((2, 1, 4), (3, 1)),
    ((1,), (2, 3)),
    ((), (2, 3)),
    ((2, 3), ()),
]

ARITHMETIC = {
    "add": lambda x, y: x + y,
    "add_alpha": lambda x, y: torch.add(x, y, alpha=3),
    "sub": lambda x, y: x - y,
    "sub_alpha": lambda x, y: torch.sub(x, y, alpha=2),
    "mul": lambda x, y: x * y,
}
ADD_SUB_MUL = ["aten::add.out", "aten::sub.out", "aten::mul.out"]


def tensor(shape, dtype, **kwargs) -> torch.Tensor:
    return make_tensor(shape, dtype=dtype, device="cpu", **kwargs)


def name_of(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def test_arithmetic_over_dtypes(check_op) -> None:
    cases = [
        (f"{name}_{name_of(d)}", function, (tensor((3, 4), d), tensor((1, 4), d)))
        for name, function in ARITHMETIC.items()
        for d in REAL_DTYPES
    ]
    check_op.many(cases, ops=ADD_SUB_MUL)


def test_arithmetic_broadcasting(check_op) -> None:
    cases = [
        (f"{name}_{a}@{b}", ARITHMETIC[name], (tensor(a, torch.float32), tensor(b, torch.float32)))
        for name in ("add", "sub", "mul")
        for a, b in BROADCASTS
    ]
    check_op.many(cases, ops=ADD_SUB_MUL)


def test_integer_overflow_wraps(check_op) -> None:
    cases = []
    for dtype in INT_DTYPES:
        info = torch.iinfo(dtype)
        x = torch.tensor([info.max, info.min, info.max - 1, info.min + 1, 7], dtype=dtype)
        y = torch.tensor([3, 5, info.max, info.min + 2, info.max], dtype=dtype)
        cases += [(f"{name}_{name_of(dtype)}", ARITHMETIC[name], (x, y)) for name in ("add", "sub", "mul")]
    check_op.many(cases, ops=ADD_SUB_MUL)


WRAPPED_NUMBERS = {
    "add_int": (lambda x: x + 2, "aten::add.out"),
    "rsub_float": (lambda x: 2.5 - x, "aten::sub.out"),
    "mul_int": (lambda x: x * 3, "aten::mul.out"),
    "mul_float": (lambda x: x * 2.5, "aten::mul.out"),  # int tensor * float number -> float
    "div_int": (lambda x: x / 4, "aten::div.out"),
}


def test_wrapped_number_operand(check_op) -> None:
    """A Python number operand does not promote the tensor's dtype (except int -> float)."""
    dtypes = [torch.float32, torch.float64, torch.int32, torch.uint8, torch.int64]
    cases = [
        (f"{name}_{name_of(d)}", function, (tensor((2, 5), d),))
        for name, (function, _) in WRAPPED_NUMBERS.items()
        for d in dtypes
    ]
    check_op.many(cases, ops=sorted({op for _, op in WRAPPED_NUMBERS.values()}))


MIXED_DTYPES = [
    (torch.int32, torch.float32),  # int + float -> float
    (torch.int8, torch.int32),
    (torch.uint8, torch.int8),  # -> int16
    (torch.float32, torch.float64),
    (torch.bool, torch.int16),
    (torch.int64, torch.float64),
]


def test_mixed_dtype_promotion(check_op) -> None:
    cases = [
        (f"{name}_{name_of(a)}_{name_of(b)}", ARITHMETIC[name], (tensor((2, 4), a), tensor((1, 4), b)))
        for name in ("add", "sub", "mul")
        for a, b in MIXED_DTYPES
        if not (name == "sub" and torch.bool in (a, b))  # torch refuses bool subtraction
    ]
    check_op.many(cases, ops=ADD_SUB_MUL)


def test_zero_dim_operand_and_bool(check_op) -> None:
    """A 0-dim tensor keeps the other operand's dtype within a category and promotes
    across categories (int tensor * 0-dim float64 -> float64); bool * bool is bool."""
    pairs = [(torch.float32, torch.float64), (torch.int8, torch.int64), (torch.int32, torch.float64),
             (torch.float64, torch.int32)]  # fmt: skip
    cases = [
        (f"{name_of(a)}_{name_of(b)}", lambda x, y: x * y, (tensor((3, 2), a), tensor((), b)))
        for a, b in pairs
    ]
    cases.append(("bool_bool", lambda x, y: x * y, (tensor((4, 5), torch.bool), tensor((1, 5), torch.bool))))
    check_op.many(cases, ops=["aten::mul.out"])


def _nonzero(t: torch.Tensor) -> torch.Tensor:
    return torch.where(t == 0, torch.ones_like(t), t)


def test_div(check_op) -> None:
    """True division over broadcast shapes; integer inputs give a float result; x / 0
    follows IEEE (inf, -inf, NaN)."""
    cases = [
        (f"{name_of(dtype)}_{a}@{b}", lambda x, y: x / y, (tensor(a, dtype), _nonzero(tensor(b, dtype))))
        for dtype in (torch.float32, torch.float64, torch.int32, torch.int64)
        for a, b in BROADCASTS
    ]
    zeros = (torch.tensor([1.0, -2.0, 0.0, 3.0]), torch.tensor([0.0, 0.0, 0.0, -0.0]))
    cases.append(("by_zero", lambda x, y: x / y, zeros))
    check_op.many(cases, ops=["aten::div.out"])


SCALAR_OVERLOADS = {
    "add": lambda x, s: aten.add.Scalar(x, s),
    "add_alpha": lambda x, s: aten.add.Scalar(x, s, 2),
    "sub": lambda x, s: aten.sub.Scalar(x, s),
    "sub_alpha": lambda x, s: aten.sub.Scalar(x, s, 3),
    "mul": lambda x, s: aten.mul.Scalar(x, s),
}


def test_scalar_overloads(check_op) -> None:
    """The Scalar overloads (torch.export keeps them when a model calls them): an
    integral scalar on every dtype, a float scalar on float and int tensors (an int
    tensor with a float scalar gives a float result), div by int and float scalars."""
    cases = []
    for name, function in SCALAR_OVERLOADS.items():
        cases += [(f"{name}_{name_of(d)}_int", lambda x, f=function: f(x, 3), (tensor((3, 4), d),)) for d in REAL_DTYPES]
        cases += [
            (f"{name}_{name_of(d)}_float", lambda x, f=function: f(x, -1.75), (tensor((3, 4), d),))
            for d in (torch.float32, torch.float64, torch.int32)
        ]
    cases += [
        (f"div_{name_of(d)}_{s}", lambda x, s=s: aten.div.Scalar(x, s), (tensor((3, 4), d),))
        for d in (torch.float32, torch.float64, torch.int64)
        for s in (4, -0.5)
    ]
    ops = ["aten::add.Scalar_out", "aten::sub.Scalar_out", "aten::mul.Scalar_out", "aten::div.Scalar_out"]
    check_op.many(cases, ops=ops)


def test_scalar_overloads_keep_int64_precision(check_op) -> None:
    """An integral Scalar beyond 2**53 must not pass through a double."""
    x = torch.tensor([0, 1, -(2**60)], dtype=torch.int64)
    cases = [
        ("add", lambda t: aten.add.Scalar(t, 2**53 + 1), (x,)),
        ("sub", lambda t: aten.sub.Scalar(t, 2**60 + 3), (x,)),
        ("mul", lambda t: aten.mul.Scalar(t, 2**40 + 1), (x,)),
    ]
    check_op.many(cases, ops=["aten::add.Scalar_out", "aten::sub.Scalar_out", "aten::mul.Scalar_out"], exact=True)


def test_minimum_maximum(check_op) -> None:
    cases = []
    for name in ("minimum", "maximum"):
        function = getattr(torch, name)
        cases += [(f"{name}_{name_of(d)}", function, (tensor((2, 3, 4), d), tensor((3, 1), d))) for d in [*REAL_DTYPES, torch.bool]]
        cases.append((f"{name}_int32_float32", function, (tensor((3, 4), torch.int32), tensor((3, 4), torch.float32))))
    check_op.many(cases, ops=["aten::minimum.out", "aten::maximum.out"], exact=True)


def test_minimum_maximum_propagate_nan(check_op) -> None:
    nan = float("nan")
    x = torch.tensor([nan, 1.0, nan, -2.0, float("inf")])
    y = torch.tensor([0.0, nan, nan, -3.0, 5.0])
    cases = [(name, getattr(torch, name), (x, y)) for name in ("minimum", "maximum")]
    check_op.many(cases, ops=["aten::minimum.out", "aten::maximum.out"], exact=True)
