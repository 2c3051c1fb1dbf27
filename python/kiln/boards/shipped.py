"""Finding a board: a shipped board by name (``examples/arm/platform/boards/<name>.json`` in
the firmware sources: the copy installed with the package, or the checkout), or a board
file of the user's by path."""

from __future__ import annotations

from pathlib import Path

from kiln.boards.profile import BoardProfile
from kiln.boards.reader import BoardFileError, read_board_file
from kiln.firmware_tree import BOARDS_FOLDER, find_firmware_tree

#: The board kiln-deploy and the memory manifest use when none is named.
DEFAULT_BOARD = "corstone-300"


def shipped_boards_folder(source_tree: Path | None = None) -> Path:
    """The shipped board files of ``source_tree`` (default: the sources installed with the
    package, else the checkout)."""
    if source_tree is not None:
        return Path(source_tree) / BOARDS_FOLDER
    found = find_firmware_tree()
    if found is None:
        raise BoardFileError("(shipped boards)", "", "no firmware sources next to the kiln package (an incomplete "
                                                     "install?): give a board file's path instead of a name")
    return found.boards


def shipped_board_names(source_tree: Path | None = None) -> list[str]:
    return sorted(path.stem for path in shipped_boards_folder(source_tree).glob("*.json"))


def is_board_path(name_or_path: str | Path) -> bool:
    """A path (it has a folder or ends in .json) rather than a shipped board's name."""
    text = str(name_or_path)
    return isinstance(name_or_path, Path) or text.endswith(".json") or "/" in text or "\\" in text


def board_file(name_or_path: str | Path, source_tree: Path | None = None) -> Path:
    """The board file of a shipped board's name, or the given path (absolute)."""
    if is_board_path(name_or_path):
        path = Path(name_or_path).expanduser().resolve()
        if not path.is_file():
            raise BoardFileError(path, "", "no such file")
        return path
    path = shipped_boards_folder(source_tree) / f"{name_or_path}.json"
    if not path.is_file():
        names = ", ".join(shipped_board_names(source_tree))
        raise BoardFileError(path, "", f"no shipped board named {name_or_path!r} (shipped: {names}; or give the "
                                       "path of a board file of your own)")
    return path


def load_board(name_or_path: str | Path = DEFAULT_BOARD, source_tree: Path | None = None) -> BoardProfile:
    """The profile of a shipped board (by name) or of a board file (by path)."""
    return read_board_file(board_file(name_or_path, source_tree))
