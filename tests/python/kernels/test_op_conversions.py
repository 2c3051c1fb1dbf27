"""Conversion and creation kernels against eager PyTorch (exact): _to_copy between
float, integer and bool dtypes (truncation toward zero, integer wrap-around, float
"!= 0" for bool), and full with float, integral (int64 beyond 2**53) and bool fill
values. _to_copy has no Half conversion (op_table.yaml): converting to float16 must
be refused at export with a named error."""

from __future__ import annotations

import pytest
import torch
from torch.testing import make_tensor

import kiln
from kiln.passes.kernel_availability import UnsupportedDtypeError


TO_COPY = "aten::_to_copy.out"
FULL = "aten::full.out"

# The dtypes the kernel converts between (kernels/portable/op_table.yaml).
TARGETS = [torch.float32, torch.float64, torch.int8, torch.uint8, torch.int16, torch.int32, torch.int64, torch.bool]


def name_of(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def _source_values(dtype: torch.dtype) -> torch.Tensor:
    """Values every target can represent after PyTorch's conversion rules without
    undefined behaviour (no negative floats into uint8, no float beyond the target)."""
    if dtype.is_floating_point:
        return torch.tensor([0.0, -0.0, 0.4, 0.6, 1.5, 2.5, 99.9, 126.7, 3.0, 0.999, 1e-3], dtype=dtype)
    if dtype is torch.bool:
        return torch.tensor([True, False, True, True])
    return make_tensor((12,), dtype=dtype, device="cpu")


def test_to_copy_every_target(check_op) -> None:
    cases = [
        (f"{name_of(source)}_to_{name_of(target)}", lambda t, d=target: t.to(d), (_source_values(source),))
        for source in (torch.float32, torch.float64, torch.int32, torch.int64, torch.uint8, torch.bool)
        for target in TARGETS
        if target is not source
    ]
    check_op.many(cases, ops=[TO_COPY], exact=True)


def test_float_to_integer_truncates_toward_zero(check_op) -> None:
    x = torch.tensor([-2.7, -1.5, -0.5, -0.0, 0.5, 1.5, 2.7, -100.9, 100.9])
    cases = [(name_of(d), lambda t, d=d: t.to(d), (x,)) for d in (torch.int8, torch.int16, torch.int32, torch.int64)]
    check_op.many(cases, ops=[TO_COPY], exact=True)


def test_integer_narrowing_wraps(check_op) -> None:
    x = torch.tensor([300, -129, 2**40 + 5, -(2**33) - 1, 65535, 127, -128], dtype=torch.int64)
    cases = [(name_of(d), lambda t, d=d: t.to(d), (x,)) for d in (torch.int8, torch.uint8, torch.int16, torch.int32)]
    check_op.many(cases, ops=[TO_COPY], exact=True)


def test_conversion_to_float16_is_refused_at_export() -> None:
    """No kernel converts to float16: export says so, naming the node and the dtype, instead
    of writing a program that fails when it runs."""
    with pytest.raises(UnsupportedDtypeError) as caught:
        kiln.export(_ToHalf(), (torch.zeros(3),))
    assert caught.value.dtype == "Half"
    assert caught.value.operator == "aten::_to_copy.out"
    assert "'_to_copy'" in str(caught.value)


class _ToHalf(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.to(torch.float16)


def test_float64_to_float32_rounds(check_op) -> None:
    x = torch.tensor([1.0 + 2**-24, 1.0 + 3 * 2**-24, 1e39, -1e-46, 3.141592653589793], dtype=torch.float64)
    check_op(lambda t: t.float(), (x,), ops=[TO_COPY], exact=True)


def test_to_bool_is_nonzero(check_op) -> None:
    floats = torch.tensor([0.0, -0.0, float("nan"), float("inf"), 1e-30, -2.0])
    cases = [
        ("float", lambda t: t.bool(), (floats,)),
        ("int8", lambda t: t.bool(), (torch.tensor([0, 1, -1, 127, -128], dtype=torch.int8),)),
        ("int64", lambda t: t.bool(), (torch.tensor([0, 2**40, -(2**62)], dtype=torch.int64),)),
    ]
    check_op.many(cases, ops=[TO_COPY], exact=True)


def test_full(check_op) -> None:
    cases = [
        ("float", lambda x: torch.full((2, 3), 1.5) + x, (torch.zeros(2, 3),)),
        ("float64", lambda x: torch.full((4,), -0.1, dtype=torch.float64), (torch.zeros(1),)),
        ("int64_beyond_2_53", lambda x: torch.full((3,), 2**53 + 1, dtype=torch.int64), (torch.zeros(1),)),
        ("int8", lambda x: torch.full((2, 2), -7, dtype=torch.int8), (torch.zeros(1),)),
        ("bool", lambda x: torch.full((3, 1), True), (torch.zeros(1),)),
        ("zeros", lambda x: torch.zeros(2, 5, dtype=torch.int32), (torch.zeros(1),)),
        ("ones", lambda x: torch.ones(3, 2), (torch.zeros(1),)),
        ("nan", lambda x: torch.full((2,), float("nan")), (torch.zeros(1),)),
        ("zero_dim", lambda x: torch.full((), 4.25), (torch.zeros(1),)),
    ]
    check_op.many(cases, ops=[FULL], exact=True)
