"""The op-table reader for the code generator: python/kiln/passes/op_tables.py, loaded by path.

Code generation runs at CMake time, without the kiln package installed; the reader lives
in the package (the export-time kernel check reads tables with it too). Importing this
module gives that reader: ``from op_tables import load_op_table``.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

# tools/codegen/op_tables.py -> the repository root (or the firmware sources' root).
_READER = Path(__file__).resolve().parents[2] / "python" / "kiln" / "passes" / "op_tables.py"

_spec = importlib.util.spec_from_file_location(__name__, _READER)
if _spec is None or _spec.loader is None:
    raise ImportError(f"cannot load the op-table reader {_READER}")
_reader = importlib.util.module_from_spec(_spec)
sys.modules[__name__] = _reader  # `import op_tables` answers with the reader itself
_spec.loader.exec_module(_reader)
