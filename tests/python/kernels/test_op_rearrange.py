"""Kernels that cut, join and rearrange tensors, against eager PyTorch (exact): split
(by size and by sizes, tensor.chunk), unbind, stack, repeat, repeat_interleave, roll,
flip, tril, pixel_shuffle and pixel_unshuffle, over 1-, 2-, 4- and 8-byte dtypes and
bool, with negative dims, uneven and empty pieces, 0-dim tensors and named errors for
bad arguments; and the recurrent models (GRU, LSTM) whose gates need split_with_sizes."""

from __future__ import annotations

import pytest
import torch
from torch import nn
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


def test_split_with_sizes(check_op) -> None:
    variants = [
        ("chunk2", lambda x: x.chunk(2, dim=1)),
        ("chunk_uneven", lambda x: x.chunk(3, dim=-1)),
        ("sizes", lambda x: x.split([1, 0, 2], dim=0)),
        ("split_by_2", lambda x: x.split(2, dim=2)),
    ]
    check_op.many(over_dtypes(variants, (3, 4, 5)), ops=["aten::split_with_sizes_copy.out"], exact=True)


def test_split_copy_and_unbind(check_op) -> None:
    variants = [
        ("split_even", lambda x: aten.split.Tensor(x, 2, 1)),
        ("split_uneven", lambda x: aten.split.Tensor(x, 3, -1)),
        ("split_larger_than_dim", lambda x: aten.split.Tensor(x, 7, 0)),
        ("unbind0", lambda x: aten.unbind.int(x, 0)),
        ("unbind_negative", lambda x: aten.unbind.int(x, -1)),
    ]
    cases = over_dtypes(variants, (2, 4, 5))
    cases.append(("split_empty_dim", lambda x: aten.split.Tensor(x, 2, 0), (tensor((0, 3)),)))
    check_op.many(cases, ops=["aten::split_copy.Tensor_out", "aten::unbind_copy.int_out"], exact=True,
                  preserve=[aten.split.Tensor, aten.unbind.int])


def test_split_with_sizes_that_do_not_add_up_fails(check_op) -> None:
    x = tensor((5, 2))
    with pytest.raises(KilnRuntimeError) as caught:
        check_op.call("aten::split_with_sizes_copy.out", [x, [2, 2], 0], [x[:2], x[2:4]], out_list=True)
    assert caught.value.error_name == "InvalidArgument" and "add up" in str(caught.value)


def test_stack(check_op) -> None:
    cases = []
    for d in DTYPES:
        cases.append((f"dim0_{name_of(d)}", lambda a, b, c: aten.stack.default([a, b, c], 0), tuple(tensor((2, 3), d) for _ in range(3))))
        cases.append((f"last_{name_of(d)}", lambda a, b: aten.stack.default([a, b], -1), (tensor((2, 3), d), tensor((2, 3), d))))
    cases += [
        ("middle", lambda a, b: aten.stack.default([a, b], 1), (tensor((2, 3, 4)), tensor((2, 3, 4)))),
        ("zero_dim", lambda a, b: aten.stack.default([a, b]), (tensor(()), tensor(()))),
        ("single", lambda a: aten.stack.default([a], 1), (tensor((3,)),)),
        ("mixed_dtypes", lambda a, b: aten.stack.default([a, b]), (tensor((3,), torch.int32), tensor((3,), torch.float64))),
        ("empty", lambda a, b: aten.stack.default([a, b], 1), (tensor((0, 2)), tensor((0, 2)))),
    ]
    check_op.many(cases, ops=["aten::stack.out"], exact=True, preserve=[aten.stack.default])


def test_repeat(check_op) -> None:
    variants = [
        ("tile", lambda x: x.repeat(2, 3)),
        ("new_leading_dims", lambda x: x.repeat(2, 1, 1, 2)),
        ("once", lambda x: x.repeat(1, 1)),
        ("zero", lambda x: x.repeat(0, 2)),
    ]
    cases = over_dtypes(variants, (3, 4))
    cases.append(("zero_dim", lambda x: x.repeat(3, 2), (tensor(()),)))
    check_op.many(cases, ops=["aten::repeat.out"], exact=True)


def test_repeat_interleave(check_op) -> None:
    """Its output length depends on the data: built call by call."""
    for repeats in (torch.tensor([2, 0, 3, 1]), torch.tensor([1, 1], dtype=torch.int32), torch.tensor([], dtype=torch.int64)):
        expected = torch.repeat_interleave(repeats)
        check_op.call("aten::repeat_interleave.Tensor_out", [repeats, None], [expected], exact=True)
        check_op.call("aten::repeat_interleave.Tensor_out", [repeats, int(repeats.sum())], [expected], exact=True)
    with pytest.raises(KilnRuntimeError) as caught:
        check_op.call("aten::repeat_interleave.Tensor_out", [torch.tensor([2, -1]), None], [torch.zeros(1, dtype=torch.int64)])
    assert caught.value.error_name == "InvalidArgument"


