"""Graph passes between the core-ATen program and memory planning.

* :func:`to_out_variants` lowers an ExportedProgram to a :class:`kiln.ir.MethodGraph` of
  out-variant kernel calls (table in :mod:`kiln.passes.aten_out_variants`).
* :mod:`kiln.ir` defines that lowered form (no torch needed).
"""

from __future__ import annotations

from typing import Any

from kiln.passes.aten_out_variants import OUT_VARIANTS, out_variant_name


def __getattr__(name: str) -> Any:
    # The lowering imports torch; keep ``import kiln.passes`` light for readers of .pte files.
    if name in ("to_out_variants", "find_call"):
        from kiln.passes import out_variants

        return getattr(out_variants, name)
    raise AttributeError(f"module 'kiln.passes' has no attribute {name!r}")


__all__ = [
    "OUT_VARIANTS",
    "find_call",
    "out_variant_name",
    "to_out_variants",
]
