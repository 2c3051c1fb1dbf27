"""max_pool2d_with_indices and avg_pool2d kernels against eager PyTorch: kernel sizes,
strides, padding, dilation, ceil_mode, count_include_pad, divisor_override,
unbatched (3-D) input, integer dtypes, NaN, and the indices output (exact)."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn
from torch.testing import make_tensor

MAX_POOL = "aten::max_pool2d_with_indices.out"
AVG_POOL = "aten::avg_pool2d.out"


def tensor(shape, dtype=torch.float32, **kwargs) -> torch.Tensor:
    return make_tensor(shape, dtype=dtype, device="cpu", **kwargs)


# name -> (pooling arguments, input shape); shared by max and avg pooling where valid.
WINDOWS = {
    "k2": (dict(kernel_size=2), (1, 3, 6, 6)),
    "k2_odd_input": (dict(kernel_size=2), (1, 2, 7, 5)),
    "k3_s2_p1": (dict(kernel_size=3, stride=2, padding=1), (2, 2, 7, 7)),
    "k3_s1_p1": (dict(kernel_size=3, stride=1, padding=1), (1, 2, 4, 5)),
    "k_2x3_s_1x2": (dict(kernel_size=(2, 3), stride=(1, 2)), (1, 2, 5, 8)),
    "pad_1x0": (dict(kernel_size=(3, 2), stride=2, padding=(1, 0)), (1, 1, 6, 6)),
    "ceil": (dict(kernel_size=3, stride=2, ceil_mode=True), (1, 2, 6, 6)),
    "ceil_pad": (dict(kernel_size=3, stride=2, padding=1, ceil_mode=True), (1, 2, 6, 8)),
    "ceil_no_effect": (dict(kernel_size=2, stride=2, ceil_mode=True), (1, 1, 4, 4)),
    "global": (dict(kernel_size=(4, 5)), (2, 3, 4, 5)),
    "unbatched": (dict(kernel_size=2, stride=1), (3, 4, 4)),
}

MAX_ONLY = {
    "dilation2": (dict(kernel_size=2, dilation=2), (1, 2, 6, 6)),
    "dilation_2_s2_p1_ceil": (dict(kernel_size=3, stride=2, padding=1, dilation=2, ceil_mode=True), (1, 2, 9, 9)),
}

AVG_ONLY = {
    "exclude_pad": (dict(kernel_size=3, stride=2, padding=1, count_include_pad=False), (1, 2, 7, 7)),
    "ceil_exclude_pad": (dict(kernel_size=3, stride=2, padding=1, ceil_mode=True, count_include_pad=False), (1, 2, 6, 6)),
    "divisor5": (dict(kernel_size=2, divisor_override=5), (1, 2, 4, 4)),
    "divisor_pad": (dict(kernel_size=3, padding=1, stride=2, divisor_override=4), (1, 2, 5, 5)),
}


def test_max_pool(check_op) -> None:
    cases = [
        (f"{name}_{dtype}", nn.MaxPool2d(**arguments), (tensor(shape, dtype),))
        for dtype in (torch.float32, torch.float64)
        for name, (arguments, shape) in {**WINDOWS, **MAX_ONLY}.items()
    ]
    check_op.many(cases, ops=[MAX_POOL], exact=True)


def test_max_pool_indices(check_op) -> None:
    """The indices output (flat H*W positions); ties are broken the way PyTorch does."""
    ties = torch.tensor([[[[1.0, 1.0, 0.0, 2.0], [1.0, 0.5, 2.0, 2.0], [3.0, 3.0, 3.0, 3.0], [3.0, 3.0, -1.0, 3.0]]]])
    cases = [
        (name, nn.MaxPool2d(**arguments, return_indices=True), (tensor(shape),))
        for name, (arguments, shape) in {**WINDOWS, **MAX_ONLY}.items()
    ]
    cases.append(("ties", nn.MaxPool2d(2, return_indices=True), (ties,)))
    cases.append(("ties_overlapping", nn.MaxPool2d(3, stride=1, padding=1, return_indices=True), (ties,)))
    check_op.many(cases, ops=[MAX_POOL], exact=True)


def test_max_pool_integer_dtypes(check_op) -> None:
    cases = [
        (str(dtype), nn.MaxPool2d(3, stride=2, padding=1, return_indices=True), (tensor((1, 2, 5, 5), dtype),))
        for dtype in (torch.int8, torch.uint8, torch.int16, torch.int32, torch.int64)
    ]
    check_op.many(cases, ops=[MAX_POOL], exact=True)


def test_max_pool_nan_and_infinity(check_op) -> None:
    """NaN wins the window (PyTorch propagates it); -inf inputs next to padding."""
    x = torch.tensor([[[[float("nan"), 1.0, 2.0, 0.0], [0.0, -1.0, 5.0, float("nan")],
                        [float("-inf"), float("-inf"), 1.0, 1.0], [float("-inf"), float("-inf"), 2.0, 1.0]]]])  # fmt: skip
    cases = [
        ("k2", lambda t: F.max_pool2d_with_indices(t, 2), (x,)),
        ("k3_p1", lambda t: F.max_pool2d_with_indices(t, 3, 1, 1), (x,)),
    ]
    check_op.many(cases, ops=[MAX_POOL], exact=True)


def test_avg_pool(check_op) -> None:
    cases = [
        (f"{name}_{dtype}", nn.AvgPool2d(**arguments), (tensor(shape, dtype),))
        for dtype in (torch.float32, torch.float64)
        for name, (arguments, shape) in {**WINDOWS, **AVG_ONLY}.items()
    ]
    check_op.many(cases, ops=[AVG_POOL])


def test_avg_pool_count_include_pad_both_ways(check_op) -> None:
    """The same window with and without padding in the divisor, on constant input (a
    wrong divisor shows directly in the border values)."""
    x = torch.ones(1, 1, 5, 5)
    cases = [
        (f"include_{include}_ceil_{ceil}", nn.AvgPool2d(3, 2, 1, ceil_mode=ceil, count_include_pad=include), (x,))
        for include in (True, False)
        for ceil in (True, False)
    ]
    check_op.many(cases, ops=[AVG_POOL])
