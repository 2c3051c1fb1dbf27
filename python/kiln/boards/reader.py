"""Reading and checking a board file (format: docs/board-files.md).

The firmware build reads the same files with CMake (examples/arm/platform/board_profile.cmake)
and checks the facts it uses; this reader checks every field, unknown keys included (a
misspelt key would otherwise be a fact silently left out), and says where a fault is:
``board file my.json: memory.regions[2].size: '12Q' is not a size ...``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kiln import KilnError
from kiln.boards.profile import (NPU_FAMILIES, BoardProfile, Console, Cpu, MemoryRegion, Npu, Placement, Qemu,
                                 Timer)

#: The board file format this Kiln reads (``kiln_board``).
FORMAT_VERSION = 1

_SIZE = re.compile(r"^(\d+)([KMG]?)$")
_SCALE = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3}
_REGION_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_BOARD_NAME = re.compile(r"^[A-Za-z0-9._-]+$")
_SECURITY = ("secure", "non_secure", "none")
_TIMER_FIELDS = {"sse-system-counter": ("control_base", "read_base"), "cmsdk-apb-timer": ("base",)}
#: Free text allowed in every object: the board file's comments.
_COMMENT = "comment"


class BoardFileError(KilnError):
    """A board file that cannot be read: names the file and the field."""

    def __init__(self, path: Path | str, where: str, problem: str) -> None:
        super().__init__(f"board file {path}: {where + ': ' if where else ''}{problem}")
        self.path, self.where, self.problem = Path(path), where, problem


def parse_bytes(value: Any) -> int:
    """A size or address: an integer, or a string in decimal, ``0x`` hexadecimal, or a
    number with ``K``, ``M`` or ``G`` (KiB, MiB, GiB). ValueError otherwise."""
    if isinstance(value, bool):
        raise ValueError(f"{value!r} is not a size or address")
    if isinstance(value, int) and value >= 0:
        return value
    if isinstance(value, str):
        if re.fullmatch(r"0[xX][0-9a-fA-F]+", value):
            return int(value, 16)
        if match := _SIZE.match(value):
            return int(match.group(1)) * _SCALE[match.group(2)]
    raise ValueError(f"{value!r} is not a size or address (decimal, 0x hexadecimal, or a number with K, M or G)")


class _Reader:
    """Walks the JSON object; every fault is a BoardFileError naming the field."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def fail(self, where: str, problem: str) -> BoardFileError:
        return BoardFileError(self.path, where, problem)

    def object(self, value: Any, where: str, required: tuple[str, ...], optional: tuple[str, ...] = ()) -> dict:
        if not isinstance(value, dict):
            raise self.fail(where, f"an object {{...}} is expected, not {type(value).__name__}")
        # Unknown keys first: a misspelt key is also a missing one, and its name says more.
        unknown = sorted(set(value) - set(required) - set(optional) - {_COMMENT})
        if unknown:
            known = ", ".join(required + optional)
            raise self.fail(where or "the top level", f"unknown key {unknown[0]!r} (known: {known}, comment)")
        for key in required:
            if key not in value:
                raise self.fail(f"{where}.{key}" if where else key, "missing")
        return value

    def typed(self, value: Any, kind: type | tuple[type, ...], where: str, what: str) -> Any:
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise self.fail(where, f"{what} is expected, not {value!r}")
        return value

    def text(self, value: Any, where: str) -> str:
        return self.typed(value, str, where, "a string")

    def flag(self, value: Any, where: str) -> bool:
        return self.typed(value, bool, where, "true or false")

    def bytes(self, value: Any, where: str) -> int:
        try:
            return parse_bytes(value)
        except ValueError as error:
            raise self.fail(where, str(error)) from None

    def choice(self, value: Any, choices: tuple[str, ...], where: str) -> str:
        if value not in choices:
            raise self.fail(where, f"{value!r} is not one of {', '.join(choices)}")
        return value

    def lines(self, value: Any, where: str) -> tuple[str, ...]:
        if isinstance(value, str):
            return (value,)
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            raise self.fail(where, "a string or a list of strings is expected")
        return tuple(value)

    def optional(self, data: dict, key: str, read: Callable[[Any, str], Any], where: str) -> Any:
        value = data.get(key)
        return None if value is None else read(value, f"{where}.{key}")


