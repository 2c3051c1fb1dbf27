"""Binary math kernels against eager PyTorch: pow with a tensor exponent (Tensor_Tensor)
and with a Scalar base, atan2, rsub, clamp with tensor bounds, masked_fill and
_conj_physical; every dtype each takes, broadcasting, 0-dim operands, special values,
integer wrap-around, negative integer exponents, fill values at the edge of a dtype."""

from __future__ import annotations

import pytest
import torch
from torch.testing import make_tensor

from kiln.export import lower_edge_program, program_from_methods
from kiln.runtime import KilnRuntimeError, Runtime

aten = torch.ops.aten

FLOAT_DTYPES = [torch.float32, torch.float64]
INT_DTYPES = [torch.int8, torch.uint8, torch.int16, torch.int32, torch.int64]
REAL_DTYPES = [*FLOAT_DTYPES, *INT_DTYPES]
ALL_DTYPES = [*REAL_DTYPES, torch.bool]
NAN, INF = float("nan"), float("inf")


def tensor(shape, dtype, **kwargs) -> torch.Tensor:
    return make_tensor(shape, dtype=dtype, device="cpu", **kwargs)


def name_of(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def test_pow_tensor_tensor(check_op) -> None:
    """Float bases of both signs with integral and fractional exponents (NaN for a
    negative base with a fraction), special values; integer bases with exponents up to
    7 (wrapping), negative integer exponents (0, or +-1 for bases +-1); broadcasting;
    int base with float exponent (float result)."""
    base = torch.tensor([2.0, -2.0, 0.0, -0.0, 1.0, -1.0, 0.5, INF, -INF, NAN, 3.0, 1.0, 4.0])
    exponent = torch.tensor([3.0, 3.0, -1.0, -1.0, NAN, INF, -2.0, 0.5, 3.0, 0.0, 0.5, INF, -0.5])
    cases = [(f"special_{name_of(d)}", torch.pow, (base.to(d), exponent.to(d))) for d in FLOAT_DTYPES]
    cases += [
        (f"{name_of(d)}", torch.pow, (tensor((3, 4), d, low=-3, high=3), tensor((4,), d, low=-3, high=3)))
        for d in FLOAT_DTYPES
    ]
    for dtype in INT_DTYPES:
        signed = dtype.is_signed
        b = tensor((3, 5), dtype, low=-6 if signed else 0, high=6)
        e = tensor((1, 5), dtype, low=-3 if signed else 0, high=8)
        cases.append((name_of(dtype), torch.pow, (b, e)))
    small = torch.tensor([-2, -1, 0, 1, 2, -1, 1, 3], dtype=torch.int32)
    cases.append(("negative_exponents", torch.pow, (small, torch.tensor([-1, -3, -1, -2, -2, -4, 5, 0], dtype=torch.int32))))
    cases.append(("int32_float32", torch.pow, (tensor((3, 4), torch.int32, low=0, high=5), tensor((3, 4), torch.float32))))
    cases.append(("bool_int64", torch.pow, (tensor((3, 4), torch.bool), tensor((4,), torch.int64, low=0, high=4))))
    cases.append(("0dim_exponent", torch.pow, (tensor((3, 4), torch.float32, low=0.1, high=3), torch.tensor(2.5))))
    check_op.many(cases, ops=["aten::pow.Tensor_Tensor_out"])


def test_pow_scalar_base(check_op) -> None:
    """base ** tensor: float and integral bases on float, integer and bool exponents
    (an integral base keeps an integer exponent's dtype; bool exponents give int64)."""
    cases = []
    for base in (2, 2.5, -3, 0, 1):
        for dtype in (torch.float32, torch.float64, torch.int32, torch.int64, torch.int8, torch.bool):
            low = -4 if dtype.is_floating_point else 0
            cases.append((f"{base}_{name_of(dtype)}", lambda t, b=base: torch.pow(b, t), (tensor((3, 4), dtype, low=low, high=6),)))
    cases.append(("special", lambda t: torch.pow(2.0, t), (torch.tensor([NAN, INF, -INF, 0.0, -0.0, 0.5]),)))
    cases.append(("negative_int_exponent", lambda t: torch.pow(2, t), (torch.tensor([-1, -2, 0, 3]),)))
    check_op.many(cases, ops=["aten::pow.Scalar_out"])


def test_atan2(check_op) -> None:
    """Every quadrant, the axes with signed zeros, infinities, NaN, broadcasting; integer
    and bool inputs give float32."""
    y = torch.tensor([1.0, 1.0, -1.0, -1.0, 0.0, -0.0, 0.0, -0.0, INF, -INF, INF, 1.0, NAN, 0.0])
    x = torch.tensor([1.0, -1.0, 1.0, -1.0, 1.0, 1.0, -1.0, -1.0, INF, 1.0, -INF, -INF, 1.0, 0.0])
    cases = [(f"special_{name_of(d)}", torch.atan2, (y.to(d), x.to(d))) for d in FLOAT_DTYPES]
    cases += [(f"{name_of(d)}", torch.atan2, (tensor((2, 3, 4), d), tensor((3, 1), d))) for d in FLOAT_DTYPES]
    cases += [(f"from_{name_of(d)}", torch.atan2, (tensor((3, 4), d), tensor((3, 4), d))) for d in (torch.int32, torch.uint8, torch.bool)]
    cases.append(("0dim", torch.atan2, (torch.tensor(-2.0), tensor((5,), torch.float32))))
    check_op.many(cases, ops=["aten::atan2.out"])


def test_rsub(check_op) -> None:
    """Core ATen turns rsub into sub; kept, it reaches its kernel: other - alpha * self,
    integral and float scalars and alphas, integer wrap-around, int tensor with a float
    scalar (float result)."""
    cases = []
    for dtype in REAL_DTYPES:
        x = tensor((3, 4), dtype)
        cases.append((f"{name_of(dtype)}", lambda t: torch.rsub(t, 5), (x,)))
        cases.append((f"{name_of(dtype)}_alpha", lambda t: torch.rsub(t, 7, alpha=3), (x,)))
    for dtype in (torch.float32, torch.float64, torch.int32):
        cases.append((f"{name_of(dtype)}_float", lambda t: torch.rsub(t, 2.5, alpha=-1.5), (tensor((3, 4), dtype),)))
    info = torch.iinfo(torch.int8)
    cases.append(("int8_wraps", lambda t: torch.rsub(t, 100, alpha=2), (torch.tensor([info.min, info.max, 0], dtype=torch.int8),)))
    cases.append(("0dim", lambda t: torch.rsub(t, 1.0), (torch.tensor(3.0),)))
    check_op.many(cases, ops=["aten::rsub.Scalar_out"], preserve=[aten.rsub.Scalar])


CLAMPS = {
    "both": lambda x, lo, hi: torch.clamp(x, lo, hi),
    "min": lambda x, lo, hi: torch.clamp(x, min=lo),
    "max": lambda x, lo, hi: torch.clamp(x, max=hi),
    "crossed": lambda x, lo, hi: torch.clamp(x, hi, lo),  # min above max: max wins
}


def test_clamp_with_tensor_bounds(check_op) -> None:
    """Bounds broadcast against self (a row, a column, 0-dim); NaN in self or a bound
    gives NaN; integer tensors; an int tensor with float bounds gives a float result, with
    bool bounds an int one."""
    cases = []
    for dtype in REAL_DTYPES:
        x = tensor((4, 5), dtype, low=0 if dtype is torch.uint8 else -10, high=10)
        lo = tensor((5,), dtype, low=0 if dtype is torch.uint8 else -5, high=1)
        hi = tensor((4, 1), dtype, low=1, high=5)
        cases += [(f"{name}_{name_of(dtype)}", f, (x, lo, hi)) for name, f in CLAMPS.items()]
    x = torch.tensor([1.0, NAN, 3.0, -INF, INF, 0.5])
    lo = torch.tensor([NAN, 0.0, 2.0, 0.0, 0.0, 0.0])
    hi = torch.tensor([2.0, 2.0, NAN, 1.0, 1.0, 1.0])
    cases += [(f"nan_{name}", f, (x, lo, hi)) for name, f in CLAMPS.items()]
    cases.append(("0dim_bounds", CLAMPS["both"], (tensor((3, 4), torch.float32), torch.tensor(-0.5), torch.tensor(0.5))))
    cases.append(("int32_float_bound", lambda x, lo: torch.clamp(x, min=lo), (tensor((3, 4), torch.int32), tensor((4,), torch.float32))))
    cases.append(("int64_bool_bound", lambda x, lo: torch.clamp(x, min=lo), (tensor((3, 4), torch.int64), tensor((4,), torch.bool))))
    check_op.many(cases, ops=["aten::clamp.Tensor_out"])


def test_masked_fill(check_op) -> None:
    """Core ATen turns masked_fill into where; kept, it reaches its kernel. Every dtype,
    masks that broadcast to self and beyond it (the result takes the broadcast shape),
    integral and float fill values (truncated into integer dtypes), the edges of a dtype
    (-255 fits uint8 by wrapping), NaN and inf into floats."""
    cases = []
    for dtype in ALL_DTYPES:
        x = tensor((3, 4), dtype)
        value = True if dtype is torch.bool else 7
        cases.append((f"{name_of(dtype)}_row_mask", lambda t, m, v=value: t.masked_fill(m, v), (x, tensor((4,), torch.bool))))
    cases += [
        ("float_value_into_int32", lambda t, m: t.masked_fill(m, -2.7), (tensor((3, 4), torch.int32), tensor((3, 4), torch.bool))),
        ("int8_max", lambda t, m: t.masked_fill(m, 127), (tensor((5,), torch.int8), tensor((5,), torch.bool))),
        ("uint8_minus_255", lambda t, m: t.masked_fill(m, -255), (tensor((5,), torch.uint8), tensor((5,), torch.bool))),
        ("int64_max", lambda t, m: t.masked_fill(m, 2**63 - 1), (tensor((5,), torch.int64), tensor((5,), torch.bool))),
        ("nan_into_float", lambda t, m: t.masked_fill(m, NAN), (tensor((5,), torch.float32), tensor((5,), torch.bool))),
        ("inf_into_float64", lambda t, m: t.masked_fill(m, -INF), (tensor((5,), torch.float64), tensor((5,), torch.bool))),
        ("mask_wider_than_self", lambda t, m: t.masked_fill(m, 1.5), (tensor((4,), torch.float32), tensor((3, 4), torch.bool))),
        ("0dim_mask", lambda t, m: t.masked_fill(m, 0.25), (tensor((2, 3), torch.float32), torch.tensor(True))),
        ("empty", lambda t, m: t.masked_fill(m, 1.0), (torch.empty(0, 3), torch.ones(3, dtype=torch.bool))),
    ]  # fmt: skip
    check_op.many(cases, ops=["aten::masked_fill.Scalar_out"], preserve=[aten.masked_fill.Scalar], exact=True)


def test_masked_fill_value_that_does_not_fit_is_a_named_runtime_error() -> None:
    """Eager PyTorch refuses 300 for an int8 tensor, but tracing does not check the
    value: the program exports, and its kernel fails by name instead of wrapping."""
    x = torch.zeros(3, dtype=torch.int8)
    mask = torch.tensor([True, False, True])
    with pytest.raises(RuntimeError, match="overflow"):
        x.masked_fill(mask, 300)

    class Fill(torch.nn.Module):
        def forward(self, t: torch.Tensor, m: torch.Tensor) -> torch.Tensor:
            return aten.masked_fill.Scalar(t, m, 300)

    decompositions = torch.export.default_decompositions()
    decompositions.pop(aten.masked_fill.Scalar)
    edge = torch.export.export(Fill(), (x, mask)).run_decompositions(decompositions)
    program = program_from_methods([lower_edge_program(edge)])
    method = Runtime.get().load_program(program.to_bytes()).load_method("forward")
    with pytest.raises(KilnRuntimeError, match="does not fit") as caught:
        method.execute([x, mask])
    assert caught.value.error_name == "InvalidArgument"


def test_conj_physical(check_op) -> None:
    """Kiln has no complex dtypes: the conjugate of a real tensor is a copy, as in PyTorch."""
    cases = [(name_of(d), aten._conj_physical, (tensor((3, 4), d),)) for d in ALL_DTYPES]
    cases.append(("0dim", aten._conj_physical, (torch.tensor(-1.5),)))
    check_op.many(cases, ops=["aten::_conj_physical.out"], preserve=[aten._conj_physical.default], exact=True)
