"""_native_batch_norm_legit_no_training and native_layer_norm kernels against eager
PyTorch: BatchNorm1d/2d (2-D, 3-D, 4-D inputs), with and without affine parameters,
eps, statistics given at run time; LayerNorm over the last one or two dimensions,
with and without weight/bias, float32 and float64."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn
from torch.testing import make_tensor

BATCH_NORM = "aten::_native_batch_norm_legit_no_training.out"
LAYER_NORM = "aten::native_layer_norm.out"


def tensor(shape, dtype=torch.float32, **kwargs) -> torch.Tensor:
    return make_tensor(shape, dtype=dtype, device="cpu", **kwargs)


def with_statistics(layer: nn.modules.batchnorm._BatchNorm) -> nn.Module:
    """Running statistics and affine parameters far from the defaults (0, 1), so that a
    kernel that ignored any of them would fail."""
    channels = layer.num_features
    with torch.no_grad():
        layer.running_mean.copy_(tensor((channels,), low=-2, high=2))
        layer.running_var.copy_(tensor((channels,), low=0.1, high=3))
        if layer.affine:
            layer.weight.copy_(tensor((channels,), low=-2, high=2))
            layer.bias.copy_(tensor((channels,), low=-1, high=1))
    return layer.eval()


BATCH_NORMS = {
    "2d": (lambda: nn.BatchNorm2d(4), (2, 4, 3, 5)),
    "2d_no_affine": (lambda: nn.BatchNorm2d(3, affine=False), (1, 3, 4, 4)),
    "2d_eps": (lambda: nn.BatchNorm2d(3, eps=0.5), (1, 3, 2, 2)),
    "1d_2d_input": (lambda: nn.BatchNorm1d(5), (4, 5)),
    "1d_3d_input": (lambda: nn.BatchNorm1d(3), (2, 3, 7)),
    "1d_no_affine": (lambda: nn.BatchNorm1d(6, affine=False), (3, 6)),
}


def test_batch_norm(check_op) -> None:
    cases = [
        (f"{name}_{dtype}", with_statistics(make()).to(dtype), (tensor(shape, dtype, low=-3, high=3),))
        for dtype in (torch.float32, torch.float64)
        for name, (make, shape) in BATCH_NORMS.items()
    ]
    check_op.many(cases, ops=[BATCH_NORM])


def test_batch_norm_statistics_at_run_time(check_op) -> None:
    """Mean, variance, weight and bias as inputs; weight without bias and bias without weight."""
    x = tensor((2, 3, 4, 4))
    mean, weight, bias = tensor((3,)), tensor((3,)), tensor((3,))
    var = tensor((3,), low=0.2, high=2)
    cases = [
        ("all", lambda x, m, v, w, b: F.batch_norm(x, m, v, w, b, training=False, eps=1e-3), (x, mean, var, weight, bias)),
        ("weight_only", lambda x, m, v, w: F.batch_norm(x, m, v, weight=w, training=False), (x, mean, var, weight)),
        ("bias_only", lambda x, m, v, b: F.batch_norm(x, m, v, bias=b, training=False), (x, mean, var, bias)),
    ]
    check_op.many(cases, ops=[BATCH_NORM])


LAYER_NORMS = {
    "last_dim": (lambda: nn.LayerNorm(8), (3, 8)),
    "last_two_dims": (lambda: nn.LayerNorm((4, 5)), (2, 4, 5)),
    "4d": (lambda: nn.LayerNorm(6), (2, 3, 2, 6)),
    "no_affine": (lambda: nn.LayerNorm(7, elementwise_affine=False), (3, 7)),
    "no_bias": (lambda: nn.LayerNorm(5, bias=False), (4, 5)),
    "eps": (lambda: nn.LayerNorm(4, eps=0.1), (2, 4)),
    "1d_input": (lambda: nn.LayerNorm(9), (9,)),
}


def _randomized(layer: nn.LayerNorm) -> nn.LayerNorm:
    with torch.no_grad():
        if layer.weight is not None:
            layer.weight.copy_(tensor(layer.weight.shape, low=-2, high=2))
        if layer.bias is not None:
            layer.bias.copy_(tensor(layer.bias.shape, low=-1, high=1))
    return layer


def test_layer_norm(check_op) -> None:
    cases = [
        (f"{name}_{dtype}", _randomized(make()).to(dtype), (tensor(shape, dtype, low=-4, high=6),))
        for dtype in (torch.float32, torch.float64)
        for name, (make, shape) in LAYER_NORMS.items()
    ]
    check_op.many(cases, ops=[LAYER_NORM])


def test_layer_norm_constant_rows_and_offsets(check_op) -> None:
    """Rows with zero variance (eps alone keeps them finite) and a large common offset
    (a naive E[x^2] - E[x]^2 variance loses every digit)."""
    constant = torch.full((2, 6), 3.0)
    offset = tensor((3, 6)) + 1000.0
    cases = [
        ("constant_rows", lambda x: F.layer_norm(x, (6,)), (constant,)),
        ("offset_rows", lambda x: F.layer_norm(x, (6,)), (offset,)),
    ]
    check_op.many(cases, ops=[LAYER_NORM])