def _read_cpu(r: _Reader, value: Any) -> Cpu:
    data = r.object(value, "cpu", ("core", "fpu", "mve", "dcache", "clock_hz", "security_state"), ("dcache_bytes",))
    cpu = Cpu(core=r.text(data["core"], "cpu.core"), fpu=r.flag(data["fpu"], "cpu.fpu"),
              mve=r.flag(data["mve"], "cpu.mve"), dcache=r.flag(data["dcache"], "cpu.dcache"),
              dcache_bytes=r.optional(data, "dcache_bytes", r.bytes, "cpu"),
              clock_hz=r.bytes(data["clock_hz"], "cpu.clock_hz"),
              security_state=r.choice(data["security_state"], _SECURITY, "cpu.security_state"))
    if cpu.dcache_bytes is not None and not cpu.dcache:
        raise r.fail("cpu.dcache_bytes", "a D-cache size, but cpu.dcache is false")
    return cpu


def _read_region(r: _Reader, value: Any, where: str) -> MemoryRegion:
    data = r.object(value, where, ("name", "origin", "size", "access", "npu_visible", "security"), ("alias",))
    name = r.text(data["name"], f"{where}.name")
    if not _REGION_NAME.match(name):
        raise r.fail(f"{where}.name", f"{name!r}: a region name is a C identifier (it names linker regions)")
    region = MemoryRegion(name=name, origin=r.bytes(data["origin"], f"{where}.origin"),
                          size=r.bytes(data["size"], f"{where}.size"),
                          access=r.choice(data["access"], ("r", "rw", "rx", "rwx"), f"{where}.access"),
                          npu_visible=r.flag(data["npu_visible"], f"{where}.npu_visible"),
                          security=r.choice(data["security"], _SECURITY, f"{where}.security"),
                          alias=r.optional(data, "alias", r.bytes, where))
    if region.size == 0 or region.end > 1 << 32:
        raise r.fail(where, f"region {name}: {region.size} bytes at 0x{region.origin:08X} is empty or past the "
                            "4 GiB address space")
    return region


def _read_memory(r: _Reader, value: Any) -> tuple[tuple[MemoryRegion, ...], Placement]:
    places = ("vectors", "code", "data", "sram_pools", "ddr_pools", "program")
    data = r.object(value, "memory", ("regions",) + places + ("stack_bytes", "heap_bytes"))
    if not isinstance(data["regions"], list) or not data["regions"]:
        raise r.fail("memory.regions", "a non-empty list of regions is expected")
    regions: list[MemoryRegion] = []
    for index, item in enumerate(data["regions"]):
        region = _read_region(r, item, f"memory.regions[{index}]")
        for other in regions:
            if other.name == region.name:
                raise r.fail("memory.regions", f"two regions are named {region.name}")
            if region.origin < other.end and other.origin < region.end:
                raise r.fail("memory.regions", f"regions {other.name} and {region.name} overlap")
        regions.append(region)
    names = [region.name for region in regions]
    for place in places:
        if r.text(data[place], f"memory.{place}") not in names:
            raise r.fail(f"memory.{place}", f"names region {data[place]!r}, which memory.regions does not have "
                                            f"({', '.join(names)})")
    placement = Placement(*(data[place] for place in places), stack_bytes=r.bytes(data["stack_bytes"],
                          "memory.stack_bytes"), heap_bytes=r.bytes(data["heap_bytes"], "memory.heap_bytes"))
    by_name = {region.name: region for region in regions}
    for place in ("vectors", "code"):
        if not by_name[getattr(placement, place)].executable:
            raise r.fail(f"memory.{place}", f"region {getattr(placement, place)} is not executable (access)")
    for place in ("data", "sram_pools", "ddr_pools"):
        if not by_name[getattr(placement, place)].writable:
            raise r.fail(f"memory.{place}", f"region {getattr(placement, place)} is not writable (access)")
    return tuple(regions), placement


