"""Loads a user's model given as ``path/to/file.py:ClassName``.

Whatever the user's code raises -- a SyntaxError in the file, an exception while it is
imported, while the class is built or while it makes its example inputs -- becomes a
:class:`ModelFileError` that names the file and what was being done, with the original
exception chained (``kiln-aot --debug`` prints its traceback).
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from kiln import KilnError

if TYPE_CHECKING:
    import torch

T = TypeVar("T")


class ModelFileError(KilnError, ValueError):
    """The ``file.py:ClassName`` spec cannot be loaded; the message says why."""


def describe_exception(error: BaseException) -> str:
    """``SyntaxError at line 3: invalid syntax``, ``ZeroDivisionError: division by zero``."""
    if isinstance(error, SyntaxError):
        where = f" at line {error.lineno}" if error.lineno else ""
        return f"{type(error).__name__}{where}: {error.msg}"
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0]}" if text else type(error).__name__


def call_user_code(spec: str, what: str, function: Callable[[], T]) -> T:
    """Runs user code; an exception it raises becomes a ModelFileError naming ``spec``."""
    try:
        return function()
    except KilnError:
        raise
    except Exception as error:  # noqa: BLE001 - any failure of the user's code is reported as such
        raise ModelFileError(f"{spec}: {what} raised {describe_exception(error)}") from error


def load_model_from_file(spec: str) -> tuple[torch.nn.Module, tuple[torch.Tensor, ...]]:
    """Imports ``file.py``, builds ``ClassName()`` and calls its ``get_example_inputs()``."""
    import torch

    path_text, _, class_name = spec.rpartition(":")
    path = Path(path_text)
    if not path_text or not class_name:
        raise ModelFileError(f"{spec!r}: expected path/to/file.py:ClassName")
    if not path.is_file():
        raise ModelFileError(f"{spec!r}: no file {path}")
    module_name = f"kiln_user_model_{path.stem}"
    module_spec = importlib.util.spec_from_file_location(module_name, path)
    if module_spec is None or module_spec.loader is None:
        raise ModelFileError(f"{spec!r}: {path} is not a Python file")
    module = importlib.util.module_from_spec(module_spec)
    sys.modules[module_name] = module
    call_user_code(str(path), "importing it", lambda: module_spec.loader.exec_module(module))  # type: ignore[union-attr]
    cls = getattr(module, class_name, None)
    if cls is None:
        raise ModelFileError(f"{spec!r}: {path} defines no {class_name}")
    model = call_user_code(spec, f"{class_name}()", cls)
    if not hasattr(model, "get_example_inputs"):
        raise ModelFileError(f"{spec!r}: {class_name} has no get_example_inputs() method")
    if not isinstance(model, torch.nn.Module):
        raise ModelFileError(f"{spec!r}: {class_name} is a {type(model).__name__}, not a torch.nn.Module")
    inputs = call_user_code(spec, f"{class_name}.get_example_inputs()", model.get_example_inputs)
    return model.eval(), tuple(inputs) if isinstance(inputs, (tuple, list)) else (inputs,)
