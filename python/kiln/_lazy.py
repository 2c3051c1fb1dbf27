"""Package attributes imported on first use (a module ``__getattr__``), so that importing a
package stays cheap: torch, torchao and Vela load only when something needs them."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any, Optional


def lazy_attributes(package: str, table: Mapping[str, tuple[str, Optional[str]]]) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``package``: ``table`` maps an attribute to (module,
    name in that module), or to (module, None) for the module itself. The first access
    imports it and stores it on the package, so later ones are plain lookups."""

    def __getattr__(name: str) -> Any:
        if name not in table:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module_name, attribute = table[name]
        module = importlib.import_module(module_name)
        value = module if attribute is None else getattr(module, attribute)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__
