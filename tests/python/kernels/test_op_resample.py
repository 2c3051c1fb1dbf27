"""Resampling kernels against eager PyTorch: bilinear upsampling (output size or scale
factor, align_corners, up and down, non-integer ratios), antialiased bilinear
(F.interpolate(antialias=True), down- and upsampling), and grid_sampler_2d (bilinear,
nearest, bicubic x zeros, border, reflection padding x align_corners, grids reaching
outside [-1, 1]) in float32 and float64; and a small U-Net with bilinear upsampling and
skip concatenations."""

from __future__ import annotations

import itertools

import pytest
import torch
import torch.nn.functional as F
from torch import nn
from torch.testing import make_tensor

FLOATS = [torch.float32, torch.float64]


def tensor(shape, dtype=torch.float32, low=-2.0, high=2.0) -> torch.Tensor:
    return make_tensor(shape, dtype=dtype, device="cpu", low=low, high=high)


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_upsample_bilinear2d(check_op, dtype: torch.dtype) -> None:
    variants = [
        ("scale2", dict(scale_factor=2)),
        ("scale2_align", dict(scale_factor=2, align_corners=True)),
        ("size_up_odd", dict(size=(7, 5))),
        ("size_up_align", dict(size=(7, 5), align_corners=True)),
        ("size_down", dict(size=(2, 3))),
        ("scale_1_5", dict(scale_factor=(1.5, 2.5))),
        ("scale_down_0_5", dict(scale_factor=0.5)),
        ("to_one_pixel_align", dict(size=(1, 1), align_corners=True)),
    ]
    cases = [(name, lambda x, kw=kw: F.interpolate(x, mode="bilinear", **kw), (tensor((2, 3, 4, 6), dtype),))
             for name, kw in variants]
    check_op.many(cases, ops=["aten::upsample_bilinear2d.vec_out"])


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_upsample_bilinear2d_antialiased(check_op, dtype: torch.dtype) -> None:
    variants = [
        ("down_2", dict(scale_factor=0.5)),
        ("down_odd", dict(size=(3, 4))),
        ("down_3_and_up", dict(size=(2, 13))),
        ("up", dict(size=(11, 9))),
        ("down_align", dict(size=(3, 5), align_corners=True)),
        ("up_align", dict(size=(10, 9), align_corners=True)),
        ("same_size", dict(size=(7, 9))),
    ]
    cases = [(name, lambda x, kw=kw: F.interpolate(x, mode="bilinear", antialias=True, **kw), (tensor((1, 2, 7, 9), dtype),))
             for name, kw in variants]
    check_op.many(cases, ops=["aten::_upsample_bilinear2d_aa.out"])


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_grid_sampler_2d(check_op, dtype: torch.dtype) -> None:
    x = tensor((2, 3, 5, 6), dtype)
    grid = tensor((2, 4, 7, 2), dtype, low=-1.4, high=1.4)  # some points outside the image
    cases = []
    for mode, padding, align in itertools.product(["bilinear", "nearest", "bicubic"], ["zeros", "border", "reflection"], [False, True]):
        cases.append((f"{mode}_{padding}_{align}",
                      lambda x, g, mode=mode, padding=padding, align=align: F.grid_sample(x, g, mode, padding, align),
                      (x, grid)))
    cases.append(("far_outside", lambda x, g: F.grid_sample(x, g * 40, "bilinear", "reflection", False), (x, grid)))
    # Pixel centres: sampling reproduces the image.
    ys, xs = torch.meshgrid((torch.arange(5, dtype=dtype) * 2 + 1) / 5 - 1, (torch.arange(6, dtype=dtype) * 2 + 1) / 6 - 1, indexing="ij")
    centres = torch.stack([xs, ys], -1).expand(2, 5, 6, 2).contiguous()
    cases.append(("pixel_centres", lambda x, g: F.grid_sample(x, g, "bilinear", "zeros", False), (x, centres)))
    check_op.many(cases, ops=["aten::grid_sampler_2d.out"])


class _TinyUNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.down1 = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU())
        self.down2 = nn.Sequential(nn.Conv2d(8, 16, 3, padding=1), nn.ReLU())
        self.up = nn.Sequential(nn.Conv2d(24, 8, 3, padding=1), nn.ReLU())
        self.head = nn.Conv2d(8, 2, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        skip = self.down1(x)
        deep = self.down2(F.max_pool2d(skip, 2))
        up = F.interpolate(deep, scale_factor=2, mode="bilinear", align_corners=False)
        return self.head(self.up(torch.cat([up, skip], dim=1)))


def test_unet_with_bilinear_upsampling(check_op) -> None:
    check_op(_TinyUNet(), (torch.randn(1, 3, 16, 16),), ops=["aten::upsample_bilinear2d.vec_out", "aten::cat.out"])
