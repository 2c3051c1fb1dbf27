"""The image to flash, made from the firmware's ELF with arm-none-eabi-objcopy, and the note
that says how to run it on its board (``kiln-deploy --build-only``).

``make_image(elf, board, folder, "mv2")`` leaves in ``folder``::

    mv2.elf            the firmware, with symbols (debuggers, QEMU, the FVPs load it)
    mv2.hex            every loadable byte with its address (Intel HEX): one file for any tool
    mv2-<REGION>.bin   the raw bytes of each board region that has loadable sections, to be
                       loaded at that region's address (a single .bin of the whole image
                       would fill the gaps between regions: gigabytes)
    mv2.run.txt        the note: the files, their load addresses and the board file's
                       instructions for running the image

Sections are assigned to regions by their load address (LMA), as ``objdump -h`` reports it.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from kiln.boards import BoardProfile
from kiln.deploy.prepare import DeployError

#: A section line of ``objdump -h``: index, name, size, VMA, LMA (hexadecimal).
_SECTION = re.compile(r"^\s*\d+\s+(\S+)\s+([0-9a-fA-F]+)\s+([0-9a-fA-F]+)\s+([0-9a-fA-F]+)\s")


@dataclass(frozen=True)
class LoadedSection:
    name: str
    size: int
    load_address: int


@dataclass(frozen=True)
class ImagePart:
    """One raw binary: the loadable sections of one board region."""

    region: str
    load_address: int
    path: Path
    sections: tuple[str, ...]


@dataclass(frozen=True)
class FirmwareImage:
    elf: Path
    hex: Path
    parts: tuple[ImagePart, ...]
    note: Path


def _address(value: int) -> str:
    """As board files and Arm's documents write addresses: 0x4A000000."""
    return f"0x{value:08X}"


def _tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        raise DeployError(f"{name} not found: apt-get install binutils-arm-none-eabi (it comes with "
                          "gcc-arm-none-eabi)", 2)
    return path


def _run(command: list[str]) -> str:
    completed = subprocess.run(command, capture_output=True, text=True, check=False)
    if completed.returncode != 0:
        raise DeployError(f"{Path(command[0]).name} failed: {completed.stderr.strip() or completed.returncode}")
    return completed.stdout


def loaded_sections(elf: Path) -> list[LoadedSection]:
    """The ELF's sections with bytes to load (CONTENTS and LOAD), from ``objdump -h``."""
    lines = _run([_tool("arm-none-eabi-objdump"), "-h", str(elf)]).splitlines()
    sections = []
    for line, flags in zip(lines, lines[1:]):
        match = _SECTION.match(line)
        if match and "LOAD" in flags and "CONTENTS" in flags and int(match.group(2), 16) > 0:
            sections.append(LoadedSection(match.group(1), int(match.group(2), 16), int(match.group(4), 16)))
    return sections


def _region_of(board: BoardProfile, section: LoadedSection) -> str:
    for region in board.regions:
        if region.origin <= section.load_address and section.load_address + section.size <= region.end:
            return region.name
    raise DeployError(f"section {section.name} loads at {_address(section.load_address)}, in no region of board "
                      f"{board.name} ({board.path})")


def make_image(elf: Path, board: BoardProfile, folder: Path, stem: str) -> FirmwareImage:
    """Copies the ELF into ``folder`` as ``<stem>.elf`` and writes ``<stem>.hex`` and one
    ``<stem>-<REGION>.bin`` per region with loadable sections."""
    objcopy = _tool("arm-none-eabi-objcopy")
    folder.mkdir(parents=True, exist_ok=True)
    image_elf = folder / f"{stem}.elf"
    shutil.copyfile(elf, image_elf)
    image_hex = folder / f"{stem}.hex"
    _run([objcopy, "-O", "ihex", str(image_elf), str(image_hex)])
    by_region: dict[str, list[LoadedSection]] = {}
    for section in loaded_sections(image_elf):
        by_region.setdefault(_region_of(board, section), []).append(section)
    for stale in folder.glob(f"{stem}-*.bin"):
        stale.unlink()
    parts = []
    for region, sections in by_region.items():
        path = folder / f"{stem}-{region}.bin"
        only = [argument for section in sections for argument in ("--only-section", section.name)]
        _run([objcopy, "-O", "binary", *only, str(image_elf), str(path)])
        parts.append(ImagePart(region, min(s.load_address for s in sections), path,
                               tuple(s.name for s in sections)))
    parts.sort(key=lambda part: part.load_address)
    return FirmwareImage(image_elf, image_hex, tuple(parts), folder / f"{stem}.run.txt")


def run_note(image: FirmwareImage, board: BoardProfile, show: Callable[[Path], str] = str) -> str:
    """How to run the image on its board: the files, where each loads, and the board
    file's instructions (``{elf}`` and ``{hex}`` filled in). ``show`` writes a path."""
    lines = [f"board {board.name} ({show(board.path)}): {board.description}",
             f"  {show(image.elf)}: the firmware (ELF)",
             f"  {show(image.hex)}: the whole image with its addresses (Intel HEX)"]
    for part in image.parts:
        lines.append(f"  {show(part.path)}: load at {_address(part.load_address)} (region {part.region}: "
                     f"{', '.join(part.sections)})")
    lines.append("to run it:")
    lines += [f"  {line.format(elf=show(image.elf), hex=show(image.hex))}" for line in board.run]
    if board.npu is not None and board.npu.device == "silicon":
        lines.append(f"  note: Ethos-U programs drive the board's {'/'.join(board.npu.families)} at "
                     f"{_address(board.npu.base)} (IRQ {board.npu.irq}) through Kiln's register-level driver, "
                     "which has not run on silicon (docs/real-silicon.md)")
    if board.qemu is None:
        lines.append("  not run here: no QEMU machine runs this board (its board file has no qemu)")
    return "\n".join(lines)


def write_run_note(image: FirmwareImage, board: BoardProfile) -> Path:
    """Writes the note next to the image, with the image's files by name (the folder can be
    moved) and the board file by its absolute path."""
    def show(path: Path) -> str:
        return path.name if path.parent == image.note.parent else str(path.resolve())

    image.note.write_text(run_note(image, board, show) + "\n")
    return image.note
