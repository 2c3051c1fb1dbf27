"""Copy and view-copy kernels against eager PyTorch (exact): copy (broadcasting and
converting src) and copy_, the identity copies (detach, lift_fresh, ExecuTorch's
host/device copies), transpose and t, diagonal, narrow, unfold and as_strided (the kernel,
and torch.as_strided in models: copies, or views where it only restrides), over 1-, 2-, 4-
and 8-byte dtypes and bool, with negative dims, offsets, 0-dim and empty tensors, and
out-of-range arguments failing with a named error."""

from __future__ import annotations

import pytest
import torch
from torch.testing import make_tensor

from kiln.runtime import KilnRuntimeError

aten = torch.ops.aten
DTYPES = [torch.float32, torch.int64, torch.int8, torch.float16, torch.bool]


def tensor(shape, dtype=torch.float32) -> torch.Tensor:
    return make_tensor(shape, dtype=dtype, device="cpu")


def name_of(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def over_dtypes(variants, shape):
    return [(f"{name}_{name_of(d)}", f, (tensor(shape, d),)) for d in DTYPES for name, f in variants]


def test_copy(check_op) -> None:
    """x.clone().copy_(src) exports to aten.copy: src broadcast to self and converted."""
    cases = [
        ("same_shape", lambda x, y: x.clone().copy_(y), (tensor((2, 3)), tensor((2, 3)))),
        ("broadcast_row", lambda x, y: x.clone().copy_(y), (tensor((3, 4)), tensor((4,)))),
        ("broadcast_column", lambda x, y: x.clone().copy_(y), (tensor((3, 4), torch.int32), tensor((3, 1), torch.int32))),
        ("int_to_float", lambda x, y: x.clone().copy_(y), (tensor((2, 2)), tensor((2, 2), torch.int64))),
        ("float_to_int", lambda x, y: x.clone().copy_(y), (tensor((5,), torch.int16), tensor((5,)))),
        ("to_bool", lambda x, y: x.clone().copy_(y), (tensor((4,), torch.bool), tensor((4,), torch.int8))),
        ("zero_dim_src", lambda x, y: x.clone().copy_(y), (tensor((2, 3), torch.float64), tensor((), torch.float64))),
        ("empty", lambda x, y: x.clone().copy_(y), (tensor((0, 3)), tensor((3,)))),
    ]
    check_op.many(cases, ops=["aten::copy.out"], exact=True)


def test_copy_in_place(check_op) -> None:
    """copy_ (ExecuTorch programs' buffer updates) writes into self."""
    for self_, src in [(torch.zeros(2, 3), tensor((2, 3))), (torch.zeros(3, 4, dtype=torch.int32), tensor((4,), torch.int64)),
                       (torch.zeros(2, dtype=torch.bool), tensor((2,), torch.bool))]:
        check_op.call("aten::copy_", [self_, src, False], [self_.clone().copy_(src)], in_place=0, exact=True)


def test_copy_refuses_src_that_does_not_broadcast(check_op) -> None:
    with pytest.raises(KilnRuntimeError) as caught:
        check_op.call("aten::copy.out", [torch.zeros(2, 3), torch.zeros(4), False], [torch.zeros(2, 3)])
    assert caught.value.error_name == "InvalidArgument" and "broadcast" in str(caught.value)


def test_identity_copies(check_op) -> None:
    """detach_copy (torch drops detach unless kept); the others never come from torch.export."""
    cases = [(f"detach_{name_of(d)}", lambda x: aten.detach.default(x), (tensor((2, 3), d),)) for d in DTYPES]
    check_op.many(cases, ops=["aten::detach_copy.out"], exact=True, preserve=[aten.detach.default])
    for op in ["aten::lift_fresh_copy.out", "et_copy::_h2d_copy.out", "et_copy::_d2h_copy.out"]:
        for x in (tensor((2, 3, 4)), tensor((), torch.int64), tensor((5,), torch.bool), tensor((0, 2), torch.int8)):
            check_op.call(op, [x], [x.clone()], exact=True)


def test_transpose_and_t(check_op) -> None:
    variants = [
        ("transpose_0_2", lambda x: aten.transpose.int(x, 0, 2)),
        ("transpose_negative", lambda x: aten.transpose.int(x, -1, 1)),
        ("transpose_same_dim", lambda x: aten.transpose.int(x, 1, 1)),
    ]
    cases = over_dtypes(variants, (2, 3, 4))
    cases += [(f"t_{name_of(d)}", lambda x: aten.t.default(x), (tensor((3, 5), d),)) for d in DTYPES]
    cases += [("t_vector", lambda x: aten.t.default(x), (tensor((4,)),)), ("t_zero_dim", lambda x: aten.t.default(x), (tensor(()),)),
              ("t_empty", lambda x: aten.t.default(x), (tensor((0, 3)),))]
    check_op.many(cases, ops=["aten::transpose_copy.int_out", "aten::t_copy.out"], exact=True,
                  preserve=[aten.transpose.int, aten.t.default])


def test_diagonal(check_op) -> None:
    variants = [
        ("main", lambda x: torch.diagonal(x)),
        ("above", lambda x: torch.diagonal(x, 1)),
        ("below", lambda x: torch.diagonal(x, -2)),
        ("offset_past_the_edge", lambda x: torch.diagonal(x, 9)),
        ("dims_1_2", lambda x: torch.diagonal(x, 0, 1, 2)),
        ("negative_dims_swapped", lambda x: torch.diagonal(x, 1, -1, 0)),
    ]
    cases = over_dtypes(variants, (3, 4, 5))
    cases.append(("matrix", lambda x: torch.diagonal(x, -1), (tensor((4, 3)),)))
    check_op.many(cases, ops=["aten::diagonal_copy.out"], exact=True)


def test_unfold(check_op) -> None:
    variants = [
        ("windows", lambda x: x.unfold(2, 3, 1)),
        ("step2", lambda x: x.unfold(-1, 2, 2)),
        ("step_past_end", lambda x: x.unfold(1, 2, 5)),
        ("dim0_whole", lambda x: x.unfold(0, 2, 1)),
    ]
    cases = over_dtypes(variants, (2, 4, 6))
    cases += [("zero_dim", lambda x: x.unfold(0, 1, 1), (tensor(()),)), ("size0", lambda x: x.unfold(0, 0, 2), (tensor((5,)),))]
    check_op.many(cases, ops=["aten::unfold_copy.out"], exact=True)


def test_narrow(check_op) -> None:
    """torch turns narrow into slice when exporting: narrow_copy comes from ExecuTorch."""
    x = tensor((4, 6))
    for dim, start, length in [(0, 1, 2), (1, -4, 3), (-1, 0, 6), (0, 4, 0)]:
        check_op.call("aten::narrow_copy.out", [x, dim, start, length], [x.narrow(dim, start, length)], exact=True)
    with pytest.raises(KilnRuntimeError) as caught:
        check_op.call("aten::narrow_copy.out", [x, 1, 4, 3], [torch.zeros(4, 3)])
    assert caught.value.error_name == "InvalidArgument"


def test_as_strided_copy_kernel(check_op) -> None:
    """The kernel reads self's elements with explicit sizes, strides and offset: overlapping
    windows, skips, repeats (stride 0), transposed reads, 0-dim and empty results."""
    x = torch.arange(24, dtype=torch.float32).reshape(4, 6)
    reads = [([3, 3], [6, 1], None), ([2, 2], [1, 6], 3), ([4], [5], 2), ([3, 2], [0, 1], 1), ([], [], 7),
             ([0, 3], [1, 1], None), ([5, 4], [4, 1], 0), ([2, 4, 2], [6, 1, 12], 0), ([2, 2, 2, 2], [12, 1, 6, 2], 1)]
    for size, stride, offset in reads:
        expected = torch.as_strided(x, size, stride, offset)
        check_op.call("aten::as_strided_copy.out", [x, size, stride, offset], [expected.contiguous()], exact=True)
    for dtype in DTYPES:  # every element size
        t = tensor((3, 5), dtype)
        expected = torch.as_strided(t, [4, 3], [3, 2], 1)
        check_op.call("aten::as_strided_copy.out", [t, [4, 3], [3, 2], 1], [expected.contiguous()], exact=True)


# (size, stride, offset) reads that eager PyTorch refuses on a 4x6 tensor too, and what Kiln says.
BAD_READS = {
    "past_the_end": (([4, 2], [6, 1], 19), "reaches element 37"),
    "stride_past_the_end": (([3], [12], 0), "reaches element 24"),
    "huge_stride": (([2], [2**31 - 1], 0), "reaches element"),
    "stride_beyond_int32": (([2], [2**40], 0), "is invalid"),
    "negative_stride": (([2, 2], [-1, 1], 4), "is invalid"),
    "negative_size": (([-1], [1], 0), "is invalid"),
    "negative_offset": (([2], [1], -1), "is negative"),
    "lengths_differ": (([2, 2], [1], 0), "size has 2 entries, stride 1"),
}


@pytest.mark.parametrize("case", BAD_READS)
def test_as_strided_copy_refuses_reads_outside_self(check_op, case: str) -> None:
    """A hostile program cannot make the kernel read outside self: the argument is named."""
    (size, stride, offset), message = BAD_READS[case]
    x = torch.arange(24, dtype=torch.float32).reshape(4, 6)
    with pytest.raises(RuntimeError):  # an invalid read in eager PyTorch as well
        torch.as_strided(x, size, stride, offset).contiguous()
    out = torch.zeros([max(s, 1) for s in size])
    with pytest.raises(KilnRuntimeError) as caught:
        check_op.call("aten::as_strided_copy.out", [x, size, stride, offset], [out])
    assert caught.value.error_name == "InvalidArgument" and message in str(caught.value)


def test_as_strided_copy_refuses_another_dtype_and_reads_of_an_empty_self(check_op) -> None:
    x = torch.arange(6, dtype=torch.float32)
    with pytest.raises(KilnRuntimeError) as caught:
        check_op.call("aten::as_strided_copy.out", [x, [2], [1], 0], [torch.zeros(2, dtype=torch.int32)])
    assert caught.value.error_name == "InvalidType"
    with pytest.raises(KilnRuntimeError) as caught:  # stride 0 still reads element 0, which is not there
        check_op.call("aten::as_strided_copy.out", [torch.zeros(0), [3], [0], 0], [torch.zeros(3)])
    assert caught.value.error_name == "InvalidArgument" and "reaches element 0" in str(caught.value)


class Frames(torch.nn.Module):
    """Overlapping frames of a signal (window 4, hop 2), as a speech front end takes them."""

    def forward(self, signal: torch.Tensor) -> torch.Tensor:
        frames = torch.as_strided(signal, (signal.shape[0], 7, 4), (signal.shape[1], 2, 1))
        return frames * torch.hann_window(4, periodic=False)


class DiagonalBands(torch.nn.Module):
    """A read that skips and repeats elements of a computed tensor stored transposed (eager
    lays ``x.t() * 2`` out in x's order: the read follows that storage, not the logical order)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.as_strided(x.t() * 2, (3, 3), (7, 1), 1) + 1


def test_as_strided_in_a_model_copies_on_the_cpu(check_op) -> None:
    """torch.as_strided called explicitly, with reads that are no view of a row-major
    tensor: the program runs them with the as_strided_copy kernel."""
    check_op(Frames(), (torch.randn(2, 16),), ops=["aten::as_strided_copy.out"], exact=True)
    check_op(DiagonalBands(), (torch.randn(4, 5),), ops=["aten::as_strided_copy.out"], exact=True)
    # A channels-last input: the read follows its (NHWC) storage, as eager PyTorch's does.
    image = torch.randn(1, 3, 4, 4).contiguous(memory_format=torch.channels_last)
    check_op(lambda x: torch.as_strided(x + 0, (4, 6), (12, 2), 1), (image,), ops=["aten::as_strided_copy.out"],
             exact=True)


def test_as_strided_that_restrides_is_a_view(check_op) -> None:
    """Dense reads (every element once, in some dim order) become views and permutes: no
    as_strided_copy call, and the same values as eager PyTorch."""
    cases = [
        ("reshape", lambda x: torch.as_strided(x * 1, (6, 4), (4, 1)), (tensor((4, 6)),)),
        ("transposed_read", lambda x: torch.as_strided(x * 1, (6, 4), (1, 6)), (tensor((4, 6)),)),
        ("tail", lambda x: torch.as_strided(x * 1, (2, 5), (5, 1), 14), (tensor((4, 6)),)),
        ("storage_of_a_transpose", lambda x: torch.as_strided(x.t() + 1, (2, 12), (12, 1)), (tensor((4, 6)),)),
    ]
    module_ops = ["aten::view_copy.out", "aten::permute_copy.out", "aten::slice_copy.Tensor_out"]
    check_op.many(cases, ops=module_ops, exact=True)
    # What torch.export makes of a global pool in a channels-last CNN: the same values, no call at all.
    check_op(lambda x: torch.as_strided(x.mean((2, 3), keepdim=True), (1, 8, 1, 1), (8, 1, 8, 8)),
             (tensor((1, 8, 3, 3)),), ops=["aten::mean.out"])
