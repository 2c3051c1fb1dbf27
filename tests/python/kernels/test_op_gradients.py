"""Gradient kernels against eager PyTorch's autograd: convolution_backward (1-D and
2-D, direct and transposed, strides, padding, dilation, groups, output_padding, each
output_mask combination) and max_pool2d_with_indices_backward (overlapping windows,
padding, ceil_mode, dilation), float32 and float64. torch.export keeps these ops when a
model calls them directly, which is how the tests reach the kernels."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from torch.testing import make_tensor

from kiln.runtime import KilnRuntimeError

aten = torch.ops.aten
FLOATS = [torch.float32, torch.float64]


def tensor(shape, dtype=torch.float32) -> torch.Tensor:
    return make_tensor(shape, dtype=dtype, device="cpu", low=-1, high=1)


# name -> (input shape, weight shape, stride, padding, dilation, transposed, output_padding, groups)
CONVOLUTIONS = {
    "conv2d": ((2, 3, 6, 5), (4, 3, 3, 3), [1, 1], [1, 1], [1, 1], False, [0, 0], 1),
    "conv2d_strided_uneven": ((1, 2, 7, 8), (3, 2, 3, 2), [2, 3], [0, 1], [1, 1], False, [0, 0], 1),
    "conv2d_dilated_groups": ((1, 4, 8, 8), (6, 2, 3, 3), [1, 1], [2, 2], [2, 2], False, [0, 0], 2),
    "depthwise": ((2, 3, 5, 5), (3, 1, 3, 3), [2, 2], [1, 1], [1, 1], False, [0, 0], 3),
    "conv1d": ((2, 3, 9), (2, 3, 4), [2], [1], [1], False, [0], 1),
    "transposed2d": ((1, 4, 3, 4), (4, 3, 4, 4), [2, 2], [1, 1], [1, 1], True, [0, 0], 1),
    "transposed2d_outpad_groups": ((2, 4, 3, 3), (4, 1, 3, 3), [2, 2], [1, 0], [1, 1], True, [1, 1], 2),
    "transposed1d_dilated": ((1, 2, 5), (2, 3, 3), [1], [0], [2], True, [0], 1),
}


def _conv_case(shapes, dtype, mask):
    in_shape, w_shape, stride, padding, dilation, transposed, output_padding, groups = shapes
    x, w = tensor(in_shape, dtype), tensor(w_shape, dtype)
    y = aten.convolution.default(x, w, None, stride, padding, dilation, transposed, output_padding, groups)
    g = tensor(tuple(y.shape), dtype)

    def backward(g, x, w):
        grads = aten.convolution_backward.default(g, x, w, [y.shape[1]], stride, padding, dilation, transposed,
                                                  output_padding, groups, mask)
        return tuple(t for t, wanted in zip(grads, mask) if wanted)

    return backward, (g, x, w)


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_convolution_backward(check_op, dtype: torch.dtype) -> None:
    cases = [(name, *_conv_case(shapes, dtype, [True, True, True])) for name, shapes in CONVOLUTIONS.items()]
    check_op.many(cases, ops=["aten::convolution_backward.out"])


def test_convolution_backward_output_mask(check_op) -> None:
    """Masked-out gradients are None, which an exported program cannot return: built
    call by call, with empty placeholders the kernel must leave alone."""
    in_shape, w_shape, stride, padding, dilation, transposed, output_padding, groups = CONVOLUTIONS["conv2d_dilated_groups"]
    x, w = tensor(in_shape), tensor(w_shape)
    y = aten.convolution.default(x, w, None, stride, padding, dilation, transposed, output_padding, groups)
    g = tensor(tuple(y.shape))
    for mask in ([True, False, False], [False, True, False], [False, False, True], [False, True, True]):
        grads = aten.convolution_backward.default(g, x, w, [y.shape[1]], stride, padding, dilation, transposed,
                                                  output_padding, groups, mask)
        expected = [t if wanted else torch.zeros(0) for t, wanted in zip(grads, mask)]
        check_op.call("aten::convolution_backward.out",
                      [g, x, w, [y.shape[1]], stride, padding, dilation, transposed, output_padding, groups, mask], expected)


def test_convolution_backward_matches_autograd(check_op) -> None:
    """The gradients of a layer as autograd computes them."""
    layer = torch.nn.Conv2d(3, 4, 3, stride=2, padding=1)
    x = torch.randn(2, 3, 7, 7, requires_grad=True)
    out = layer(x)
    g = torch.randn_like(out)
    out.backward(g)

    def backward(g, x, w):
        return aten.convolution_backward.default(g, x, w, [4], [2, 2], [1, 1], [1, 1], False, [0, 0], 1, [True, True, True])

    grad_x, grad_w, grad_b = check_op.run(backward, (g, x.detach(), layer.weight.detach()), ops=["aten::convolution_backward.out"])
    torch.testing.assert_close(grad_x, x.grad, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(grad_w, layer.weight.grad, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(grad_b, layer.bias.grad, rtol=1e-5, atol=1e-5)


def test_convolution_backward_with_wrong_grad_shape_fails(check_op) -> None:
    x, w = tensor((1, 2, 5, 5)), tensor((3, 2, 3, 3))
    grad = tensor((1, 3, 4, 4))  # a 3x3 kernel makes 3x3 outputs
    with pytest.raises(KilnRuntimeError) as caught:
        check_op.call("aten::convolution_backward.out",
                      [grad, x, w, [3], [1, 1], [0, 0], [1, 1], False, [0, 0], 1, [True, True, True]],
                      [torch.zeros(1, 2, 5, 5), torch.zeros(3, 2, 3, 3), torch.zeros(3)], returns=3)
    assert caught.value.error_name == "InvalidArgument"


# name -> (input shape, kernel, stride, padding, dilation, ceil_mode)
POOLS = {
    "2x2": ((1, 2, 6, 6), [2, 2], [2, 2], [0, 0], [1, 1], False),
    "overlapping_3x3": ((2, 3, 7, 7), [3, 3], [1, 1], [1, 1], [1, 1], False),
    "ceil_mode": ((1, 2, 7, 5), [3, 2], [2, 2], [1, 0], [1, 1], True),
    "dilated": ((1, 1, 9, 9), [2, 3], [1, 2], [0, 1], [2, 2], False),
    "unbatched": ((3, 5, 4), [2, 2], [1, 1], [0, 0], [1, 1], False),
}


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_max_pool2d_with_indices_backward(check_op, dtype: torch.dtype) -> None:
    cases = []
    for name, (shape, kernel, stride, padding, dilation, ceil_mode) in POOLS.items():
        x = torch.randperm(int(torch.tensor(shape).prod())).reshape(shape).to(dtype)  # distinct: one maximum per window
        out, indices = aten.max_pool2d_with_indices.default(x, kernel, stride, padding, dilation, ceil_mode)
        g = tensor(tuple(out.shape), dtype)
        cases.append((name, lambda g, x, i, k=kernel, s=stride, p=padding, d=dilation, c=ceil_mode:
                      aten.max_pool2d_with_indices_backward.default(g, x, k, s, p, d, c, i), (g, x, indices)))
    check_op.many(cases, ops=["aten::max_pool2d_with_indices_backward.grad_input"])


def test_max_pool_backward_matches_autograd(check_op) -> None:
    x = torch.randn(1, 2, 8, 8, requires_grad=True)
    out, indices = F.max_pool2d(x, 3, stride=2, padding=1, return_indices=True)
    g = torch.randn_like(out)
    out.backward(g)
    (grad,) = check_op.run(lambda g, x, i: aten.max_pool2d_with_indices_backward.default(g, x, [3, 3], [2, 2], [1, 1], [1, 1], False, i),
                           (g, x.detach(), indices), ops=["aten::max_pool2d_with_indices_backward.grad_input"])
    torch.testing.assert_close(grad, x.grad)


def test_max_pool_backward_with_out_of_range_index_fails(check_op) -> None:
    x = tensor((1, 1, 4, 4))
    g = tensor((1, 1, 2, 2))
    indices = torch.tensor([[[[0, 3], [8, 16]]]])
    with pytest.raises(KilnRuntimeError) as caught:
        check_op.call("aten::max_pool2d_with_indices_backward.grad_input",
                      [g, x, [2, 2], [2, 2], [0, 0], [1, 1], False, indices], [torch.zeros(1, 1, 4, 4)])
    assert caught.value.error_name == "InvalidArgument" and "16" in str(caught.value)
