"""Reflection and replication padding kernels (1-D, 2-D, 3-D) against eager PyTorch
(exact): F.pad(mode="reflect" / "replicate") with symmetric, one-sided, asymmetric and
negative (cropping) pads, batched and unbatched inputs, over 1-, 2-, 4- and 8-byte
dtypes (PyTorch has no bool padding to compare with); pads a reflection cannot make
fail with a named error."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from torch.testing import make_tensor

from kiln.runtime import KilnRuntimeError

aten = torch.ops.aten
DTYPES = [torch.float32, torch.int64, torch.int8, torch.float16]
PADS = [aten.reflection_pad1d.default, aten.reflection_pad2d.default, aten.reflection_pad3d.default,
        aten.replication_pad1d.default, aten.replication_pad2d.default, aten.replication_pad3d.default]


def tensor(shape, dtype=torch.float32) -> torch.Tensor:
    return make_tensor(shape, dtype=dtype, device="cpu")


def name_of(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


# (name, pad, input shape): pads are valid reflections for the shapes (each < its dim).
VARIANTS = [
    ("1d", (2, 1), (2, 3, 5)),
    ("1d_unbatched_one_sided", (0, 3), (3, 4)),
    ("1d_crop", (-1, 2), (1, 2, 5)),
    ("2d", (1, 2, 2, 0), (1, 2, 4, 3)),
    ("2d_unbatched", (1, 1, 1, 1), (3, 2, 2)),
    ("3d", (1, 0, 2, 1, 1, 1), (1, 2, 3, 4, 2)),
    ("3d_unbatched_crop", (0, -1, 1, 0, 1, 2), (2, 3, 3, 3)),
]


@pytest.mark.parametrize("mode", ["reflect", "replicate"])
def test_pad_modes(check_op, mode: str) -> None:
    cases = []
    for name, pad, shape in VARIANTS:
        for d in DTYPES:
            cases.append((f"{name}_{name_of(d)}", lambda x, pad=pad: F.pad(x, pad, mode=mode), (tensor(shape, d),)))
    kind = "reflection" if mode == "reflect" else "replication"
    ops = [f"aten::{kind}_pad{k}d.out" for k in (1, 2, 3)]
    check_op.many(cases, ops=ops, exact=True, preserve=PADS)


def test_replication_pads_wider_than_the_input(check_op) -> None:
    cases = [
        ("1d", lambda x: F.pad(x, (4, 6), mode="replicate"), (tensor((1, 2, 3)),)),
        ("2d_single_pixel", lambda x: F.pad(x, (2, 2, 3, 1), mode="replicate"), (tensor((1, 1, 1, 1)),)),
    ]
    check_op.many(cases, ops=["aten::replication_pad1d.out", "aten::replication_pad2d.out"], exact=True, preserve=PADS)


def test_reflection_pad_as_large_as_the_input_fails(check_op) -> None:
    x = tensor((1, 2, 3))
    with pytest.raises(KilnRuntimeError) as caught:
        check_op.call("aten::reflection_pad1d.out", [x, [3, 0]], [torch.zeros(1, 2, 6)])
    assert caught.value.error_name == "InvalidArgument" and "padding" in str(caught.value)
