"""Elementwise unary kernels and activations against eager PyTorch: relu, hardtanh,
clamp, sigmoid, tanh, hardswish, hardsigmoid, leaky_relu, gelu, exp, log, sqrt, rsqrt,
neg, abs, pow(Tensor, Scalar); float and integer dtypes, integer inputs of float
functions, special values (NaN, +-inf, +-0), 0-dim and empty tensors."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from torch.testing import make_tensor

aten = torch.ops.aten

FLOAT_DTYPES = [torch.float32, torch.float64]
INT_DTYPES = [torch.int8, torch.uint8, torch.int16, torch.int32, torch.int64]
SHAPES = [(3, 4), (2, 3, 5), (), (7,)]

# name -> (function, out variant, lowest input, whether integer inputs are allowed)
FLOAT_FUNCTIONS = {
    "sigmoid": (torch.sigmoid, "aten::sigmoid.out", -8.0),
    "tanh": (torch.tanh, "aten::tanh.out", -4.0),
    "exp": (torch.exp, "aten::exp.out", -6.0),
    "log": (torch.log, "aten::log.out", 0.01),
    "sqrt": (torch.sqrt, "aten::sqrt.out", 0.0),
    "rsqrt": (torch.rsqrt, "aten::rsqrt.out", 0.01),
    "gelu": (F.gelu, "aten::gelu.out", -5.0),
    "gelu_tanh": (lambda x: F.gelu(x, approximate="tanh"), "aten::gelu.out", -5.0),
    "leaky_relu": (F.leaky_relu, "aten::leaky_relu.out", -5.0),
    "relu": (torch.relu, "aten::relu.out", -5.0),
    "neg": (torch.neg, "aten::neg.out", -5.0),
    "abs": (torch.abs, "aten::abs.out", -5.0),
}

SPECIAL_VALUES = torch.tensor(
    [float("nan"), float("inf"), float("-inf"), 0.0, -0.0, -1.5, 1e-30, 2.0, 100.0, -100.0]
)


def tensor(shape, dtype, **kwargs) -> torch.Tensor:
    return make_tensor(shape, dtype=dtype, device="cpu", **kwargs)


def name_of(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


# Functions that give a float result for integer inputs.
PROMOTING = {"sigmoid", "tanh", "exp", "log", "sqrt", "rsqrt"}


@pytest.mark.parametrize("name", sorted(FLOAT_FUNCTIONS))
def test_float_function(check_op, name: str) -> None:
    """Float32 and float64 over several shapes (incl. 0-dim) with inputs in the domain;
    special values (NaN, infinities, signed zeros, tiny, large, out of domain); integer
    and bool inputs of the functions that promote them to float."""
    function, op, low = FLOAT_FUNCTIONS[name]
    cases = [
        (f"{name_of(d)}_{list(s)}", function, (tensor(s, d, low=low, high=5.0),))
        for d in FLOAT_DTYPES
        for s in SHAPES
    ]
    values = SPECIAL_VALUES
    if name == "gelu":
        # Eager gelu(+inf) is NaN in float32 but inf in float64: no reference to follow.
        values = values[values != float("inf")]
    cases += [(f"special_{name_of(d)}", function, (values.to(d),)) for d in FLOAT_DTYPES]
    if name in PROMOTING:
        cases += [
            (f"from_{name_of(d)}", function, (tensor((3, 4), d, low=1, high=9),))
            for d in (torch.int32, torch.int64, torch.uint8, torch.bool)
        ]
    check_op.many(cases, ops=[op])


def test_integer_dtypes(check_op) -> None:
    """Integer tensors keep their dtype; abs/neg of the minimum wrap around as in PyTorch."""
    cases = []
    for dtype in INT_DTYPES:
        info = torch.iinfo(dtype)
        x = torch.cat([tensor((8,), dtype), torch.tensor([info.min, info.max, 0, 1], dtype=dtype)])
        cases += [(f"{name}_{name_of(dtype)}", FLOAT_FUNCTIONS[name][0], (x,)) for name in ("relu", "neg", "abs")]
    check_op.many(cases, ops=["aten::relu.out", "aten::neg.out", "aten::abs.out"])


def test_empty_tensors(check_op) -> None:
    cases = [(name, FLOAT_FUNCTIONS[name][0], (torch.empty(2, 0, 3),)) for name in ("relu", "exp", "abs")]
    check_op.many(cases, ops=["aten::relu.out", "aten::exp.out", "aten::abs.out"])


def test_leaky_relu_slopes(check_op) -> None:
    cases = [
        (f"{slope}_{name_of(d)}", lambda x, s=slope: F.leaky_relu(x, s), (tensor((4, 6), d),))
        for slope in (0.01, 0.2, 0.0, -0.5, 1.5)
        for d in FLOAT_DTYPES
    ]
    check_op.many(cases, ops=["aten::leaky_relu.out"])


HARDTANH_BOUNDS = [(0.0, 6.0), (-1.0, 1.0), (-0.5, 0.25), (2.0, 3.0)]


def test_hardtanh(check_op) -> None:
    """Float bounds on float tensors (NaN passes through), integer bounds on integer
    tensors, relu6."""
    cases = [
        (f"{low}_{high}_{name_of(d)}", lambda x, lo=low, hi=high: F.hardtanh(x, lo, hi),
         (torch.cat([tensor((12,), d, low=-8, high=8), SPECIAL_VALUES.to(d)]),))
        for low, high in HARDTANH_BOUNDS
        for d in FLOAT_DTYPES
    ]  # fmt: skip
    for dtype in INT_DTYPES:
        low = 2 if dtype is torch.uint8 else -2  # torch refuses negative limits on uint8
        x = tensor((12,), dtype, low=0 if dtype is torch.uint8 else -9, high=9)
        cases.append((name_of(dtype), lambda x, low=low: F.hardtanh(x, low, 5), (x,)))
    cases.append(("relu6_int8", F.relu6, (tensor((12,), torch.int8),)))
    check_op.many(cases, ops=["aten::hardtanh.out"])


CLAMPS = {
    "min_max": lambda x: torch.clamp(x, -0.5, 0.75),
    "min": lambda x: torch.clamp(x, min=-0.25),
    "max": lambda x: torch.clamp(x, max=0.5),
    "min_above_max": lambda x: torch.clamp(x, 1.0, -1.0),  # every element becomes max
}


def test_clamp(check_op) -> None:
    """min and max, min only, max only, min above max, on float tensors with special
    values and on integer tensors (a float bound on an int tensor gives a float)."""
    cases = [
        (f"{name}_{name_of(d)}", function, (torch.cat([tensor((3, 4), d).flatten(), SPECIAL_VALUES.to(d)]),))
        for name, function in CLAMPS.items()
        for d in FLOAT_DTYPES
    ]
    for dtype in INT_DTYPES:
        low = 0 if dtype is torch.uint8 else -3
        cases.append((f"{name_of(dtype)}_both", lambda x, low=low: torch.clamp(x, low, 5), (tensor((3, 4), dtype),)))
        cases.append((f"{name_of(dtype)}_min", lambda x, low=low: torch.clamp(x, min=low + 1), (tensor((3, 4), dtype),)))
    cases.append(("int32_float_bound", lambda x: torch.clamp(x, min=0.5), (tensor((3, 4), torch.int32),)))
    check_op.many(cases, ops=["aten::clamp.out"])


def test_hard_activations(check_op) -> None:
    """torch decomposes hardswish and hardsigmoid by default; exported with them kept,
    they reach their kernels. Inputs cover every segment of the piecewise functions."""
    values = torch.tensor([-5.0, -3.0, -2.999, -1.0, 0.0, 1.0, 2.999, 3.0, 5.0, float("nan"), float("inf")])
    cases = [
        (f"{name}_{name_of(d)}", getattr(F, name), (torch.cat([tensor((10,), d, low=-6, high=6), values.to(d)]),))
        for name in ("hardswish", "hardsigmoid")
        for d in FLOAT_DTYPES
    ]
    check_op.many(
        cases,
        ops=["aten::hardswish.out", "aten::hardsigmoid.out"],
        preserve=[aten.hardswish.default, aten.hardsigmoid.default],
    )


FLOAT_EXPONENTS = [2, 3, 0.5, -0.5, -1, 0, -2, 1.5, 0.3]


def test_pow_float(check_op) -> None:
    """Float bases (negative ones too: fractional exponents give NaN, as in PyTorch),
    with the exponents PyTorch computes specially (2, 3, +-0.5, -1, -2) and others."""
    values = torch.tensor([0.0, -0.0, 1.0, -2.0, float("inf"), float("-inf"), float("nan")])
    cases = [
        (f"{exponent}_{name_of(d)}", lambda x, e=exponent: x**e,
         (torch.cat([tensor((3, 4), d, low=-3, high=3).flatten(), values.to(d)]),))
        for exponent in FLOAT_EXPONENTS
        for d in FLOAT_DTYPES
    ]  # fmt: skip
    check_op.many(cases, ops=["aten::pow.Tensor_Scalar_out"])


def test_pow_integer(check_op) -> None:
    """Integer bases with non-negative integral exponents (wrapping on overflow); an
    integer base with a float exponent gives a float."""
    cases = [
        (f"{name_of(d)}^{e}", lambda x, e=e: x**e, (tensor((3, 4), d, low=0 if d is torch.uint8 else -20, high=20),))
        for d in INT_DTYPES
        for e in (0, 2, 3, 7)
    ]
    cases.append(("int32^2.5", lambda x: x**2.5, (tensor((3, 4), torch.int32, low=0, high=10),)))
    check_op.many(cases, ops=["aten::pow.Tensor_Scalar_out"])
