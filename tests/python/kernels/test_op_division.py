"""Division kernels against eager PyTorch: div with rounding modes (Tensor and Scalar
overloads), floor_divide, fmod and remainder (Tensor and Scalar); every real dtype,
signs of both operands, broadcasting and 0-dim operands, wrapped numbers, division by
zero (IEEE for floats; a named runtime error for integers, where PyTorch raises),
integer MIN / -1."""

from __future__ import annotations

import pytest
import torch
from torch.testing import make_tensor

import kiln
from kiln.runtime import KilnRuntimeError, Runtime

aten = torch.ops.aten

FLOAT_DTYPES = [torch.float32, torch.float64]
INT_DTYPES = [torch.int8, torch.uint8, torch.int16, torch.int32, torch.int64]
REAL_DTYPES = [*FLOAT_DTYPES, *INT_DTYPES]

# name -> (function of two tensors, out variant)
TENSOR_DIVISIONS = {
    "div_trunc": (lambda x, y: torch.div(x, y, rounding_mode="trunc"), "aten::div.out_mode"),
    "div_floor": (lambda x, y: torch.div(x, y, rounding_mode="floor"), "aten::div.out_mode"),
    "div_true": (lambda x, y: aten.div.Tensor_mode(x, y, rounding_mode=None), "aten::div.out_mode"),
    "floor_divide": (torch.floor_divide, "aten::floor_divide.out"),
    "fmod": (torch.fmod, "aten::fmod.Tensor_out"),
    "remainder": (torch.remainder, "aten::remainder.Tensor_out"),
}
TENSOR_OPS = sorted({op for _, op in TENSOR_DIVISIONS.values()})
# Core ATen turns floor_divide into div with rounding_mode="floor"; kept, it reaches its kernel.
PRESERVE = [aten.floor_divide.default, aten.div.Scalar_mode]


def tensor(shape, dtype, **kwargs) -> torch.Tensor:
    return make_tensor(shape, dtype=dtype, device="cpu", **kwargs)