def test_roll(check_op) -> None:
    variants = [
        ("flat", lambda x: aten.roll.default(x, [5])),
        ("flat_negative", lambda x: aten.roll.default(x, [-7])),
        ("one_dim", lambda x: aten.roll.default(x, [1], [1])),
        ("two_dims", lambda x: aten.roll.default(x, [2, -1], [2, 0])),
        ("shift_past_size", lambda x: aten.roll.default(x, [13], [-1])),
        ("same_dim_twice", lambda x: aten.roll.default(x, [1, 2], [1, 1])),
        ("zero_shift", lambda x: aten.roll.default(x, [0, 3], [0, 1])),
    ]
    cases = over_dtypes(variants, (2, 3, 4))
    cases += [("zero_dim", lambda x: aten.roll.default(x, [1]), (tensor(()),)),
              ("empty", lambda x: aten.roll.default(x, [1], [1]), (tensor((0, 3)),))]
    check_op.many(cases, ops=["aten::roll.out"], exact=True, preserve=[aten.roll.default])


def test_flip(check_op) -> None:
    variants = [
        ("one_dim", lambda x: torch.flip(x, [1])),
        ("all", lambda x: torch.flip(x, [0, 1, 2])),
        ("negative", lambda x: torch.flip(x, [-1, 0])),
        ("none", lambda x: torch.flip(x, [])),
    ]
    cases = over_dtypes(variants, (2, 3, 4))
    cases += [("zero_dim", lambda x: torch.flip(x, [0]), (tensor(()),)), ("empty", lambda x: torch.flip(x, [0]), (tensor((0, 2)),))]
    check_op.many(cases, ops=["aten::flip.out"], exact=True)


def test_tril(check_op) -> None:
    variants = [
        ("main", lambda x: aten.tril.default(x)),
        ("above", lambda x: aten.tril.default(x, 2)),
        ("below", lambda x: aten.tril.default(x, -1)),
        ("far_below", lambda x: aten.tril.default(x, -10)),
        ("far_above", lambda x: aten.tril.default(x, 10)),
    ]
    cases = over_dtypes(variants, (2, 4, 5))
    cases += [("tall", lambda x: aten.tril.default(x, 1), (tensor((6, 3)),)), ("empty", lambda x: aten.tril.default(x), (tensor((0, 3)),))]
    check_op.many(cases, ops=["aten::tril.out"], exact=True, preserve=[aten.tril.default])


def test_pixel_shuffle_and_unshuffle(check_op) -> None:
    variants = [
        ("shuffle2", lambda x: aten.pixel_shuffle.default(x, 2)),
        ("shuffle1", lambda x: aten.pixel_shuffle.default(x, 1)),
        ("unshuffle_of_shuffle", lambda x: aten.pixel_unshuffle.default(aten.pixel_shuffle.default(x, 2), 2)),
        ("unshuffle2", lambda x: aten.pixel_unshuffle.default(x.reshape(2, 2, 6, 4), 2)),
    ]
    cases = over_dtypes(variants, (2, 8, 3, 2))
    cases += [
        ("shuffle3_unbatched", lambda x: aten.pixel_shuffle.default(x, 3), (tensor((9, 2, 2)),)),
        ("shuffle_5d", lambda x: aten.pixel_shuffle.default(x, 2), (tensor((2, 1, 4, 2, 3)),)),
    ]
    check_op.many(cases, ops=["aten::pixel_shuffle.out", "aten::pixel_unshuffle.out"], exact=True,
                  preserve=[aten.pixel_shuffle.default, aten.pixel_unshuffle.default])


class _GRUClassifier(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.rnn = nn.GRU(8, 16, batch_first=True)
        self.head = nn.Linear(16, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        output, _ = self.rnn(x)
        return self.head(output[:, -1])


class _LSTMClassifier(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.rnn = nn.LSTM(8, 12, num_layers=2, batch_first=True)
        self.head = nn.Linear(12, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        output, (hidden, _) = self.rnn(x)
        return self.head(output[:, -1]) + hidden[-1].sum()


def test_recurrent_models_run(check_op) -> None:
    """nn.GRU and nn.LSTM split their gates with split_with_sizes."""
    cases = [("gru", _GRUClassifier(), (torch.randn(2, 6, 8),)), ("lstm", _LSTMClassifier(), (torch.randn(1, 5, 8),))]
    check_op.many(cases, ops=["aten::split_with_sizes_copy.out"])
