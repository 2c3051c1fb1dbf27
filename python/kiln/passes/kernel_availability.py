"""Operators and dtypes the runtime has kernels for, read from the kernel libraries' op tables.

Each C++ kernel library lists its operators in ``kernels/<library>/op_table.yaml``
(the table its registration is built from), with the dtypes each kernel accepts. The
wheel ships those files as ``kiln/kernels/<library>/op_table.yaml``; from a source
tree they are read where they live. :func:`kiln.passes.to_out_variants` uses them to
refuse, at export time, a kernel call that no kernel of the program's libraries can
run — an operator without a kernel, or a kernel that does not take the call's dtypes —
instead of a program that fails when the runtime loads or runs it.
"""

from __future__ import annotations

import functools
import importlib.resources
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from kiln import UnsupportedOperatorError
from kiln.ir.method_graph import KernelCall, MethodGraph, tensors_in
from kiln.passes.op_tables import KernelEntry, parse_op_table
from kiln.serialize.scalar_types import SCALAR_TYPE_NAMES

logger = logging.getLogger(__name__)

#: Kernel libraries whose kernels every Kiln runtime build registers.
KERNEL_LIBRARIES: tuple[str, ...] = ("portable", "cortex_m")

# python/kiln/passes/kernel_availability.py -> the repository root (source tree or editable install).
_SOURCE_ROOT = Path(__file__).resolve().parents[3]


class UnsupportedDtypeError(UnsupportedOperatorError):
    """A kernel call passes a tensor dtype that no kernel of the program's libraries takes.

    Attributes (besides ``node`` and ``operator``, of the first such call):
        dtype: the first dtype without a kernel, as the op tables name it ("Char").
    """

    def __init__(self, message: str, *, node: str, operator: str, dtype: str) -> None:
        super().__init__(message, node=node, operator=operator)
        self.dtype = dtype


def op_table_path(library: str) -> Optional[Path]:
    """The YAML op table of kernel library `library`: the copy installed with the
    package, else the source tree's, else None."""
    packaged = importlib.resources.files("kiln") / "kernels" / library / "op_table.yaml"
    if packaged.is_file():
        return Path(str(packaged))
    source = _SOURCE_ROOT / "kernels" / library / "op_table.yaml"
    return source if source.is_file() else None


def op_table_text(library: str) -> Optional[str]:
    """The text of :func:`op_table_path`'s table, or None."""
    path = op_table_path(library)
    return None if path is None else path.read_text(encoding="utf-8")


@functools.lru_cache(maxsize=None)
def kernel_table(libraries: tuple[str, ...] = KERNEL_LIBRARIES) -> Optional[dict[str, tuple[KernelEntry, ...]]]:
    """Operator -> its kernels, most specific library first (the order of
    ``libraries``), or None when no op table can be found (then export cannot check
    kernels and says so once)."""
    table: dict[str, list[KernelEntry]] = {}
    found = False
    for library in libraries:
        text = op_table_text(library)
        if text is None:
            continue
        found = True
        where = op_table_path(library) or Path(library) / "op_table.yaml"
        for kernel in parse_op_table(library, text, where, check_sources=False).entries.values():
            table.setdefault(kernel.op, []).append(kernel)
    if not found:
        logger.warning(
            "no kernel op table found (kiln/kernels/<library>/op_table.yaml in the package, or "
            "kernels/<library>/op_table.yaml under %s): export does not check that the runtime "
            "has a kernel for every operator",
            _SOURCE_ROOT,
        )
        return None
    return {operator: tuple(kernels) for operator, kernels in table.items()}


def kernel_operators(libraries: tuple[str, ...] = KERNEL_LIBRARIES) -> Optional[frozenset[str]]:
    """Full names ("aten::add.out") of every operator with a kernel in ``libraries``,
    or None when no op table can be found."""
    table = kernel_table(libraries)
    return None if table is None else frozenset(table)


@dataclass(frozen=True)
class KernelGap:
    """A kernel call no kernel can run, and why."""

    node: str  # the FX node the call was lowered from
    operator: str
    dtypes: tuple[str, ...]  # every dtype the call passes
    missing: tuple[str, ...]  # those no kernel takes (all of them if the op has no kernel)
    reason: str


def _dtype_name(tensor) -> str:
    return SCALAR_TYPE_NAMES.get(tensor.dtype_code, f"ScalarType{tensor.dtype_code}")


def call_dtypes(call: KernelCall) -> list[str]:
    """The dtypes of every tensor a call passes (inputs and outputs), first use first."""
    names: dict[str, None] = {}
    for argument in call.args:
        for tensor in tensors_in(argument):
            names.setdefault(_dtype_name(tensor))
    return list(names)


def _runs(kernel: KernelEntry, dtypes: Sequence[str], written: Sequence[str]) -> bool:
    return all(kernel.supports(d) for d in dtypes) and all(kernel.writes(d) for d in written)


def kernel_gap(call: KernelCall, table: dict[str, tuple[KernelEntry, ...]]) -> Optional[KernelGap]:
    """Why no kernel of ``table`` runs ``call`` (None if one does): as the runtime
    chooses, one kernel per operator takes every dtype of the call."""
    dtypes = call_dtypes(call)
    kernels = table.get(call.operator, ())
    if not kernels:
        return KernelGap(call.source_node, call.operator, tuple(dtypes), tuple(dtypes),
                         "no kernel library has this operator")
    written = list(dict.fromkeys(_dtype_name(tensor) for tensor in call.outputs))
    if any(_runs(kernel, dtypes, written) for kernel in kernels):
        return None
    offered = "; ".join(kernel.describe() for kernel in kernels)
    # Each dtype may have a kernel, but no single kernel takes them all together.
    missing = tuple(d for d in dtypes if not any(kernel.supports(d) for kernel in kernels))
    if not missing:
        unwritable = tuple(d for d in written if not any(kernel.writes(d) for kernel in kernels))
        if unwritable:
            return KernelGap(call.source_node, call.operator, tuple(dtypes), unwritable,
                             f"no kernel writes a {', '.join(unwritable)} out ({offered})")
    missing = missing or tuple(dtypes)
    return KernelGap(call.source_node, call.operator, tuple(dtypes), missing,
                     f"no kernel takes {', '.join(missing)} ({offered})")


def check_kernels(method: MethodGraph, libraries: Sequence[str] = KERNEL_LIBRARIES) -> None:
    """Raises :class:`UnsupportedDtypeError` listing every kernel call of ``method`` that
    no kernel of ``libraries`` can run, so that a program that compiles also runs."""
    table = kernel_table(tuple(libraries))
    if table is None:
        return
    gaps = [gap for call in method.calls if isinstance(call, KernelCall) and (gap := kernel_gap(call, table))]
    if not gaps:
        return
    listing = "; ".join(
        f"node '{gap.node}' calls {gap.operator} with {', '.join(gap.dtypes) or 'no'} tensors: {gap.reason}"
        for gap in gaps[:5]
    )
    more = f"; and {len(gaps) - 5} more" if len(gaps) > 5 else ""
    first = gaps[0]
    raise UnsupportedDtypeError(
        f"{len(gaps)} kernel call(s) have no kernel for their dtypes in the kernel libraries "
        f"{', '.join(libraries)}: {listing}{more} (change the model's dtypes, keep that part in "
        "float, or add the dtype to the kernel and its op table kernels/<library>/op_table.yaml)",
        node=first.node,
        operator=first.operator,
        dtype=first.missing[0] if first.missing else "",
    )