def _read_npu(r: _Reader, value: Any, regions: dict[str, MemoryRegion], placement: Placement) -> Npu:
    data = r.object(value, "npu", ("families", "base", "security", "irq", "secure_mode", "privileged_mode",
                                   "device"), ("alias",))
    families = data["families"]
    if not isinstance(families, list) or not families:
        raise r.fail("npu.families", "a non-empty list is expected, e.g. [\"ethos-u55\", \"ethos-u65\"]")
    for family in families:
        r.choice(family, NPU_FAMILIES, "npu.families")
    irq = r.typed(data["irq"], int, "npu.irq", "an interrupt number")
    if not 0 <= irq < 480:
        raise r.fail("npu.irq", f"{irq}: an external interrupt number is 0 to 479")
    npu = Npu(families=tuple(families), base=r.bytes(data["base"], "npu.base"),
              security=r.choice(data["security"], _SECURITY, "npu.security"),
              alias=r.optional(data, "alias", r.bytes, "npu"), irq=irq,
              secure_mode=r.flag(data["secure_mode"], "npu.secure_mode"),
              privileged_mode=r.flag(data["privileged_mode"], "npu.privileged_mode"),
              device=r.choice(data["device"], ("model", "silicon"), "npu.device"))
    # The NPU reads the program's weights and command streams where the program is, and
    # works in the method allocator's scratch: in a pool region.
    for place in ("program", "sram_pools", "ddr_pools"):
        region = regions[getattr(placement, place)]
        if not region.npu_visible:
            raise r.fail(f"memory.{place}", f"region {region.name}, which the NPU cannot reach (npu_visible is "
                                            "false): the NPU reads the program and works in the pools")
    return npu


def _read_timer(r: _Reader, value: Any) -> Timer:
    kind = value.get("kind") if isinstance(value, dict) else None
    r.choice(kind, tuple(_TIMER_FIELDS), "timer.kind")
    data = r.object(value, "timer", ("kind", "hz") + _TIMER_FIELDS[kind])
    addresses = {key: r.bytes(data[key], f"timer.{key}") for key in _TIMER_FIELDS[kind]}
    return Timer(kind=kind, hz=r.bytes(data["hz"], "timer.hz"), **addresses)


def _read_uart(r: _Reader, value: Any) -> str:
    if value != "cmsdk-apb-uart":
        raise r.fail("console.uart", f"{value!r} is not one of cmsdk-apb-uart (the UART Kiln's board support drives)")
    return value


def _read_qemu(r: _Reader, value: Any) -> Qemu | None:
    if value is None:
        return None
    data = r.object(value, "qemu", ("machine", "cpu", "description"))
    return Qemu(machine=r.text(data["machine"], "qemu.machine"), cpu=r.text(data["cpu"], "qemu.cpu"),
                description=r.text(data["description"], "qemu.description"))


def parse_board(data: Any, path: Path | str) -> BoardProfile:
    """The board profile of an already decoded board file (``path`` names it in errors)."""
    r = _Reader(Path(path))
    top = r.object(data, "", ("kiln_board", "name", "description", "cpu", "memory", "console", "timer", "run"),
                   ("sources", "npu", "qemu"))
    if top["kiln_board"] != FORMAT_VERSION:
        raise r.fail("kiln_board", f"{top['kiln_board']!r}, but this Kiln reads board files of format "
                                   f"{FORMAT_VERSION}")
    name = r.text(top["name"], "name")
    if not _BOARD_NAME.match(name):
        raise r.fail("name", f"{name!r}: use letters, digits, '.', '_' and '-' (it names files)")
    regions, placement = _read_memory(r, top["memory"])
    by_name = {region.name: region for region in regions}
    console = r.object(top["console"], "console", ("uart", "base"))
    npu = None if top.get("npu") is None else _read_npu(r, top["npu"], by_name, placement)
    return BoardProfile(
        name=name, description=r.text(top["description"], "description"), path=Path(path),
        sources=r.lines(top.get("sources", []), "sources"), cpu=_read_cpu(r, top["cpu"]), regions=regions,
        placement=placement, npu=npu,
        console=Console(uart=_read_uart(r, console["uart"]),
                        base=r.bytes(console["base"], "console.base")),
        timer=_read_timer(r, top["timer"]), qemu=_read_qemu(r, top.get("qemu")), run=r.lines(top["run"], "run"))


def read_board_file(path: Path | str) -> BoardProfile:
    """Reads and checks one board file."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise BoardFileError(path, "", f"cannot be read ({error.strerror or error})") from None
    except json.JSONDecodeError as error:
        raise BoardFileError(path, "", f"not JSON: {error.msg} at line {error.lineno}, column {error.colno}") from None
    return parse_board(data, path)
