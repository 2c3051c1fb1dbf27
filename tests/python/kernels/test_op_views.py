"""View and copy kernels against eager PyTorch (exact): view_copy, permute_copy,
expand_copy, slice_copy, select_copy, squeeze_copy (dims and dim overloads),
unsqueeze_copy and clone, over 1-, 2-, 4- and 8-byte dtypes and bool, with negative
dimensions and indices, steps, out-of-range slice ends, empty results and 0-dim tensors."""

from __future__ import annotations

import torch
from torch.testing import make_tensor

aten = torch.ops.aten

# One dtype of each element size, and bool.
DTYPES = [torch.float32, torch.int64, torch.int8, torch.float16, torch.bool]


def tensor(shape, dtype=torch.float32) -> torch.Tensor:
    return make_tensor(shape, dtype=dtype, device="cpu")


def name_of(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def _check_over_dtypes(check_op, variants, shape, op: str, **kwargs) -> None:
    cases = [
        (f"{name}_{name_of(dtype)}", function, (tensor(shape, dtype),))
        for dtype in DTYPES
        for name, function in variants
    ]
    check_op.many(cases, ops=[op], exact=True, **kwargs)


def test_view_copy(check_op) -> None:
    variants = [
        ("flatten", lambda x: x.flatten(1)),
        ("reshape_minus1", lambda x: x.reshape(-1)),
        ("minus1_middle", lambda x: x.view(2, -1, 2)),
        ("unflatten", lambda x: x.view(2, 3, 2, 2)),
        ("permuted_then_reshaped", lambda x: x.permute(2, 0, 1).reshape(4, 6)),
    ]
    _check_over_dtypes(check_op, variants, (2, 3, 4), "aten::view_copy.out")


def test_view_copy_zero_dim(check_op) -> None:
    cases = [
        ("to_1", lambda x: x.view(1), (torch.tensor(2.5),)),
        ("to_0dim", lambda x: x.reshape(()), (torch.tensor([7], dtype=torch.int32),)),
    ]
    check_op.many(cases, ops=["aten::view_copy.out"], exact=True)


def test_permute_copy(check_op) -> None:
    variants = [
        ("nchw_to_nhwc", lambda x: x.permute(0, 2, 3, 1)),
        ("reverse", lambda x: x.permute(3, 2, 1, 0)),
        ("negative_dims", lambda x: x.permute(-1, 0, -3, 2)),
        ("transpose_middle", lambda x: x.transpose(1, 2)),
        ("identity", lambda x: x.permute(0, 1, 2, 3)),
    ]
    _check_over_dtypes(check_op, variants, (2, 3, 4, 5), "aten::permute_copy.out")


def test_permute_copy_2d(check_op) -> None:
    cases = [(name_of(d), lambda x: x.t(), (tensor((3, 7), d),)) for d in DTYPES]
    check_op.many(cases, ops=["aten::permute_copy.out"], exact=True)


def test_expand_copy(check_op) -> None:
    variants = [
        ("rows", lambda x: x.expand(3, 4, 5)),
        ("new_leading_dims", lambda x: x.expand(2, 2, 3, 4, 5)),
        ("minus1", lambda x: x.expand(3, -1, -1)),
    ]
    _check_over_dtypes(check_op, variants, (1, 4, 5), "aten::expand_copy.out")


def test_expand_copy_inner_and_zero_dim(check_op) -> None:
    cases = [
        ("column", lambda x: x.expand(3, 6), (tensor((3, 1)),)),
        ("middle", lambda x: x.expand(2, 5, 3), (tensor((2, 1, 3), torch.int16),)),
        ("zero_dim", lambda x: x.expand(2, 3), (torch.tensor(4.0),)),
        ("vector_to_matrix", lambda x: x.expand(4, 3), (tensor((3,), torch.bool),)),
    ]
    check_op.many(cases, ops=["aten::expand_copy.out"], exact=True)


def test_slice_copy(check_op) -> None:
    variants = [
        ("range", lambda x: x[:, 1:3]),
        ("step2", lambda x: x[:, ::2]),
        ("both_ends_negative", lambda x: x[1:, :-1]),
        ("last_three", lambda x: x[..., -3:]),
        ("end_past_size", lambda x: x[..., 1:100]),
        ("step3_offset", lambda x: x[:, :, 1::3]),
        ("narrow_dim0", lambda x: x.narrow(0, 1, 2)),
    ]
    _check_over_dtypes(check_op, variants, (3, 5, 7), "aten::slice_copy.Tensor_out")


def test_slice_copy_empty_result(check_op) -> None:
    check_op(lambda x: x[:, 2:2] + 1, (tensor((3, 5)),), ops=["aten::slice_copy.Tensor_out"])


def test_select_copy(check_op) -> None:
    variants = [
        ("first_dim", lambda x: x[1]),
        ("last_index", lambda x: x[:, -1]),
        ("last_dim", lambda x: x[..., 0]),
        ("negative_dim", lambda x: torch.select(x, -2, 2)),
    ]
    _check_over_dtypes(check_op, variants, (2, 3, 4), "aten::select_copy.int_out")


def test_select_copy_to_zero_dim(check_op) -> None:
    check_op(lambda x: x[2], (tensor((5,), torch.int32),), ops=["aten::select_copy.int_out"], exact=True)


def test_squeeze_copy_dims(check_op) -> None:
    variants = [
        ("one_dim", lambda x: x.squeeze(1)),
        ("negative_dim", lambda x: x.squeeze(-1)),
        ("two_dims", lambda x: x.squeeze((0, 3))),
        ("all", lambda x: x.squeeze()),
        ("not_size_1", lambda x: x.squeeze((1, 2))),  # dim 2 has size 3: only dim 1 goes
    ]
    _check_over_dtypes(check_op, variants, (1, 1, 3, 1), "aten::squeeze_copy.dims_out")


def test_squeeze_copy_dim(check_op) -> None:
    """The single-dim overload, which torch turns into squeeze.dims unless kept."""
    cases = [
        (f"dim{dim}_{name_of(d)}", lambda x, dim=dim: aten.squeeze.dim(x, dim), (tensor((2, 1, 3, 1), d),))
        for d in DTYPES
        for dim in (1, -1, 0)  # dim 0 has size 2: unchanged
    ]
    check_op.many(cases, ops=["aten::squeeze_copy.dim_out"], exact=True, preserve=[aten.squeeze.dim])


def test_unsqueeze_copy(check_op) -> None:
    variants = [
        ("front", lambda x: x.unsqueeze(0)),
        ("back", lambda x: x.unsqueeze(-1)),
        ("middle", lambda x: x.unsqueeze(1)),
        ("negative_middle", lambda x: x.unsqueeze(-2)),
    ]
    _check_over_dtypes(check_op, variants, (3, 4), "aten::unsqueeze_copy.out")


def test_unsqueeze_copy_zero_dim(check_op) -> None:
    check_op(lambda x: x.unsqueeze(0), (torch.tensor(3.0),), ops=["aten::unsqueeze_copy.out"], exact=True)


def test_clone(check_op) -> None:
    """A clone of an input that is returned (the only clone Kiln does not elide)."""
    cases = [(name_of(d), lambda x: x.clone(), (tensor((2, 3, 4), d),)) for d in [*DTYPES, torch.float64, torch.uint8]]
    cases.append(("zero_dim", lambda x: x.clone(), (torch.tensor(1.25),)))
    check_op.many(cases, ops=["aten::clone.out"], exact=True)
