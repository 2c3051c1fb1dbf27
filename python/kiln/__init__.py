"""Kiln: bake PyTorch models into ``.pte`` programs and run them anywhere.

The ahead-of-time compiler is one call::

    import kiln
    program = kiln.export(model.eval(), (example_input,))
    program.save("model.pte")
    print(program.summary())

``kiln.export`` runs ``torch.export``, decomposes to core ATen, converts every
operator to its out-variant kernel call, plans memory and emits a ``.pte`` file
that both Kiln's runtime and ExecuTorch's runtime load.

Importing ``kiln`` is cheap: torch and the compiled runtime extension are imported
only when an attribute that needs them is first used, so the compiler works on
machines without the runtime extension and the runtime works without torch.

Every error caused by the user's model or file is a subclass of :class:`KilnError`
with a message that names the offending node, operator or field.
"""

from __future__ import annotations

import logging
from importlib import metadata

from kiln._lazy import lazy_attributes

PRODUCER_NAME = "kiln"


def _read_version() -> str:
    try:
        return metadata.version("kiln")
    except metadata.PackageNotFoundError:
        # Running from a source tree (PYTHONPATH=python) rather than an installed wheel.
        return "0.1.0.dev0"


__version__: str = _read_version()


class KilnError(Exception):
    """Base class of every error Kiln reports about a model, a program or a file."""


class ExportError(KilnError):
    """A model could not be exported: torch.export failed, or the graph has
    something Kiln cannot lower (unsupported operator, dynamic shape, mutation)."""


class UnsupportedOperatorError(ExportError):
    """A graph node calls an operator that has no out-variant kernel in Kiln.

    Attributes:
        node: name of the FX node (as printed by ``ExportedProgram.graph``).
        operator: the core-ATen operator, e.g. ``"aten::nonzero"``.
    """

    def __init__(self, message: str, *, node: str, operator: str) -> None:
        super().__init__(message)
        self.node = node
        self.operator = operator


class MemoryPlanningError(KilnError):
    """Memory planning was given inconsistent lifetimes or placements."""


class SerializationError(KilnError):
    """A program could not be written, or a ``.pte`` file could not be parsed."""


# Importing torchao (kiln.quantize, the Ethos-U quantizer) logs a warning for every CUDA kernel
# library it cannot load, and makes torch log a deprecation about one of torchao's enums: on a
# CPU-only machine that is every import, and none of it concerns the user's model. Only these
# messages are dropped, by filters on the loggers that emit them (nothing else is silenced).
_IMPORT_NOISE: dict[str, tuple[str, ...]] = {
    "torchao": ("Failed to load ",),
    "torchao.kernel.intmm": ("Warning: Detected no triton",),
    "torch.utils._pytree": ("is an Enum subclass and is now natively supported",),
}


def _drops_import_noise(logger_name: str):
    markers = _IMPORT_NOISE[logger_name]
    return lambda record: not any(marker in str(record.msg) for marker in markers)


for _logger_name in _IMPORT_NOISE:
    logging.getLogger(_logger_name).addFilter(_drops_import_noise(_logger_name))

# Attributes resolved on first use (PEP 562) so that ``import kiln`` imports
# neither torch nor the runtime extension.
_LAZY_ATTRIBUTES: dict[str, tuple[str, str | None]] = {
    "export": ("kiln.export", None),
    "quantize": ("kiln.quantize", None),
    "export_to_edge": ("kiln.export", "export_to_edge"),
    "Program": ("kiln.program", "Program"),
    "UnsupportedDtypeError": ("kiln.passes.kernel_availability", "UnsupportedDtypeError"),
    "passes": ("kiln.passes", None),
    "memory": ("kiln.memory", None),
    "serialize": ("kiln.serialize", None),
}


__getattr__ = lazy_attributes("kiln", _LAZY_ATTRIBUTES)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY_ATTRIBUTES))


__all__ = [
    "PRODUCER_NAME",
    "ExportError",
    "KilnError",
    "MemoryPlanningError",
    "Program",
    "SerializationError",
    "UnsupportedDtypeError",
    "UnsupportedOperatorError",
    "__version__",
    "export",
    "export_to_edge",
]
