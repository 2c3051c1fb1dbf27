"""convolution kernel against eager PyTorch: Conv2d and Conv1d with strides, padding
(symmetric, per-dimension, "same"), dilation, groups (incl. depthwise and channel
multipliers), without bias, pointwise (1x1) kernels, non-square kernels, batches,
unbatched input, weights given at run time, float32 and float64; ConvTranspose2d and
ConvTranspose1d with the same variations plus output_padding."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from torch import nn
from torch.testing import make_tensor

from kiln.runtime import KilnRuntimeError

OP = "aten::convolution.out"

# name -> (Conv2d arguments, input shape)
CONV2D = {
    "3x3": (dict(in_channels=3, out_channels=4, kernel_size=3), (1, 3, 7, 7)),
    "pad1": (dict(in_channels=3, out_channels=4, kernel_size=3, padding=1), (1, 3, 6, 5)),
    "pad_2_1": (dict(in_channels=2, out_channels=3, kernel_size=3, padding=(2, 1)), (1, 2, 5, 6)),
    "same_dilated": (dict(in_channels=2, out_channels=3, kernel_size=3, padding="same", dilation=2), (1, 2, 7, 7)),
    "stride2": (dict(in_channels=3, out_channels=4, kernel_size=3, stride=2), (1, 3, 9, 8)),
    "stride_2_1_pad": (dict(in_channels=3, out_channels=2, kernel_size=3, stride=(2, 1), padding=1), (1, 3, 7, 6)),
    "stride3_pad2": (dict(in_channels=2, out_channels=2, kernel_size=4, stride=3, padding=2), (1, 2, 10, 11)),
    "dilation_2_3": (dict(in_channels=2, out_channels=3, kernel_size=3, dilation=(2, 3), padding=1), (1, 2, 9, 10)),
    "groups2": (dict(in_channels=4, out_channels=6, kernel_size=3, groups=2, padding=1), (1, 4, 5, 5)),
    "depthwise": (dict(in_channels=4, out_channels=4, kernel_size=3, groups=4, padding=1), (1, 4, 6, 6)),
    "depthwise_stride2": (dict(in_channels=4, out_channels=4, kernel_size=3, groups=4, stride=2, padding=1), (1, 4, 7, 7)),
    "depthwise_multiplier2": (dict(in_channels=3, out_channels=6, kernel_size=3, groups=3), (1, 3, 5, 5)),
    "no_bias": (dict(in_channels=3, out_channels=4, kernel_size=3, bias=False, padding=1), (1, 3, 5, 5)),
    "pointwise": (dict(in_channels=8, out_channels=5, kernel_size=1), (1, 8, 4, 6)),
    "pointwise_groups": (dict(in_channels=8, out_channels=4, kernel_size=1, groups=2, bias=False), (1, 8, 3, 3)),
    "pointwise_stride2": (dict(in_channels=4, out_channels=3, kernel_size=1, stride=2), (1, 4, 5, 5)),
    "pointwise_pad1": (dict(in_channels=4, out_channels=3, kernel_size=1, padding=1), (1, 4, 3, 3)),
    "kernel_3x1": (dict(in_channels=2, out_channels=3, kernel_size=(3, 1)), (1, 2, 6, 4)),
    "kernel_1x5_pad": (dict(in_channels=2, out_channels=3, kernel_size=(1, 5), padding=(0, 2)), (1, 2, 4, 6)),
    "kernel_is_input": (dict(in_channels=3, out_channels=5, kernel_size=(4, 3)), (1, 3, 4, 3)),
    "batch3": (dict(in_channels=3, out_channels=4, kernel_size=3, padding=1, stride=2), (3, 3, 6, 6)),
    "unbatched": (dict(in_channels=3, out_channels=4, kernel_size=3), (3, 5, 5)),
}

CONV1D = {
    "k3": (dict(in_channels=3, out_channels=4, kernel_size=3), (1, 3, 10)),
    "stride2_pad1": (dict(in_channels=3, out_channels=4, kernel_size=3, stride=2, padding=1), (2, 3, 9)),
    "dilation2": (dict(in_channels=2, out_channels=3, kernel_size=3, dilation=2), (1, 2, 11)),
    "depthwise": (dict(in_channels=4, out_channels=4, kernel_size=5, groups=4, padding=2), (1, 4, 8)),
    "groups2_no_bias": (dict(in_channels=4, out_channels=2, kernel_size=2, groups=2, bias=False), (1, 4, 7)),
    "pointwise": (dict(in_channels=6, out_channels=3, kernel_size=1), (1, 6, 5)),
}


# name -> (ConvTranspose2d arguments, input shape)
CONV_TRANSPOSE2D = {
    "3x3": (dict(in_channels=2, out_channels=3, kernel_size=3), (1, 2, 4, 4)),
    "stride2_pad1_k4": (dict(in_channels=4, out_channels=3, kernel_size=4, stride=2, padding=1), (2, 4, 5, 5)),
    "stride2_k2": (dict(in_channels=3, out_channels=2, kernel_size=2, stride=2), (1, 3, 4, 6)),
    "output_padding": (dict(in_channels=2, out_channels=2, kernel_size=3, stride=2, padding=1, output_padding=1), (1, 2, 5, 4)),
    "stride_2_3_outpad_1_2": (dict(in_channels=2, out_channels=3, kernel_size=(3, 4), stride=(2, 3), output_padding=(1, 2)), (1, 2, 3, 4)),
    "dilation2": (dict(in_channels=2, out_channels=3, kernel_size=3, dilation=2, padding=2), (1, 2, 5, 5)),
    "dilation_outpad": (dict(in_channels=2, out_channels=2, kernel_size=2, dilation=3, output_padding=2), (1, 2, 3, 3)),
    "groups2": (dict(in_channels=4, out_channels=6, kernel_size=3, groups=2, stride=2), (1, 4, 3, 3)),
    "depthwise": (dict(in_channels=3, out_channels=3, kernel_size=3, groups=3, padding=1), (1, 3, 5, 5)),
    "channel_multiplier": (dict(in_channels=2, out_channels=4, kernel_size=3, groups=2), (1, 2, 3, 4)),
    "pointwise": (dict(in_channels=5, out_channels=3, kernel_size=1), (1, 5, 3, 4)),
    "no_bias_pad_wider": (dict(in_channels=2, out_channels=2, kernel_size=3, padding=(0, 2), bias=False), (1, 2, 3, 5)),
    "unbatched": (dict(in_channels=2, out_channels=3, kernel_size=3, stride=2), (2, 3, 3)),
}

CONV_TRANSPOSE1D = {
    "k3": (dict(in_channels=3, out_channels=2, kernel_size=3), (1, 3, 6)),
    "stride2_pad1_outpad1": (dict(in_channels=4, out_channels=6, kernel_size=3, stride=2, padding=1, output_padding=1, groups=2), (2, 4, 7)),
    "dilation2_no_bias": (dict(in_channels=2, out_channels=3, kernel_size=3, dilation=2, bias=False), (1, 2, 5)),
    "k4_s4": (dict(in_channels=2, out_channels=1, kernel_size=4, stride=4), (1, 2, 3)),
}


def _cases(table, layer_type, dtype: torch.dtype):
    cases = []
    for name, (arguments, shape) in table.items():
        layer = layer_type(**arguments).to(dtype)
        cases.append((f"{name}_{dtype}", layer, (make_tensor(shape, dtype=dtype, device="cpu", low=-2, high=2),)))
    return cases


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
def test_conv2d(check_op, dtype: torch.dtype) -> None:
    check_op.many(_cases(CONV2D, nn.Conv2d, dtype), ops=[OP])


def test_conv1d(check_op) -> None:
    check_op.many(_cases(CONV1D, nn.Conv1d, torch.float32) + _cases(CONV1D, nn.Conv1d, torch.float64), ops=[OP])


def test_weight_and_bias_given_at_run_time(check_op) -> None:
    """Weights that are inputs, not constants (the kernel reads them from planned memory)."""

    def tensor(*shape: int) -> torch.Tensor:
        return make_tensor(shape, dtype=torch.float32, device="cpu", low=-1, high=1)

    cases = [
        ("conv2d", lambda x, w, b: F.conv2d(x, w, b, stride=2, padding=1), (tensor(2, 4, 7, 7), tensor(6, 4, 3, 3), tensor(6))),
        ("conv2d_grouped", lambda x, w: F.conv2d(x, w, groups=2, dilation=2), (tensor(1, 4, 8, 8), tensor(4, 2, 3, 3))),
        ("conv1d", lambda x, w, b: F.conv1d(x, w, b, padding=2), (tensor(1, 3, 6), tensor(2, 3, 5), tensor(2))),
    ]
    check_op.many(cases, ops=[OP])


def test_larger_layer_accumulates_within_tolerance(check_op) -> None:
    """A 3x3 layer with 32 input channels: 288 products per output."""
    layer = nn.Conv2d(32, 16, 3, padding=1)
    check_op(layer, (make_tensor((1, 32, 8, 8), dtype=torch.float32, device="cpu"),), ops=[OP])


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
def test_conv_transpose2d(check_op, dtype: torch.dtype) -> None:
    check_op.many(_cases(CONV_TRANSPOSE2D, nn.ConvTranspose2d, dtype), ops=[OP])


def test_conv_transpose1d(check_op) -> None:
    cases = _cases(CONV_TRANSPOSE1D, nn.ConvTranspose1d, torch.float32) + _cases(CONV_TRANSPOSE1D, nn.ConvTranspose1d, torch.float64)
    check_op.many(cases, ops=[OP])


def test_conv_transpose_decoder_and_run_time_weights(check_op) -> None:
    """A transposed-conv decoder as users write it, and F.conv_transpose2d with its
    weight and bias as inputs."""
    decoder = nn.Sequential(
        nn.ConvTranspose2d(8, 4, 4, stride=2, padding=1), nn.ReLU(), nn.ConvTranspose2d(4, 1, 2, stride=2), nn.Sigmoid()
    )
    w = make_tensor((4, 3, 3, 3), dtype=torch.float32, device="cpu", low=-1, high=1)
    cases = [
        ("decoder", decoder, (make_tensor((2, 8, 4, 4), dtype=torch.float32, device="cpu", low=-1, high=1),)),
        ("functional", lambda x, w, b: F.conv_transpose2d(x, w, b, stride=2, padding=1, output_padding=1),
         (make_tensor((1, 4, 3, 3), dtype=torch.float32, device="cpu"), w, torch.randn(3))),
    ]
    check_op.many(cases, ops=[OP])


def test_transposed_convolution_with_bad_output_padding_fails_with_a_named_error(check_op) -> None:
    """output_padding must be smaller than stride or dilation; torch checks it too, so
    the program is built call by call."""
    x, w = torch.randn(1, 2, 3, 3), torch.randn(2, 2, 3, 3)
    with pytest.raises(KilnRuntimeError) as caught:
        check_op.call(OP, [x, w, None, [1, 1], [0, 0], [1, 1], True, [1, 1], 1], [torch.zeros(1, 2, 6, 6)])
    assert caught.value.error_name == "InvalidArgument"
    assert "output_padding" in str(caught.value)
