"""kiln.passes.as_strided: every ``aten.as_strided`` of a core-ATen program is said in Kiln's
terms (views of row-major tensors, or the copy kernel's form), the program computes what
eager PyTorch does, and what cannot be said fails the compile naming the node."""

from __future__ import annotations

import copy

import pytest
import torch
from torch import nn
from torch.export import Dim

import kiln
from kiln.passes.as_strided import copy_objection, dense_order, reshape_objection, rewrite_as_strided
from kiln.passes.out_variants import to_out_variants

aten = torch.ops.aten


class Reads(nn.Module):
    """as_strided reads of every kind: through views, of storages laid out transposed,
    dense ones (restrides, a tail of the storage) and gathers (windows, repeats)."""

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        shifted = x[1:] * 1                  # a fresh 3x6 storage
        window = shifted.permute(1, 0)[1:]   # a view of it: reads use shifted's storage
        stored_transposed = x.t() * 2        # eager keeps x's order: [6, 4] with strides (1, 6)
        return (
            torch.as_strided(window, (2, 2), (1, 3), 1),            # gather through two views
            torch.as_strided(x.t(), (3,), (2,), 0),                  # gather of x's storage
            torch.as_strided(stored_transposed, (4, 6), (6, 1), 0),  # dense: stored_transposed's storage
            torch.as_strided(x + 1, (2, 2, 6), (6, 12, 1), 0),       # dense, dims out of order
            torch.as_strided(x, (5,), (1,), 3),                      # dense: a slice of the storage
            torch.as_strided(torch.as_strided(x, (6, 4), (1, 6)), (3, 2), (2, 1), 0),  # as_strided of as_strided
        )


def _as_strided_nodes(program: torch.export.ExportedProgram) -> list[torch.fx.Node]:
    return [n for n in program.graph.nodes if n.target is aten.as_strided.default]


def test_rewritten_program_computes_what_eager_does() -> None:
    x = torch.randn(4, 6)
    program = torch.export.export(Reads(), (x,)).run_decompositions()
    assert len(_as_strided_nodes(program)) == 7
    assert rewrite_as_strided(program) == 7
    left = _as_strided_nodes(program)
    assert [list(n.args[1]) for n in left] == [[2, 2], [3]]  # only the two gathers stay copies
    assert all(copy_objection(n) is None for n in left)
    for got, want in zip(program.module()(x), Reads()(x)):
        assert torch.equal(got, want)
    assert rewrite_as_strided(program) == 0  # nothing left to rewrite


def test_kiln_program_runs_every_read() -> None:
    from kiln.runtime import Runtime

    x = torch.randn(4, 6)
    program = kiln.export(Reads(), (x,))
    assert program.operators.count("aten::as_strided_copy.out") == 1  # one kernel, called twice
    outputs = Runtime().load_program(program.to_bytes()).load_method("forward").execute([x])
    for got, want in zip(outputs, Reads()(x)):
        assert torch.equal(torch.as_tensor(got), want)


def test_a_channels_last_global_pool_is_a_view() -> None:
    """The restride torch.export emits after a channels-last global pool costs nothing."""
    model = nn.Sequential(nn.Conv2d(3, 8, 3), nn.AdaptiveAvgPool2d(1), nn.Flatten()).eval()
    x = torch.randn(1, 3, 6, 6)
    contiguous_calls = kiln.export(model, (x,)).method("forward").operator_counts
    channels_last = (copy.deepcopy(model).to(memory_format=torch.channels_last),
                     (x.contiguous(memory_format=torch.channels_last),))
    (restride,) = _as_strided_nodes(torch.export.export(*channels_last).run_decompositions())
    assert reshape_objection(restride) is None
    calls = kiln.export(*channels_last).method("forward").operator_counts
    assert calls == contiguous_calls == {"aten::convolution.out": 1, "aten::mean.out": 1, "aten::view_copy.out": 1}


def test_dense_order() -> None:
    assert dense_order((1, 32, 1, 1), (32, 1, 32, 32)) == (0, 1, 2, 3)  # size-1 dims carry no layout
    assert dense_order((2, 3, 4), (12, 4, 1)) == (0, 1, 2)
    assert dense_order((2, 3, 4), (1, 8, 2)) == (1, 2, 0)  # dim 1 outermost, dim 0 innermost
    assert dense_order((2, 3), (3, 2)) is None  # gaps
    assert dense_order((2, 3), (1, 1)) is None  # overlaps
    assert dense_order((0, 3), (3, 1)) is None  # empty: the copy kernel's business


class Flatten(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.as_strided(x, (x.shape[0] * 6,), (1,))


class ReadsInput(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.as_strided(x, (2,), (1,), 0)


def test_reads_kiln_cannot_express_fail_at_compile_time() -> None:
    with pytest.raises(kiln.UnsupportedOperatorError, match="known only at run time") as caught:
        kiln.export(Flatten(), (torch.randn(4, 6),), dynamic_shapes=({0: Dim("batch", max=8)},))
    assert (caught.value.node, caught.value.operator) == ("as_strided", "aten::as_strided")
    # An example input that is a view of a larger tensor: eager reads elements before it.
    with pytest.raises(kiln.UnsupportedOperatorError, match="holds more than 'x'"):
        kiln.export(ReadsInput(), (torch.randn(10)[2:6],))


def test_out_variants_refuse_an_as_strided_left_in_eager_terms() -> None:
    """A program that skipped the rewrite (an as_strided through a view) is refused by
    name, not run with another meaning."""
    program = torch.export.export(Reads(), (torch.randn(4, 6),)).run_decompositions()
    with pytest.raises(kiln.UnsupportedOperatorError, match="through a view") as caught:
        to_out_variants(program)
    assert caught.value.operator == "aten::as_strided"


class Restrides(nn.Module):
    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        y = x * 1
        return (torch.as_strided(y, (6, 4), (4, 1)), torch.as_strided(y, (6, 4), (1, 6)),
                torch.as_strided(y, (2, 5), (5, 1), 3), torch.as_strided(y, (3, 4), (2, 1)),
                torch.as_strided(y.t(), (24,), (1,)))


def test_reshape_objection_says_what_the_read_is_instead() -> None:
    """What the backends are told about an as_strided the rewrite has not seen."""
    program = torch.export.export(Restrides(), (torch.randn(4, 6),)).run_decompositions()
    reasons = [reshape_objection(n) for n in _as_strided_nodes(program)]
    assert reasons[0] is None
    assert "in dim order [1, 0]: a transpose, not a reshape" in reasons[1]
    assert "reads a part of it: a slice, not a reshape" in reasons[2]
    assert "reads some elements twice or skips some: a gather, not a reshape" in reasons[3]
    assert "not stored in row-major order (strides [1, 6]" in reasons[4]
