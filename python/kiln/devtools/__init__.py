"""Kiln's developer tools: profiling and debugging what a program does at run time.

* :class:`Etdump` reads the ETDumps the runtime records (``kiln-run --etdump``, the Python
  runtime, firmware); :class:`Inspector` maps their events back to the model's modules
  (``kiln-inspect`` on the command line).
* :func:`bundle` writes bundled programs (``.bpte``: a program with test cases);
  :class:`BundledProgram` reads them (``kiln-run model.bpte`` runs the cases).
* :mod:`kiln.devtools.plots` draws the memory plan, NPU cycles, per-layer error and profiles.

Importing this package is cheap: each tool is imported when first used.
"""

from __future__ import annotations

from kiln._lazy import lazy_attributes
from kiln.devtools.errors import BundledProgramError, DebugInfoError, DevtoolsFileError, EtdumpError

_LAZY: dict[str, tuple[str, str]] = {
    "Etdump": ("kiln.devtools.etdump", "Etdump"),
    "Inspector": ("kiln.devtools.inspector", "Inspector"),
    "record_etdump": ("kiln.devtools.recording", "record_etdump"),
    "DebugInfo": ("kiln.devtools.debug_info", "DebugInfo"),
    "bundle": ("kiln.devtools.bundled_program", "bundle"),
    "BundledProgram": ("kiln.devtools.bundled_program", "BundledProgram"),
    "TestCase": ("kiln.devtools.bundled_program", "TestCase"),
}


__getattr__ = lazy_attributes("kiln.devtools", _LAZY)


__all__ = ["BundledProgramError", "DebugInfoError", "DevtoolsFileError", "EtdumpError", *_LAZY]
