"""Where the firmware's sources are: the copy installed with the kiln package
(``kiln/firmware_sources``, see tools/cmake/KilnFirmwareSources.cmake), or the checkout the
package runs from (an editable install). kiln-deploy builds from there, and the shipped
board files (``examples/arm/platform/boards``) are read from there.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import kiln

#: Where the wheel installs the firmware's sources, inside the kiln package.
SHIPPED_SOURCES = "firmware_sources"
#: The board files, relative to a source tree.
BOARDS_FOLDER = Path("examples") / "arm" / "platform" / "boards"


@dataclass(frozen=True)
class FirmwareTree:
    """A firmware source tree and how it was found (said to the user)."""

    path: Path
    origin: str

    @property
    def boards(self) -> Path:
        return self.path / BOARDS_FOLDER


def is_source_tree(path: Path) -> bool:
    return (path / "CMakePresets.json").is_file() and (path / "examples" / "arm" / "CMakeLists.txt").is_file()


def find_firmware_tree() -> FirmwareTree | None:
    """The sources installed with the package, else the checkout above it, else None."""
    for entry in kiln.__path__:
        shipped = Path(entry) / SHIPPED_SOURCES
        if is_source_tree(shipped):
            return FirmwareTree(shipped.resolve(), f"installed with kiln {kiln.__version__}")
    for entry in kiln.__path__:
        for parent in Path(entry).resolve().parents:
            if is_source_tree(parent):
                return FirmwareTree(parent, "the checkout the kiln package is installed from (editable)")
    return None
