"""cat, constant_pad_nd and upsample_nearest2d kernels against eager PyTorch (exact):
concatenation along every (and negative) dimension of 2 to 4 inputs, legacy empty
inputs and mixed dtypes; constant padding of 1 to 3 trailing dimensions, negative
padding (cropping), fill values, integer and bool tensors; nearest upsampling by
integer and fractional scale factors, and to explicit sizes (up and down)."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch.testing import make_tensor

DTYPES = [torch.float32, torch.int64, torch.int8, torch.float16, torch.bool]


def tensor(shape, dtype=torch.float32, **kwargs) -> torch.Tensor:
    return make_tensor(shape, dtype=dtype, device="cpu", **kwargs)


def name_of(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def test_cat(check_op) -> None:
    cases = []
    for dtype in DTYPES:
        cases += _cat_cases(dtype)
    check_op.many(cases, ops=["aten::cat.out"], exact=True)


def _cat_cases(dtype: torch.dtype) -> list:
    cases = [
        ("dim0", lambda a, b: torch.cat([a, b], 0), (tensor((2, 3), dtype), tensor((4, 3), dtype))),
        ("dim1", lambda a, b: torch.cat([a, b], 1), (tensor((2, 3), dtype), tensor((2, 1), dtype))),
        ("dim_neg1_three", lambda a, b, c: torch.cat([a, b, c], -1), (tensor((2, 3, 1), dtype), tensor((2, 3, 4), dtype), tensor((2, 3, 2), dtype))),
        ("channels_4d", lambda a, b: torch.cat([a, b], 1), (tensor((1, 2, 3, 3), dtype), tensor((1, 5, 3, 3), dtype))),
        ("dim_neg2", lambda a, b: torch.cat([a, b], -2), (tensor((2, 1, 3), dtype), tensor((2, 2, 3), dtype))),
        ("same_input_twice", lambda a: torch.cat([a, a, a], 0), (tensor((2, 2), dtype),)),
        ("one_input", lambda a: torch.cat([a], 1), (tensor((2, 2), dtype),)),
    ]
    return [(f"{name_of(dtype)}_{label}", function, inputs) for label, function, inputs in cases]


def test_cat_with_legacy_empty_and_empty_inputs(check_op) -> None:
    """A [0] tensor is skipped whatever the other shapes; a [2, 0] tensor adds nothing."""
    cases = [
        ("legacy_empty", lambda a, e: torch.cat([e, a], 1), (tensor((2, 3)), torch.empty(0))),
        ("zero_width", lambda a, e: torch.cat([a, e], 1), (tensor((2, 3)), torch.empty(2, 0))),
    ]
    check_op.many(cases, ops=["aten::cat.out"], exact=True)


def test_cat_mixed_dtypes_promotes(check_op) -> None:
    cases = [
        ("int32_float32", lambda a, b: torch.cat([a, b], 0), (tensor((2, 3), torch.int32), tensor((1, 3)))),
        ("int8_int64", lambda a, b: torch.cat([a, b], 1), (tensor((2, 3), torch.int8), tensor((2, 2), torch.int64))),
        ("bool_float64", lambda a, b: torch.cat([a, b], 0), (tensor((1, 3), torch.bool), tensor((2, 3), torch.float64))),
    ]
    check_op.many(cases, ops=["aten::cat.out"], exact=True)


PADS = [
    ("last_dim", (1, 2)),
    ("last_two", (1, 1, 2, 0)),
    ("last_three", (0, 1, 2, 1, 1, 0)),
    ("crop", (-1, 2)),
    ("crop_two_dims", (1, -2, -1, 0)),
]


def test_constant_pad(check_op) -> None:
    cases = []
    for dtype in (torch.float32, torch.float64, torch.int8, torch.int64, torch.bool):
        value = True if dtype is torch.bool else (3 if not dtype.is_floating_point else -1.5)
        x = tensor((2, 3, 4, 5), dtype)
        cases += [(f"{name_of(dtype)}_{name}", lambda t, p=pad, v=value: F.pad(t, p, value=v), (x,)) for name, pad in PADS]
        cases.append((f"{name_of(dtype)}_default_zero", lambda t: F.pad(t, (2, 2)), (tensor((3, 4), dtype),)))
    check_op.many(cases, ops=["aten::constant_pad_nd.out"], exact=True)


def test_constant_pad_1d_and_nan_value(check_op) -> None:
    cases = [
        ("1d", lambda x: F.pad(x, (3, 1), value=7.0), (tensor((4,)),)),
        ("nan_fill", lambda x: F.pad(x, (1, 1, 1, 1), value=float("nan")), (tensor((2, 2)),)),
        ("inf_fill", lambda x: F.pad(x, (0, 2), value=float("-inf")), (tensor((2, 2)),)),
    ]
    check_op.many(cases, ops=["aten::constant_pad_nd.out"], exact=True)


UPSAMPLES = [
    ("scale2", dict(scale_factor=2)),
    ("scale3", dict(scale_factor=3)),
    ("scale_2x3", dict(scale_factor=(2, 3))),
    ("scale_1.5", dict(scale_factor=1.5)),
    ("scale_1.7_0.6", dict(scale_factor=(1.7, 0.6))),
    ("scale_half", dict(scale_factor=0.5)),
    ("size_up", dict(size=(7, 11))),
    ("size_down", dict(size=(2, 3))),
    ("size_mixed", dict(size=(10, 4))),
]


def test_upsample_nearest(check_op) -> None:
    cases = [
        (f"{name_of(dtype)}_{name}", lambda x, a=arguments: F.interpolate(x, mode="nearest", **a), (tensor((1, 2, 5, 6), dtype),))
        for dtype in (torch.float32, torch.float64, torch.uint8, torch.float16)  # those eager upsampling supports
        for name, arguments in UPSAMPLES
    ]
    cases.append(("module_batch3", torch.nn.Upsample(scale_factor=2), (tensor((3, 4, 3, 2)),)))
    check_op.many(cases, ops=["aten::upsample_nearest2d.vec_out"], exact=True)

