"""Normalization kernels that compute their statistics, against eager PyTorch: batch
norm in training mode (_native_batch_norm_legit with running stats, which it updates,
and without: BatchNorm(track_running_stats=False), InstanceNorm), and in inference from
running stats; group norm (GroupNorm, with and without affine parameters, 3-D to 5-D
inputs); float32 and float64; mean and reciprocal standard deviation outputs too."""

from __future__ import annotations

import pytest
import torch
from torch import nn
from torch.testing import make_tensor

from kiln.runtime import KilnRuntimeError

aten = torch.ops.aten
FLOATS = [torch.float32, torch.float64]


def tensor(shape, dtype=torch.float32, low=-3.0, high=3.0) -> torch.Tensor:
    return make_tensor(shape, dtype=dtype, device="cpu", low=low, high=high)


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_batch_norm_without_running_stats(check_op, dtype: torch.dtype) -> None:
    """Training-mode batch norm with track_running_stats=False and instance norm both
    export to _native_batch_norm_legit.no_stats."""
    bn = nn.BatchNorm2d(3, track_running_stats=False).to(dtype)
    with torch.no_grad():
        bn.weight.uniform_(0.5, 2.0)
        bn.bias.uniform_(-1.0, 1.0)
    cases = [
        ("batch_norm_2d", bn, (tensor((4, 3, 5, 5), dtype),)),
        ("instance_norm", nn.InstanceNorm1d(4, affine=True).to(dtype), (tensor((2, 4, 7), dtype),)),
        ("functional_with_stats", lambda x: aten._native_batch_norm_legit.no_stats(x, None, None, True, 0.1, 1e-3),
         (tensor((3, 2, 4), dtype, low=10, high=12),)),
        ("no_spatial_dims", lambda x: aten._native_batch_norm_legit.no_stats(x, None, None, True, 0.1, 1e-5), (tensor((5, 3), dtype),)),
    ]
    # (Without running stats, eval() still normalises with the batch's statistics.)
    check_op.many(cases, ops=["aten::_native_batch_norm_legit.no_stats_out"])


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_batch_norm_training_updates_running_stats(check_op, dtype: torch.dtype) -> None:
    x = tensor((4, 3, 2, 3), dtype)
    weight, bias = tensor((3,), dtype, low=0.5, high=2), tensor((3,), dtype)
    mean, var = tensor((3,), dtype), tensor((3,), dtype, low=0.5, high=2)
    new_mean, new_var = mean.clone(), var.clone()
    out, save_mean, save_invstd = aten._native_batch_norm_legit.default(x, weight, bias, new_mean, new_var, True, 0.2, 1e-5)
    check_op.call("aten::_native_batch_norm_legit.out", [x, weight, bias, mean, var, True, 0.2, 1e-5],
                  [out, save_mean, save_invstd, new_mean, new_var], mutated=[3, 4])


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_batch_norm_inference_from_running_stats(check_op, dtype: torch.dtype) -> None:
    x, mean, var = tensor((2, 3, 4), dtype), tensor((3,), dtype), tensor((3,), dtype, low=0.5, high=2)
    expected = aten._native_batch_norm_legit.default(x, None, None, mean.clone(), var.clone(), False, 0.1, 1e-5)
    check_op.call("aten::_native_batch_norm_legit.out", [x, None, None, mean, var, False, 0.1, 1e-5], list(expected))


def test_batch_norm_with_mismatched_stats_fails(check_op) -> None:
    x = tensor((2, 3, 4))
    with pytest.raises(KilnRuntimeError) as caught:
        check_op.call("aten::_native_batch_norm_legit.out", [x, None, None, torch.zeros(4), torch.ones(4), True, 0.1, 1e-5],
                      [x, torch.zeros(3), torch.zeros(3)])
    assert caught.value.error_name == "InvalidArgument" and "running_mean" in str(caught.value)


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_group_norm(check_op, dtype: torch.dtype) -> None:
    affine = nn.GroupNorm(2, 6).to(dtype)
    with torch.no_grad():
        affine.weight.uniform_(0.5, 2.0)
        affine.bias.uniform_(-1.0, 1.0)
    cases = [
        ("affine_4d", affine, (tensor((2, 6, 3, 4), dtype),)),
        ("no_affine_3d", nn.GroupNorm(3, 6, affine=False).to(dtype), (tensor((1, 6, 5), dtype),)),
        ("one_group_5d", nn.GroupNorm(1, 4).to(dtype), (tensor((2, 4, 2, 2, 3), dtype),)),
        ("group_per_channel", nn.GroupNorm(4, 4).to(dtype), (tensor((3, 4, 6), dtype, low=5, high=6),)),
        ("stats", lambda x: aten.native_group_norm.default(x, None, None, 2, 4, 9, 2, 1e-5), (tensor((2, 4, 3, 3), dtype),)),
    ]
    check_op.many(cases, ops=["aten::native_group_norm.out"])
