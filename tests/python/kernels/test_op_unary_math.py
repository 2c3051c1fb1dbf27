"""Elementwise math kernels against eager PyTorch: trigonometric and hyperbolic
functions and their inverses, erf, expm1, log10, log1p, log2, reciprocal, logit, the
rounding functions (ceil, floor, round, trunc) and sign; float32 and float64, integer
and bool inputs (promoted to float, or kept by the rounding functions), special values
(NaN, +-inf, +-0, out of domain), 0-dim, empty and non-contiguous inputs."""

from __future__ import annotations

import torch
from torch.testing import make_tensor

aten = torch.ops.aten

FLOAT_DTYPES = [torch.float32, torch.float64]
INT_DTYPES = [torch.int8, torch.uint8, torch.int16, torch.int32, torch.int64]
SHAPES = [(3, 4), (2, 3, 5), (), (7,)]

# name -> (function, lowest and highest input of the ordinary cases)
FLOAT_FUNCTIONS = {
    "acos": (torch.acos, -1.0, 1.0),
    "acosh": (torch.acosh, 1.0, 20.0),
    "asin": (torch.asin, -1.0, 1.0),
    "asinh": (torch.asinh, -20.0, 20.0),
    "atan": (torch.atan, -20.0, 20.0),
    "atanh": (torch.atanh, -0.99, 0.99),
    "cos": (torch.cos, -10.0, 10.0),
    "cosh": (torch.cosh, -10.0, 10.0),
    "sin": (torch.sin, -10.0, 10.0),
    "sinh": (torch.sinh, -10.0, 10.0),
    "tan": (torch.tan, -1.5, 1.5),
    "erf": (torch.erf, -4.0, 4.0),
    "expm1": (torch.expm1, -10.0, 10.0),
    "log10": (torch.log10, 1e-3, 1e3),
    "log1p": (torch.log1p, -0.99, 100.0),
    "log2": (torch.log2, 1e-3, 1e3),
    "reciprocal": (torch.reciprocal, 0.1, 10.0),
}

SPECIAL_VALUES = torch.tensor(
    [float("nan"), float("inf"), float("-inf"), 0.0, -0.0, 1.0, -1.0, 0.5, -1.5, 1e-30, 2.0, 50.0, -50.0]
)


def tensor(shape, dtype, **kwargs) -> torch.Tensor:
    return make_tensor(shape, dtype=dtype, device="cpu", **kwargs)


