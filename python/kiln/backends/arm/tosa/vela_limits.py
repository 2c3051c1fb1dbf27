"""What Vela 5.2 refuses in a TOSA graph, known before it runs.

Vela stops with "Non-passthrough operation (...) could not run on NPU" when an operator,
after the decompositions it knows, still needs one it does not have; there is no CPU
fallback inside Vela. The lowering checks each TRANSPOSE it emits against the facts below
(from regor, Vela's compiler core: the Ethos-U55 architecture constraints and the transpose
decomposition) and names the FX node whose lowering emitted it. The partitioner lowers
every partition it chose without running Vela (``tosa.lowering.vela_limits``) and leaves
each such node on the CPU with the reason, then partitions again: Vela never sees it.
The other limits Vela's operator checks state (strides, kernels, pooling padding,
reduced axes, softmax rows, resize factors...) are in the constraint table
(:mod:`kiln.backends.arm.constraints`), which the partitioner's checks and the
lowering's both ask; so are the two transpose limits below. The 8- and 16-bit facts are tested against
Vela itself (tests/python/arm/partition/test_vela_limits.py).

TRANSPOSE on Ethos-U55 and U65 (one NPU core design). The NPU permutes the three innermost
axes (H, W, C) of a tensor whose other axes are 1, with H<->W, W<->C and H<->C swaps in
one operation each (for 32-bit data H<->C takes three). Any other transpose - one that
moves a batch above 1 or an axis of a rank-5 or rank-6 tensor - Vela performs as a
selection sort of the permutation: each swap of two axes becomes a few 3-D transposes of
views in which the axes around them are merged. Every 3-D transpose, the original
included, must have each axis at most 2**16 (Vela has no way to split a transpose along a
longer axis), and a 32-bit H<->W transpose at most 2**14 channels. So a 1-D convolution
over a batch of 10 sequences of 201 steps and 2000 channels, whose output moves from
[10, 201, 2000] back to PyTorch's [10, 2000, 201], cannot run: one swap merges 201 x 2000.
Ethos-U85 transposes split long axes; no limit is known here for it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from kiln.backends.arm.constraints import family_constraints
from kiln.backends.arm.constraints.families import U55_CORE

# The decomposition below is the U55/U65 core's; the table holds its two limits.
MAX_TRANSPOSE_AXIS: int = U55_CORE.max_transpose_axis  # type: ignore[assignment]
MAX_INT32_SWAP_HW_DEPTH: int = U55_CORE.max_int32_hw_swap_depth  # type: ignore[assignment]
# Permutations of (N, H, W, C) the Ethos-U55 does in one operation: none, H<->W, W<->C, H<->C.
_ONE_OPERATION = {(0, 1, 2, 3), (0, 2, 1, 3), (0, 1, 3, 2), (0, 3, 2, 1)}
_SWAP_HW, _SWAP_HC = (0, 2, 1, 3), (0, 3, 2, 1)


def has_limits(target: Any) -> bool:
    """Whether this module knows limits of ``target`` that the partitioner must check."""
    return family_constraints(target).max_transpose_axis is not None


class _Refused(Exception):
    """A 3-D transpose of the decomposition that the NPU cannot run (the message says why)."""


def transpose_objection(shape: Sequence[int], perm: Sequence[int], bits: int, target: Any) -> str | None:
    """Why Vela cannot compile a TOSA TRANSPOSE of ``shape`` by ``perm`` (``bits``-bit data)
    for ``target``, or None."""
    family = family_constraints(target)
    if family.max_transpose_axis is None:
        return None
    shape, perm = [int(d) for d in shape], [int(p) for p in perm]
    moved = [p for p in perm if shape[p] != 1]
    if moved == sorted(moved):
        return None  # only size-1 axes move: a reshape, whatever its rank
    try:
        if _needs_decomposition(shape, perm, bits):
            _selection_sort(list(shape), perm, bits)  # it swaps the axes of its copy
    except _Refused as refused:
        return (f"Vela cannot transpose {shape} by {perm} ({bits}-bit) on {family.family}: {refused} "
                "(it runs a transpose as 3-D transposes with every axis at most "
                f"{MAX_TRANSPOSE_AXIS})")
    return None


def _as_4d(shape: Sequence[int], perm: Sequence[int]) -> tuple[list[int], list[int]]:
    pad = max(0, 4 - len(shape))
    return [1] * pad + list(shape), list(range(pad)) + [p + pad for p in perm]


def _needs_decomposition(shape: list[int], perm: list[int], bits: int) -> bool:
    """Vela's question for one transpose: refused (raises), one operation (False), or
    swaps (True)."""
    padded, order = _as_4d(shape, perm)
    permuted = [padded[p] for p in order]
    for dims in (padded, permuted):
        if any(d > MAX_TRANSPOSE_AXIS for d in dims[-3:]):
            raise _Refused(f"an axis of {max(dims[-3:])} in {dims}")
    last4 = [p - (len(order) - 4) for p in order[-4:]]
    leading = order[:-4] != list(range(len(order) - 4)) or any(d > 1 for d in padded[:-3] + permuted[:-3])
    if bits == 32 and tuple(last4) == _SWAP_HW and padded[-1] > MAX_INT32_SWAP_HW_DEPTH:
        raise _Refused(f"a 32-bit H<->W transpose of {padded[-1]} channels")
    single = tuple(last4) in _ONE_OPERATION and not (bits == 32 and tuple(last4) == _SWAP_HC)
    return leading or not single


def _selection_sort(shape: list[int], perm: list[int], bits: int) -> None:
    """Places each output axis from the left with one swap (Vela's order of swaps)."""
    current = list(range(len(shape)))
    for position, wanted in enumerate(perm):
        if current[position] == wanted:
            continue
        other = current.index(wanted)
        _swap_axes(shape, position, other, bits)
        current[position], current[other] = current[other], current[position]


def _merged(shape: list[int], sizes: tuple[int, int, int]) -> list[int]:
    """``shape`` as 3-D, the first ``sizes[0]`` axes merged, then ``sizes[1]``, then the rest."""
    first, second = sizes[0], sizes[0] + sizes[1]
    return [max(1, math.prod(shape[:first])), max(1, math.prod(shape[first:second])),
            max(1, math.prod(shape[second:]))]


def _swap_axes(shape: list[int], a: int, b: int, bits: int) -> None:
    """Swaps axes ``a < b`` of ``shape`` in place as Vela does: directly among the innermost
    three axes, else through 3-D views that first bring the axes to the edges."""
    n = len(shape)
    if n <= 3 or (a >= n - 3 and math.prod(shape[:n - 3]) == 1):
        _swap_in_3d(shape, a, b, bits)
    elif (a, b) == (0, 1):
        _swap_axes(_merged(shape, (1, 1, n - 2)), 0, 1, bits)
        shape[a], shape[b] = shape[b], shape[a]
    elif (a, b) == (n - 2, n - 1):
        _swap_axes(_merged(shape, (n - 2, 1, 1)), 1, 2, bits)
        shape[a], shape[b] = shape[b], shape[a]
    elif a != 0:
        _swap_axes(_merged(shape, (a, 1, n - a - 1)), 0, 1, bits)  # a to the front
        shape.insert(0, shape.pop(a))
        _swap_axes(shape, 0, b, bits)
        _swap_axes(_merged(shape, (1, a, n - a - 1)), 0, 1, bits)  # and back
        shape.insert(a, shape.pop(0))
    elif b != n - 1:
        _swap_axes(_merged(shape, (b, 1, n - b - 1)), 1, 2, bits)  # b to the end
        shape.append(shape.pop(b))
        _swap_axes(shape, 0, n - 1, bits)
        _swap_axes(_merged(shape, (b, n - b - 1, 1)), 1, 2, bits)  # and back
        shape.insert(b, shape.pop())
    else:
        _swap_axes(_merged(shape, (1, n - 2, 1)), 0, 2, bits)
        shape[a], shape[b] = shape[b], shape[a]


def _swap_in_3d(shape: list[int], a: int, b: int, bits: int) -> None:
    """One swap among the innermost three axes; H<->C of 32-bit data is three swaps."""
    if any(d > MAX_TRANSPOSE_AXIS for d in shape):
        raise _Refused(f"an axis of {max(shape)} in {shape}")
    n = len(shape)
    if bits == 32 and (a, b) == (n - 3, n - 1):
        for first, second in ((n - 2, n - 1), (n - 3, n - 2), (n - 2, n - 1)):
            _swap_in_3d(shape, first, second, bits)
        return
    if bits == 32 and (a, b) == (n - 3, n - 2) and shape[-1] > MAX_INT32_SWAP_HW_DEPTH:
        raise _Refused(f"a 32-bit H<->W transpose of {shape[-1]} channels")
    shape[a], shape[b] = shape[b], shape[a]
