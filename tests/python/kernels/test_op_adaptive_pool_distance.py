"""Adaptive average pooling and distance kernels against eager PyTorch:
_adaptive_avg_pool2d to sizes that divide the input and sizes that do not (overlapping
windows), up to larger sizes, 3-D and 4-D inputs; _cdist_forward (p = 0, 1, 1.5, 2, inf,
broadcast batch dims, compute modes) and _pdist_forward; float32 and float64."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from torch import nn
from torch.testing import make_tensor

FLOATS = [torch.float32, torch.float64]


def tensor(shape, dtype=torch.float32) -> torch.Tensor:
    return make_tensor(shape, dtype=dtype, device="cpu", low=-2, high=2)


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_adaptive_avg_pool2d(check_op, dtype: torch.dtype) -> None:
    variants = [
        ("divides", (2, 3)),
        ("overlapping", (3, 5)),
        ("global_rows", (1, 7)),
        ("larger_than_input", (8, 9)),
        ("one_size", 4),
    ]
    cases = [(name, lambda x, size=size: F.adaptive_avg_pool2d(x, size), (tensor((2, 3, 6, 7), dtype),)) for name, size in variants]
    cases.append(("unbatched", nn.AdaptiveAvgPool2d((2, 2)), (tensor((3, 5, 5), dtype),)))
    check_op.many(cases, ops=["aten::_adaptive_avg_pool2d.out"])


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_cdist(check_op, dtype: torch.dtype) -> None:
    a, b = tensor((2, 5, 4), dtype), tensor((6, 4), dtype)
    cases = [(f"p{p}", lambda a, b, p=p: torch.cdist(a, b, p=p), (a, b)) for p in (0.0, 1.0, 1.5, 2.0, float("inf"))]
    cases += [
        ("broadcast_batch", lambda a, b: torch.cdist(a, b), (tensor((3, 1, 4, 2), dtype), tensor((2, 5, 2), dtype))),
        ("mm_mode", lambda a, b: torch.cdist(a, b, compute_mode="use_mm_for_euclid_dist"), (tensor((30, 3), dtype), tensor((28, 3), dtype))),
        ("equal_rows", lambda a: torch.cdist(a, a, p=0.5), (tensor((4, 3), dtype),)),
    ]
    check_op.many(cases, ops=["aten::_cdist_forward.out"])


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_pdist(check_op, dtype: torch.dtype) -> None:
    x = tensor((6, 3), dtype)
    cases = [(f"p{p}", lambda x, p=p: F.pdist(x, p), (x,)) for p in (0.0, 1.0, 2.0, 3.0, float("inf"))]
    cases += [("two_rows", lambda x: F.pdist(x), (tensor((2, 5), dtype),)), ("one_row", lambda x: F.pdist(x) + 1, (tensor((1, 5), dtype),))]
    check_op.many(cases, ops=["aten::_pdist_forward.out"])
