"""Indexing kernels against eager PyTorch (exact): gather, index_select, embedding,
advanced indexing (index.Tensor: index tensors that broadcast, None slices, adjacent
and separated indexed dims, negative indices, Int indices, boolean masks), index_put
(and index_put_, with accumulate), scatter (src, value) and scatter_add, select_scatter,
slice_scatter, masked_scatter, masked_select, nonzero and topk; over 1-, 2-, 4- and
8-byte dtypes and bool, 0-dim and empty tensors; out-of-range indices fail with a named
error."""

from __future__ import annotations

import pytest
import torch
from torch.testing import make_tensor

from kiln.runtime import KilnRuntimeError

aten = torch.ops.aten
DTYPES = [torch.float32, torch.int64, torch.int8, torch.float16, torch.bool]
REAL = [torch.float32, torch.float64, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64]
ALL = [*REAL, torch.bool]  # the kernels that look at values


def tensor(shape, dtype=torch.float32) -> torch.Tensor:
    return make_tensor(shape, dtype=dtype, device="cpu")


def name_of(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def index(*values) -> torch.Tensor:
    return torch.tensor(values, dtype=torch.int64)


def test_gather(check_op) -> None:
    cases = []
    for d in DTYPES:
        cases.append((f"dim1_{name_of(d)}", lambda x, i: torch.gather(x, 1, i), (tensor((3, 4), d), torch.tensor([[0, 3], [1, 1], [2, 0]]))))
    cases += [
        ("dim0_smaller_index", lambda x, i: torch.gather(x, 0, i), (tensor((4, 3, 2)), torch.randint(0, 4, (2, 2, 1)))),
        ("negative_dim", lambda x, i: torch.gather(x, -1, i), (tensor((2, 5)), torch.randint(0, 5, (2, 7)))),
        ("zero_dim", lambda x, i: torch.gather(x, 0, i), (tensor(()), torch.tensor(0))),
        ("empty_index", lambda x, i: torch.gather(x, 1, i), (tensor((2, 3)), torch.zeros(2, 0, dtype=torch.int64))),
    ]
    check_op.many(cases, ops=["aten::gather.out"], exact=True)


def test_index_select(check_op) -> None:
    cases = [(name_of(d), lambda x, i: torch.index_select(x, 1, i), (tensor((2, 4, 3), d), index(3, 0, 3))) for d in DTYPES]
    cases += [
        ("dim0_int32", lambda x, i: torch.index_select(x, 0, i), (tensor((5, 2)), torch.tensor([4, 1], dtype=torch.int32))),
        ("negative_dim", lambda x, i: torch.index_select(x, -1, i), (tensor((2, 3)), index(2))),
        ("zero_dim_index", lambda x, i: torch.index_select(x, 0, i), (tensor((3, 2)), torch.tensor(1))),
        ("empty_index", lambda x, i: torch.index_select(x, 0, i), (tensor((3, 2)), index())),
    ]
    check_op.many(cases, ops=["aten::index_select.out"], exact=True)


def test_embedding(check_op) -> None:
    table = torch.nn.Embedding(10, 4)
    cases = [
        ("module", table, (torch.tensor([[1, 2, 9], [0, 0, 5]]),)),
        ("int32_indices", lambda w, i: torch.nn.functional.embedding(i, w), (tensor((6, 3), torch.int64), torch.tensor([5, 0], dtype=torch.int32))),
        ("zero_dim", lambda w, i: torch.nn.functional.embedding(i, w), (tensor((4, 2)), torch.tensor(3))),
        ("position_embedding", lambda w, x: x + torch.nn.functional.embedding(torch.arange(x.shape[1]), w), (tensor((8, 5)), tensor((2, 6, 5)))),
    ]
    check_op.many(cases, ops=["aten::embedding.out"], exact=True)


def test_index_tensor(check_op) -> None:
    cases = []
    for d in DTYPES:
        cases.append((f"first_dim_{name_of(d)}", lambda x, i: x[i], (tensor((4, 3), d), index(3, 0, -1))))
    cases += [
        ("second_dim", lambda x, i: x[:, i], (tensor((2, 5, 3)), index(4, 4, 0))),
        ("two_adjacent", lambda x, i, j: x[:, i, j], (tensor((2, 4, 5, 3)), index(0, 3), index(1, 4))),
        ("separated_go_first", lambda x, i, j: x[i, :, j], (tensor((3, 4, 5)), index(2, 0), index(1, 4))),
        ("broadcast_indices", lambda x, i, j: x[i, j], (tensor((4, 5)), torch.tensor([[0], [3]]), index(1, 2, 4))),
        ("matrix_index", lambda x, i: x[i], (tensor((5, 2)), torch.tensor([[0, 4], [2, 2]]))),
        ("int32", lambda x, i: x[:, i], (tensor((3, 4)), torch.tensor([3, 1], dtype=torch.int32))),
        ("empty_index", lambda x, i: x[i], (tensor((3, 2)), index())),
        ("upsample_by_index", lambda x: torch.nn.functional.interpolate(x, scale_factor=2, mode="nearest"), (tensor((1, 2, 3, 3)),)),
    ]
    check_op.many(cases, ops=["aten::index.Tensor_out"], exact=True)


def test_index_tensor_with_masks_and_none(check_op) -> None:
    """Boolean masks make the result's length data dependent: built call by call."""
    op = "aten::index.Tensor_out"
    x = tensor((3, 4, 2))
    mask = torch.tensor([[True, False, True, False], [False, False, False, True], [True, True, False, False]])
    check_op.call(op, [x, check_op.tensor_list([mask], optional=True)], [x[mask]], exact=True)
    row_mask = torch.tensor([False, True, True, False])
    check_op.call(op, [x, check_op.tensor_list([None, row_mask], optional=True)], [x[:, row_mask]], exact=True)
    check_op.call(op, [x, check_op.tensor_list([index(2, 0), None, index(1, 1)], optional=True)], [x[index(2, 0), :, index(1, 1)]],
                  exact=True)
    check_op.call(op, [x, check_op.tensor_list([torch.zeros(3, dtype=torch.bool)], optional=True)], [x[torch.zeros(3, dtype=torch.bool)]],
                  exact=True)


def test_index_out_of_range_fails(check_op) -> None:
    x = tensor((3, 2))
    with pytest.raises(KilnRuntimeError) as caught:
        check_op.call("aten::index.Tensor_out", [x, check_op.tensor_list([index(1, 3)], optional=True)], [x[index(1, 2)]])
    assert caught.value.error_name == "InvalidArgument" and "out of range" in str(caught.value)
    with pytest.raises(KilnRuntimeError) as caught:
        check_op.call("aten::gather.out", [x, 1, torch.tensor([[0], [2], [1]]), False], [torch.zeros(3, 1)])
    assert "out of range" in str(caught.value)
    with pytest.raises(KilnRuntimeError):
        check_op.call("aten::embedding.out", [x, index(-1), -1, False, False], [torch.zeros(1, 2)])


def test_index_put(check_op) -> None:
    cases = []
    for d in DTYPES:
        cases.append((f"rows_{name_of(d)}", lambda x, i, v: x.index_put((i,), v), (tensor((4, 3), d), index(3, 0), tensor((2, 3), d))))
    for d in REAL:
        cases.append((f"accumulate_{name_of(d)}", lambda x, i, v: x.index_put((i,), v, accumulate=True),
                      (tensor((4, 2), d), index(1, 1, 3), tensor((3, 2), d))))
    cases += [
        ("broadcast_value", lambda x, i, j, v: x.index_put((i, j), v), (tensor((3, 4)), index(0, 2), index(3, -1), tensor(()))),
        ("second_dim", lambda x, i, v: x.index_put((torch.arange(2).unsqueeze(1), i), v), (tensor((2, 5)), index(4, 0), tensor((2, 2)))),
        ("mask", lambda x, m: x.index_put((m,), torch.tensor(0.0)), (tensor((2, 3)), torch.tensor([[True, False, True], [False, True, False]]))),
    ]
    check_op.many(cases, ops=["aten::index_put.out"], exact=True)


def test_index_put_in_place(check_op) -> None:
    """index_put_ is how ExecuTorch programs update caches in place."""
    cache, values = torch.zeros(2, 6, 3), tensor((2, 2, 3))
    positions = index(4, 5)
    indices = check_op.tensor_list([None, positions], optional=True)
    expected = cache.clone()
    expected[:, positions] = values
    check_op.call("aten::index_put_", [cache, indices, values, False], [expected], in_place=0, exact=True)
    accumulated = cache + 1
    accumulated[:, positions] += values
    check_op.call("aten::index_put_", [cache + 1, indices, values, True], [accumulated], in_place=0, exact=True)


def test_scatter(check_op) -> None:
    """Indices are unique per destination, so the order of writes does not matter."""
    rows = torch.tensor([[2, 0, 1], [0, 1, 2]])
    cases = []
    for d in DTYPES:
        cases.append((f"src_{name_of(d)}", lambda x, i, s: torch.scatter(x, 0, i, s), (tensor((3, 3), d), rows, tensor((2, 3), d))))
    for d in ALL:
        cases.append((f"value_{name_of(d)}", lambda x, i: torch.scatter(x, 1, i, 1), (tensor((2, 4), d), torch.tensor([[3], [0]]))))
    for d in REAL:
        cases.append((f"add_{name_of(d)}", lambda x, i, s: torch.scatter_add(x, 1, i, s),
                      (tensor((2, 3), d), torch.tensor([[0, 0, 2, 0], [1, 1, 1, 2]]), tensor((2, 4), d))))
    cases += [
        ("src_larger_than_index", lambda x, i, s: torch.scatter(x, -1, i, s), (tensor((2, 5)), torch.tensor([[4, 0]]), tensor((3, 6)))),
        ("value_float", lambda x, i: torch.scatter(x, 0, i, -2.5), (tensor((3, 2)), torch.tensor([[2, 1]]))),
        ("zero_dim", lambda x, i, s: torch.scatter(x, 0, i, s), (tensor(()), torch.tensor(0), tensor(()))),
    ]
    check_op.many(cases, ops=["aten::scatter.src_out", "aten::scatter.value_out", "aten::scatter_add.out"], exact=True)


def test_slice_and_select_scatter(check_op) -> None:
    cases = []
    for d in DTYPES:
        cases.append((f"slice_{name_of(d)}", lambda x, v: torch.slice_scatter(x, v, 1, 1, 3), (tensor((3, 4), d), tensor((3, 2), d))))
        cases.append((f"select_{name_of(d)}", lambda x, v: aten.select_scatter.default(x, v, 0, -1), (tensor((3, 4), d), tensor((4,), d))))
    cases += [
        ("slice_step", lambda x, v: torch.slice_scatter(x, v, 0, 0, None, 2), (tensor((5, 2)), tensor((3, 2)))),
        ("slice_negative_start", lambda x, v: torch.slice_scatter(x, v, -1, -2), (tensor((2, 5)), tensor((2, 2)))),
        ("slice_empty", lambda x, v: torch.slice_scatter(x, v, 1, 2, 2), (tensor((2, 3)), tensor((2, 0)))),
        ("select_middle", lambda x, v: aten.select_scatter.default(x, v, 1, 2), (tensor((2, 3, 4)), tensor((2, 4)))),
        ("slice_via_setitem", lambda x, v: _set_columns(x, v), (tensor((3, 5)), tensor((3, 2)))),
    ]
    check_op.many(cases, ops=["aten::slice_scatter.out", "aten::select_scatter.out"], exact=True,
                  preserve=[aten.select_scatter.default])


def _set_columns(x: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    y = x.clone()
    y[:, 1:3] = v
    return y


def test_masked_scatter(check_op) -> None:
    cases = []
    for d in DTYPES:
        cases.append((name_of(d), lambda x, m, s: torch.masked_scatter(x, m, s), (tensor((2, 3), d), tensor((2, 3), torch.bool), tensor((7,), d))))
    cases += [
        ("broadcast_mask", lambda x, m, s: torch.masked_scatter(x, m, s), (tensor((3, 4)), torch.tensor([True, False, False, True]), tensor((3, 4)))),
        ("no_trues", lambda x, m, s: torch.masked_scatter(x, m, s), (tensor((2, 2)), torch.zeros(2, 2, dtype=torch.bool), tensor((1,)))),
    ]
    check_op.many(cases, ops=["aten::masked_scatter.out"], exact=True)


def test_masked_select_and_nonzero(check_op) -> None:
    """Both have data-dependent lengths: built call by call."""
    for d in DTYPES:
        x, mask = tensor((3, 4), d), tensor((3, 4), torch.bool)
        check_op.call("aten::masked_select.out", [x, mask], [torch.masked_select(x, mask)], exact=True)
    for d in ALL:
        x = tensor((3, 4), d)
        check_op.call("aten::nonzero.out", [x], [torch.nonzero(x)], exact=True)
    x = tensor((2, 3))
    row_mask = torch.tensor([True, False, True])
    check_op.call("aten::masked_select.out", [x, row_mask], [torch.masked_select(x, row_mask)], exact=True)
    special = torch.tensor([[0.0, float("nan")], [-0.0, float("inf")]])
    check_op.call("aten::nonzero.out", [special], [torch.nonzero(special)], exact=True)
    for x in (torch.tensor(2.0), torch.tensor(0), torch.zeros(0, 3), torch.zeros(2, 3)):
        check_op.call("aten::nonzero.out", [x], [torch.nonzero(x)], exact=True)


def test_topk(check_op) -> None:
    """Distinct values (ties may come in any order in PyTorch)."""
    def distinct(shape, dtype):
        values = torch.randperm(int(torch.tensor(shape).prod())).reshape(shape)
        return (values - 10).to(dtype) if dtype.is_signed else values.to(dtype)

    cases = [(name_of(d), lambda x: tuple(torch.topk(x, 3)), (distinct((4, 6), d),)) for d in REAL if d != torch.int8]
    cases += [
        ("smallest_dim0", lambda x: tuple(torch.topk(x, 2, dim=0, largest=False)), (distinct((5, 3), torch.float32),)),
        ("k_all", lambda x: tuple(torch.topk(x, 4, dim=1)), (distinct((2, 4, 3), torch.float32),)),
        ("k_zero", lambda x: tuple(torch.topk(x, 0)), (distinct((3, 4), torch.float32),)),
        ("nan_is_largest", lambda x: tuple(torch.topk(x, 2)), (torch.tensor([1.0, float("nan"), 3.0, -float("inf")]),)),
        ("nan_is_last_of_smallest", lambda x: tuple(torch.topk(x, 3, largest=False)), (torch.tensor([1.0, float("nan"), 3.0, 2.0]),)),
        ("zero_dim", lambda x: tuple(torch.topk(x, 1)), (torch.tensor(5.0),)),
    ]
    check_op.many(cases, ops=["aten::topk.values"], exact=True)


def test_topk_with_ties_picks_the_tied_values(check_op) -> None:
    x = torch.tensor([[3, 1, 3, 2, 3], [0, 0, 0, 0, 0]], dtype=torch.int32)
    # (A model returning torch.topk's named tuple itself does not export: return a tuple.)
    values, indices = check_op.run(lambda x: tuple(torch.topk(x, 2)), (x,), ops=["aten::topk.values"])
    assert torch.equal(values, torch.topk(x, 2).values)
    assert torch.equal(torch.gather(x, 1, indices), values)
