"""_softmax and _log_softmax kernels against eager PyTorch: every dimension (negative
ones too) of 1-D to 4-D inputs, float32 and float64, large logits (the kernel must
subtract the maximum), masked (-inf) entries, NaN, 0-dim and size-1 dimensions."""

from __future__ import annotations

import pytest
import torch
from torch.testing import make_tensor

FUNCTIONS = {
    "softmax": (torch.softmax, "aten::_softmax.out"),
    "log_softmax": (torch.log_softmax, "aten::_log_softmax.out"),
}

# (shape, dim): last, first, middle and negative dims; a size-1 softmax dimension.
SHAPE_DIMS = [
    ((7,), 0),
    ((3, 5), -1),
    ((3, 5), 0),
    ((2, 3, 4), 1),
    ((2, 3, 4), -3),
    ((2, 3, 4, 5), 2),
    ((2, 3, 4, 5), -1),
    ((4, 1, 3), 1),
]


def name_of(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_every_dimension(check_op, name: str) -> None:
    function, op = FUNCTIONS[name]
    cases = [
        (f"{name_of(dtype)}_{list(shape)}_dim{dim}", lambda x, dim=dim: function(x, dim),
         (make_tensor(shape, dtype=dtype, device="cpu", low=-4, high=4),))
        for dtype in (torch.float32, torch.float64)
        for shape, dim in SHAPE_DIMS
    ]  # fmt: skip
    check_op.many(cases, ops=[op])


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_large_logits_do_not_overflow(check_op, name: str) -> None:
    function, op = FUNCTIONS[name]
    x = make_tensor((3, 6), dtype=torch.float32, device="cpu", low=-1, high=1) * 1000 + 500
    check_op(lambda t: function(t, -1), (x,), ops=[op])


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_masked_and_special_values(check_op, name: str) -> None:
    """-inf entries (attention masks) get probability 0; a fully masked row, +inf or
    NaN make the row NaN, as in PyTorch."""
    function, op = FUNCTIONS[name]
    inf, nan = float("inf"), float("nan")
    x = torch.tensor(
        [
            [1.0, -inf, 2.0, -inf],
            [-inf, -inf, -inf, -inf],
            [0.5, inf, 1.0, 2.0],
            [nan, 1.0, 2.0, 3.0],
            [3.0, 3.0, 3.0, 3.0],
        ]
    )
    check_op(lambda t: function(t, 1), (x,), ops=[op])


def test_zero_dim_input(check_op) -> None:
    x = torch.tensor(1.5)
    cases = [(name, lambda t, f=f: f(t, 0), (x,)) for name, (f, _) in FUNCTIONS.items()]
    check_op.many(cases, ops=[op for _, op in FUNCTIONS.values()])
