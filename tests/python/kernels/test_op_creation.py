"""Creation kernels against eager PyTorch: arange (end; start, end, step; integer and
float arguments; every real dtype; empty ranges), full_like, fill (Scalar and Tensor
values), ones, zeros, scalar_tensor, empty and _empty_dim_order (shape and dtype only:
their contents are undefined), each over its dtypes and with 0-dim and empty shapes."""

from __future__ import annotations

import pytest
import torch

from kiln.runtime import KilnRuntimeError

aten = torch.ops.aten

REAL = [torch.float32, torch.float64, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64]
ALL = [*REAL, torch.bool]


def name_of(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def test_arange(check_op) -> None:
    """torch.arange exports to arange.start_step, whose kernel is arange.start_out."""
    cases = []
    for d in REAL:
        cases.append((f"end_{name_of(d)}", lambda x, d=d: torch.arange(5, dtype=d) + x.to(d), (torch.zeros(5),)))
    cases += [
        ("start_end_step", lambda x: torch.arange(2, 20, 3) + x, (torch.zeros(6, dtype=torch.int64),)),
        ("negative_step", lambda x: torch.arange(5, -4, -2) + x, (torch.zeros(5, dtype=torch.int64),)),
        ("float_step", lambda x: torch.arange(-1.0, 1.0, 0.25) + x, (torch.zeros(8),)),
        ("float_to_double", lambda x: torch.arange(0.5, 3.0, 0.5, dtype=torch.float64) + x, (torch.zeros(5, dtype=torch.float64),)),
        ("empty", lambda x: torch.arange(3, 3) + x, (torch.zeros(0, dtype=torch.int64),)),
    ]
    check_op.many(cases, ops=["aten::arange.start_out"], exact=True)


def test_arange_end_only_overload(check_op) -> None:
    """arange.out(end) and arange.start_out with its default step (torch decomposes
    both unless kept)."""
    cases = [
        ("end", lambda x: aten.arange.default(7) + x, (torch.zeros(7, dtype=torch.int64),)),
        ("float_end", lambda x: aten.arange.default(2.5) + x, (torch.zeros(3),)),
        ("start_end", lambda x: aten.arange.start(-2, 4) + x, (torch.zeros(6, dtype=torch.int64),)),
    ]
    check_op.many(cases, ops=["aten::arange.out", "aten::arange.start_out"], exact=True,
                  preserve=[aten.arange.default, aten.arange.start])


def test_full_like(check_op) -> None:
    cases = [(name_of(d), lambda x: torch.full_like(x, 3), (torch.zeros(2, 3, dtype=d),)) for d in ALL]
    cases += [
        ("float_value", lambda x: torch.full_like(x, -2.5), (torch.zeros(4),)),
        ("zero_dim", lambda x: torch.full_like(x, 7), (torch.tensor(1.0),)),
        ("empty", lambda x: torch.full_like(x, 7), (torch.zeros(0, 3),)),
        ("bool_true", lambda x: torch.full_like(x, True), (torch.zeros(3, dtype=torch.bool),)),
        ("inf", lambda x: torch.full_like(x, float("inf")), (torch.zeros(3),)),
        ("int64_exact", lambda x: torch.full_like(x, 2**62 + 1), (torch.zeros(2, dtype=torch.int64),)),
    ]
    check_op.many(cases, ops=["aten::full_like.out"], exact=True)


def test_fill_scalar_and_tensor(check_op) -> None:
    cases = [(f"scalar_{name_of(d)}", lambda x: aten.fill.Scalar(x, 5), (torch.zeros(2, 2, dtype=d),)) for d in ALL]
    cases += [(f"tensor_{name_of(d)}", lambda x, v: aten.fill.Tensor(x, v), (torch.zeros(3, dtype=d), torch.tensor(2.0)))
              for d in ALL]
    cases += [
        ("scalar_zero_dim", lambda x: aten.fill.Scalar(x, -1.5), (torch.tensor(0.0),)),
        ("tensor_int_value", lambda x, v: aten.fill.Tensor(x, v), (torch.zeros(2, 3), torch.tensor(-4))),
        ("tensor_empty", lambda x, v: aten.fill.Tensor(x, v), (torch.zeros(0), torch.tensor(1.0))),
    ]
    check_op.many(cases, ops=["aten::fill.Scalar_out", "aten::fill.Tensor_out"], exact=True,
                  preserve=[aten.fill.Scalar, aten.fill.Tensor])


def test_ones_and_zeros(check_op) -> None:
    cases = []
    for d in ALL:
        cases.append((f"ones_{name_of(d)}", lambda x, d=d: aten.ones.default([2, 3], dtype=d), (torch.zeros(1),)))
        cases.append((f"zeros_{name_of(d)}", lambda x, d=d: aten.zeros.default([3, 1, 2], dtype=d), (torch.zeros(1),)))
    cases += [
        ("ones_zero_dim", lambda x: aten.ones.default([]) + x, (torch.tensor(2.0),)),
        ("zeros_empty", lambda x: aten.zeros.default([0, 4]), (torch.zeros(1),)),
        ("zeros_half", lambda x: aten.zeros.default([3], dtype=torch.float16), (torch.zeros(1),)),
    ]
    check_op.many(cases, ops=["aten::ones.out", "aten::zeros.out"], exact=True,
                  preserve=[aten.ones.default, aten.zeros.default])


def test_scalar_tensor(check_op) -> None:
    cases = [(name_of(d), lambda x, d=d: aten.scalar_tensor.default(3, dtype=d) + x.to(d), (torch.tensor(0),)) for d in REAL]
    cases += [
        ("float", lambda x: aten.scalar_tensor.default(-0.75) + x, (torch.zeros(2),)),
        ("bool", lambda x: torch.where(x, x, aten.scalar_tensor.default(True, dtype=torch.bool)),
         (torch.zeros(2, dtype=torch.bool),)),
    ]
    check_op.many(cases, ops=["aten::scalar_tensor.out"], exact=True)


def test_empty(check_op) -> None:
    """Only the shape and dtype are defined."""
    empty, empty_int = check_op.run(lambda x: (torch.empty(2, 3, 4), torch.empty(0, 5, dtype=torch.int8)), (torch.zeros(1),),
                                    ops=["aten::empty.out"])
    assert (empty.shape, empty.dtype, empty_int.shape, empty_int.dtype) == ((2, 3, 4), torch.float32, (0, 5), torch.int8)
    check_op.call("dim_order_ops::_empty_dim_order.out", [[3, 2], None], [torch.empty(3, 2, dtype=torch.int64)],
                  check_values=False)
    check_op.call("dim_order_ops::_empty_dim_order.out", [[3, 2], [0, 1]], [torch.empty(3, 2)], check_values=False)


def test_empty_dim_order_refuses_an_order_out_does_not_have(check_op) -> None:
    with pytest.raises(KilnRuntimeError) as caught:
        check_op.call("dim_order_ops::_empty_dim_order.out", [[3, 2], [1, 0]], [torch.empty(3, 2)], check_values=False)
    assert caught.value.error_name == "InvalidArgument" and "dim order" in str(caught.value)


def test_creation_with_negative_size_fails(check_op) -> None:
    with pytest.raises(KilnRuntimeError) as caught:
        check_op.call("aten::zeros.out", [[2, -3]], [torch.zeros(2, 3)])
    assert caught.value.error_name == "InvalidArgument"