def name_of(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def op_of(name: str) -> str:
    return f"aten::{name}.out"


def test_float_functions(check_op) -> None:
    """Every function in one program: float32 and float64 in the domain over several
    shapes (0-dim too); special values (out of domain included: NaN, as in PyTorch);
    integer and bool inputs, which give a float32 result."""
    cases = []
    for name, (function, low, high) in FLOAT_FUNCTIONS.items():
        cases += [
            (f"{name}_{name_of(d)}_{list(s)}", function, (tensor(s, d, low=low, high=high),))
            for d, s in ((torch.float32, (3, 4)), (torch.float64, (2, 3, 5)), (torch.float32, ()))
        ]
        cases += [(f"{name}_special_{name_of(d)}", function, (SPECIAL_VALUES.to(d),)) for d in FLOAT_DTYPES]
        cases += [
            (f"{name}_from_{name_of(d)}", function, (tensor((5,), d, low=0, high=3),))
            for d in (torch.uint8, torch.int32, torch.int64, torch.bool)
        ]
    check_op.many(cases, ops=[op_of(name) for name in FLOAT_FUNCTIONS])


def test_float_functions_on_empty_and_non_contiguous_inputs(check_op) -> None:
    """A [2, 0, 3] input gives an empty result; a transposed input (non-contiguous in
    eager) reaches the kernel contiguous."""
    cases = [(f"{name}_empty", FLOAT_FUNCTIONS[name][0], (torch.empty(2, 0, 3),)) for name in ("sin", "log2", "erf")]
    cases += [
        (f"{name}_transposed", FLOAT_FUNCTIONS[name][0], (torch.rand(5, 3).t(),))
        for name in ("cos", "expm1", "asinh")
    ]
    check_op.many(cases, ops=[op_of(name) for name in ("sin", "log2", "erf", "cos", "expm1", "asinh")])


ROUNDING = {"ceil": torch.ceil, "floor": torch.floor, "round": torch.round, "trunc": torch.trunc}


def test_rounding(check_op) -> None:
    """Halves (round: to even), negative values, +-0, NaN, infinities, values beyond
    2**23 where float32 has no fraction; integer tensors are copied unchanged."""
    values = torch.tensor(
        [0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.49999997, -0.0, 0.0, 2.7, -2.7, 1e10, -8388609.0, float("nan"),
         float("inf"), float("-inf")]
    )  # fmt: skip
    cases = []
    for name, function in ROUNDING.items():
        cases += [(f"{name}_{name_of(d)}", function, (torch.cat([values.to(d), tensor((12,), d, low=-9, high=9)]),)) for d in FLOAT_DTYPES]
        cases += [(f"{name}_{name_of(d)}", function, (tensor((3, 4), d),)) for d in INT_DTYPES]
        cases.append((f"{name}_0dim", function, (torch.tensor(-3.5),)))
    check_op.many(cases, ops=[op_of(name) for name in ROUNDING], exact=True)


def test_sign(check_op) -> None:
    """-1, 0, 1 in the input's dtype; NaN gives 0; bool is unchanged."""
    special = torch.tensor([float("nan"), float("inf"), float("-inf"), -0.0, 0.0, -3.0, 1e-30])
    cases = [(name_of(d), torch.sign, (torch.cat([tensor((8,), d), special.to(d)]),)) for d in FLOAT_DTYPES]
    cases += [(name_of(d), torch.sign, (tensor((3, 4), d),)) for d in INT_DTYPES]
    cases += [("bool", torch.sign, (tensor((6,), torch.bool),)), ("0dim", torch.sign, (torch.tensor(-2),))]
    check_op.many(cases, ops=["aten::sign.out"], exact=True)


def test_integer_extremes_of_sign_and_rounding(check_op) -> None:
    cases = []
    for dtype in INT_DTYPES:
        info = torch.iinfo(dtype)
        x = torch.tensor([info.min, info.max, 0, 1], dtype=dtype)
        cases += [(f"sign_{name_of(dtype)}", torch.sign, (x,)), (f"floor_{name_of(dtype)}", torch.floor, (x,))]
    check_op.many(cases, ops=["aten::sign.out", "aten::floor.out"], exact=True)


def test_logit(check_op) -> None:
    """Core ATen decomposes logit; kept, it reaches its kernel. Without eps, 0 and 1 give
    -inf and inf and values outside [0, 1] NaN; eps clamps to [eps, 1 - eps] (eps above
    0.5 too, lower bound first); a negative eps does not clamp."""
    values = torch.tensor([0.0, 1.0, 0.5, 1e-4, 0.9999, -0.5, 1.5, float("nan"), 0.25, 0.75])
    cases = []
    for dtype in FLOAT_DTYPES:
        x = values.to(dtype)
        cases += [
            (f"{name_of(dtype)}_no_eps", torch.logit, (x,)),
            (f"{name_of(dtype)}_eps_0.01", lambda t: torch.logit(t, 0.01), (x,)),
            (f"{name_of(dtype)}_eps_0.6", lambda t: torch.logit(t, 0.6), (x,)),
            (f"{name_of(dtype)}_eps_negative", lambda t: torch.logit(t, -0.1), (x,)),
            (f"{name_of(dtype)}_random", torch.logit, (tensor((4, 5), dtype, low=0.01, high=0.99),)),
        ]
    cases += [("int32", torch.logit, (torch.tensor([0, 1, 2], dtype=torch.int32),)), ("0dim", torch.logit, (torch.tensor(0.3),))]
    check_op.many(cases, ops=["aten::logit.out"], preserve=[aten.logit.default])
