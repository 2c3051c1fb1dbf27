"""mm, bmm and addmm kernels against eager PyTorch: vector-like and square shapes,
transposed operands, batched and broadcast matmul, Linear with and without bias on
2-D and 3-D inputs, addmm's beta/alpha and bias broadcasting, float32 and float64."""

from __future__ import annotations

import torch
from torch import nn
from torch.testing import make_tensor


def tensor(shape, dtype=torch.float32, **kwargs) -> torch.Tensor:
    return make_tensor(shape, dtype=dtype, device="cpu", **kwargs)


MM_SHAPES = [((3, 4), (4, 5)), ((1, 7), (7, 1)), ((5, 1), (1, 3)), ((6, 6), (6, 6)), ((2, 17), (17, 9))]


def test_mm(check_op) -> None:
    cases = []
    for dtype in (torch.float32, torch.float64):
        cases += [(f"{dtype}_{a}@{b}", torch.mm, (tensor(a, dtype), tensor(b, dtype))) for a, b in MM_SHAPES]
        cases.append((f"{dtype}_transposed_operands", lambda x, y: x.t() @ y.t(), (tensor((4, 3), dtype), tensor((5, 4), dtype))))
    cases.append(("3d_by_2d_folds_to_mm", torch.matmul, (tensor((2, 3, 4)), tensor((4, 5)))))
    check_op.many(cases, ops=["aten::mm.out"])


def test_bmm(check_op) -> None:
    cases = []
    for dtype in (torch.float32, torch.float64):
        cases += [
            (f"{dtype}_bmm", torch.bmm, (tensor((2, 3, 4), dtype), tensor((2, 4, 5), dtype))),
            (f"{dtype}_batch1", torch.bmm, (tensor((1, 6, 2), dtype), tensor((1, 2, 3), dtype))),
            (f"{dtype}_broadcast_batch", torch.matmul, (tensor((1, 3, 4), dtype), tensor((3, 4, 2), dtype))),
            (f"{dtype}_4d", torch.matmul, (tensor((2, 2, 3, 4), dtype), tensor((2, 2, 4, 3), dtype))),
            (f"{dtype}_transposed", lambda x, y: x.transpose(1, 2) @ y, (tensor((2, 4, 3), dtype), tensor((2, 4, 5), dtype))),
        ]
    check_op.many(cases, ops=["aten::bmm.out"])


def test_linear(check_op) -> None:
    cases = []
    for dtype in (torch.float32, torch.float64):
        cases += [
            (f"{dtype}_bias_2d", nn.Linear(6, 4).to(dtype), (tensor((3, 6), dtype),)),
            (f"{dtype}_bias_3d_input", nn.Linear(5, 3).to(dtype), (tensor((2, 4, 5), dtype),)),
            (f"{dtype}_bias_one_row", nn.Linear(8, 10).to(dtype), (tensor((1, 8), dtype),)),
            (f"{dtype}_bias_one_output", nn.Linear(4, 1).to(dtype), (tensor((5, 4), dtype),)),
        ]
    check_op.many(cases, ops=["aten::addmm.out"])


def test_linear_without_bias(check_op) -> None:
    cases = [
        ("2d", nn.Linear(6, 4, bias=False), (tensor((3, 6)),)),
        ("3d_input", nn.Linear(5, 3, bias=False), (tensor((2, 4, 5)),)),
    ]
    check_op.many(cases, ops=["aten::mm.out"])


def test_addmm_beta_alpha_and_bias_shapes(check_op) -> None:
    a, b = tensor((3, 4)), tensor((4, 5))
    cases = [
        ("bias_row", lambda bias, x, y: torch.addmm(bias, x, y), (tensor((5,)), a, b)),
        ("bias_matrix", lambda bias, x, y: torch.addmm(bias, x, y), (tensor((3, 5)), a, b)),
        ("bias_1x5", lambda bias, x, y: torch.addmm(bias, x, y), (tensor((1, 5)), a, b)),
        ("bias_column", lambda bias, x, y: torch.addmm(bias, x, y), (tensor((3, 1)), a, b)),
        ("beta_alpha", lambda bias, x, y: torch.addmm(bias, x, y, beta=0.5, alpha=2.0), (tensor((3, 5)), a, b)),
        ("beta0", lambda bias, x, y: torch.addmm(bias, x, y, beta=0), (tensor((3, 5)), a, b)),
        ("alpha_neg", lambda bias, x, y: torch.addmm(bias, x, y, alpha=-1.5), (tensor((5,)), a, b)),
    ]
    check_op.many(cases, ops=["aten::addmm.out"])


def test_addmm_beta0_ignores_nan_bias(check_op) -> None:
    """beta=0 means the bias is not read at all: NaN in it must not reach the output."""
    bias = torch.full((3, 5), float("nan"))
    check_op(lambda c, x, y: torch.addmm(c, x, y, beta=0), (bias, tensor((3, 4)), tensor((4, 5))), ops=["aten::addmm.out"])
