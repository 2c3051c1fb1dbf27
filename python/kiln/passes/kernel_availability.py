"""Operators the runtime has kernels for, read from the kernel libraries' op tables.

Each C++ kernel library lists its operators in ``kernels/<library>/op_table.yaml``
(the table its registration is built from). The wheel ships those files as
``kiln/kernels/<library>/op_table.yaml``; from a source tree they are read where
they live. :func:`kiln.passes.to_out_variants` uses them to refuse, at export time,
an operator whose out variant no kernel implements, instead of a program that fails
with OperatorMissing when the runtime loads it.
"""

from __future__ import annotations

import functools
import importlib.resources
import logging
from pathlib import Path
from typing import Optional

import yaml

logger = logging.getLogger(__name__)

#: Kernel libraries whose kernels every Kiln runtime build registers.
KERNEL_LIBRARIES: tuple[str, ...] = ("portable",)

# python/kiln/passes/kernel_availability.py -> the repository root (source tree or editable install).
_SOURCE_ROOT = Path(__file__).resolve().parents[3]


def op_table_text(library: str) -> Optional[str]:
    """The YAML op table of kernel library `library`: the copy installed with the
    package, else the source tree's, else None."""
    packaged = importlib.resources.files("kiln") / "kernels" / library / "op_table.yaml"
    if packaged.is_file():
        return packaged.read_text(encoding="utf-8")
    source = _SOURCE_ROOT / "kernels" / library / "op_table.yaml"
    if source.is_file():
        return source.read_text(encoding="utf-8")
    return None


@functools.lru_cache(maxsize=None)
def kernel_operators() -> Optional[frozenset[str]]:
    """Full names ("aten::add.out") of every operator with a kernel, or None when no
    op table can be found (then export cannot check kernels and says so once)."""
    names: set[str] = set()
    found = False
    for library in KERNEL_LIBRARIES:
        text = op_table_text(library)
        if text is None:
            continue
        found = True
        names.update(str(entry["op"]) for entry in yaml.safe_load(text) or [])
    if not found:
        logger.warning(
            "no kernel op table found (kiln/kernels/<library>/op_table.yaml in the package, or "
            "kernels/<library>/op_table.yaml under %s): export does not check that the runtime "
            "has a kernel for every operator",
            _SOURCE_ROOT,
        )
        return None
    return frozenset(names)