def name_of(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def divisor(shape, dtype) -> torch.Tensor:
    """Non-zero divisors (both signs where the dtype has them)."""
    low = 1 if dtype is torch.uint8 else -9
    t = tensor(shape, dtype, low=low, high=9)
    return torch.where(t == 0, torch.ones_like(t), t)


def test_tensor_divisions_over_dtypes(check_op) -> None:
    cases = []
    for name, (function, _) in TENSOR_DIVISIONS.items():
        for dtype in REAL_DTYPES:
            if name == "div_true" and not dtype.is_floating_point:
                continue  # covered by test_true_division_of_integers
            x = tensor((3, 4), dtype, low=0 if dtype is torch.uint8 else -50, high=50)
            cases.append((f"{name}_{name_of(dtype)}", function, (x, divisor((3, 4), dtype))))
    check_op.many(cases, ops=TENSOR_OPS, preserve=PRESERVE, exact=True)


def test_true_division_of_integers(check_op) -> None:
    """rounding_mode=None divides integers into a float32 result."""
    cases = [
        (name_of(d), TENSOR_DIVISIONS["div_true"][0], (tensor((3, 4), d, low=0, high=50), divisor((3, 4), d)))
        for d in (torch.int32, torch.uint8, torch.int64)
    ]
    check_op.many(cases, ops=["aten::div.out_mode"])


def test_signs_and_special_values(check_op) -> None:
    """Every sign combination, exact multiples, +-0 results, x / 0 (inf, -inf, NaN as
    IEEE gives), infinite operands, NaN; floor division of floats is the exact floor
    of the real quotient (Python's algorithm), e.g. 1 // 0.1 == 9."""
    inf, nan = float("inf"), float("nan")
    x = torch.tensor([7.0, -7.0, 7.0, -7.0, 6.0, -6.0, 0.0, -0.0, 5.0, -5.0, 0.0, inf, 3.0, -3.0, nan, 1.0, 2.5])
    y = torch.tensor([2.0, 2.0, -2.0, -2.0, 3.0, 3.0, 3.0, 3.0, 0.0, 0.0, 0.0, 2.0, inf, inf, 1.0, 0.1, -0.75])
    cases = [
        (f"{name}_{name_of(d)}", function, (x.to(d), y.to(d)))
        for name, (function, _) in TENSOR_DIVISIONS.items()
        for d in FLOAT_DTYPES
    ]
    check_op.many(cases, ops=TENSOR_OPS, preserve=PRESERVE, exact=True)


def test_integer_signs_and_extremes(check_op) -> None:
    """Truncation vs floor on negative operands; MIN / -1 wraps to MIN (remainder 0) on
    int8 and int16, where eager PyTorch computes it in int (wider types trap there)."""
    cases = []
    for dtype in (torch.int8, torch.int16, torch.int32, torch.int64):
        x = torch.tensor([7, -7, 7, -7, 6, -6, 0, 1, -1], dtype=dtype)
        y = torch.tensor([2, 2, -2, -2, -3, 3, -5, 5, -5], dtype=dtype)
        if dtype in (torch.int8, torch.int16):
            x = torch.cat([x, torch.tensor([torch.iinfo(dtype).min], dtype=dtype)])
            y = torch.cat([y, torch.tensor([-1], dtype=dtype)])
        cases += [(f"{name}_{name_of(dtype)}", f, (x, y)) for name, (f, _) in TENSOR_DIVISIONS.items() if name != "div_true"]
    check_op.many(cases, ops=TENSOR_OPS, preserve=PRESERVE, exact=True)


BROADCASTS = [((2, 3, 4), (4,)), ((2, 1, 4), (3, 1)), ((), (2, 3)), ((2, 3), ())]


def test_broadcasting_and_mixed_dtypes(check_op) -> None:
    """Broadcast shapes (0-dim on either side), int with float operands (float result),
    int8 with int64 (int64 result), and a dimensioned int8 with a 0-dim int64 (int8)."""
    cases = []
    for name, (function, _) in TENSOR_DIVISIONS.items():
        cases += [
            (f"{name}_{a}@{b}", function, (tensor(a, torch.float32), divisor(b, torch.float32)))
            for a, b in BROADCASTS
        ]
        cases.append((f"{name}_int32_float32", function, (tensor((3, 4), torch.int32), divisor((4,), torch.float32))))
        cases.append((f"{name}_int8_int64", function, (tensor((3, 4), torch.int8), divisor((3, 1), torch.int64))))
        cases.append((f"{name}_int8_0dim_int64", function, (tensor((3, 4), torch.int8), torch.tensor(-3))))
    check_op.many(cases, ops=TENSOR_OPS, preserve=PRESERVE)


SCALAR_DIVISIONS = {
    "div_trunc": (lambda x, s: aten.div.Scalar_mode(x, s, rounding_mode="trunc"), "aten::div.Scalar_mode_out"),
    "div_floor": (lambda x, s: aten.div.Scalar_mode(x, s, rounding_mode="floor"), "aten::div.Scalar_mode_out"),
    "fmod": (torch.fmod, "aten::fmod.Scalar_out"),
    "remainder": (torch.remainder, "aten::remainder.Scalar_out"),
}


def test_scalar_divisors(check_op) -> None:
    """Integral and fractional scalars of both signs on every dtype (a float scalar
    turns an integer tensor's result into float32)."""
    cases = []
    for name, (function, _) in SCALAR_DIVISIONS.items():
        for dtype in REAL_DTYPES:
            x = tensor((3, 4), dtype, low=0 if dtype is torch.uint8 else -50, high=50)
            scalars = (3, 1.5) if dtype is torch.uint8 else (3, -4, 1.5, -0.75)
            cases += [(f"{name}_{name_of(dtype)}_{s}", lambda t, s=s, f=function: f(t, s), (x,)) for s in scalars]
    cases.append(("div_floor_by_zero_float", lambda t: aten.div.Scalar_mode(t, 0.0, rounding_mode="floor"),
                  (torch.tensor([1.0, -1.0, 0.0]),)))  # fmt: skip
    cases.append(("fmod_by_zero_float", lambda t: torch.fmod(t, 0.0), (torch.tensor([1.0, -1.0, 0.0]),)))
    check_op.many(cases, ops=sorted({op for _, op in SCALAR_DIVISIONS.values()}), preserve=PRESERVE)


def test_wrapped_number_divisor(check_op) -> None:
    """x // 2 and x % 2 with a Python number: the number becomes a 0-dim constant."""
    cases = [
        (f"{name}_{name_of(d)}", function, (tensor((2, 5), d, low=-20 if d.is_signed else 0, high=20),))
        for name, function in (("floordiv", lambda t: t // 2), ("mod", lambda t: t % 3), ("div_trunc", lambda t: torch.div(t, -2, rounding_mode="trunc")))
        for d in (torch.float32, torch.int32, torch.int64)
    ]  # fmt: skip
    check_op.many(cases, ops=["aten::div.out_mode", "aten::remainder.Scalar_out"], exact=True)


def test_bool_operands(check_op) -> None:
    """Bool tensors divide as integers (int64 with an int64 divisor, float32 for true
    division)."""
    flags = torch.tensor([True, False, True, False])
    ints = torch.tensor([2, -3, -1, 5])
    cases = [(f"{name}_bool_int64", f, (flags, ints)) for name, (f, _) in TENSOR_DIVISIONS.items() if name != "div_true"]
    cases.append(("div_true_bool_bool", TENSOR_DIVISIONS["div_true"][0], (flags, torch.tensor([True, True, False, True]))))
    cases += [(f"{name}_bool_scalar", lambda t, f=f: f(t, 2), (flags,)) for name, (f, _) in SCALAR_DIVISIONS.items()]
    cases.append(("div_scalar_true_bool", lambda t: aten.div.Scalar_mode(t, 2, rounding_mode=None), (flags,)))
    ops = TENSOR_OPS + sorted({op for _, op in SCALAR_DIVISIONS.values()})
    check_op.many(cases, ops=ops, preserve=PRESERVE)


INTEGER_ZERO_DIVISIONS = {
    "div_floor": lambda x, y: torch.div(x, y, rounding_mode="floor"),
    "div_trunc": lambda x, y: torch.div(x, y, rounding_mode="trunc"),
    "fmod": torch.fmod,
    "remainder": torch.remainder,
}


@pytest.mark.parametrize("name", sorted(INTEGER_ZERO_DIVISIONS))
def test_integer_division_by_zero_is_a_named_runtime_error(name: str) -> None:
    """PyTorch raises ZeroDivisionError; the kernel fails with InvalidArgument instead
    of computing an undefined quotient, and the same program runs on valid inputs."""
    function = INTEGER_ZERO_DIVISIONS[name]
    x = torch.tensor([5, -7, 3], dtype=torch.int32)
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        function(x, torch.tensor([1, 0, 2], dtype=torch.int32))

    class Division(torch.nn.Module):
        def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
            return function(a, b)

    program = kiln.export(Division(), (x, torch.ones(3, dtype=torch.int32)))
    method = Runtime.get().load_program(program.to_bytes()).load_method("forward")
    with pytest.raises(KilnRuntimeError) as caught:
        method.execute([x, torch.tensor([1, 0, 2], dtype=torch.int32)])
    assert caught.value.error_name == "InvalidArgument"
    valid = torch.tensor([2, -3, 2], dtype=torch.int32)
    assert torch.equal(method.execute([x, valid])[0], function(x, valid))
