"""A board's facts, as its board file states them (format: docs/board-files.md).

Addresses and sizes are integers (bytes); region names are the board file's, which the
generated linker script uses too. Read one with :func:`kiln.boards.load_board`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from kiln import targets

#: The Ethos-U families a board's NPU may be (``npu.families``).
NPU_FAMILIES: tuple[str, ...] = tuple(targets.NPU_FAMILIES)


@dataclass(frozen=True)
class Cpu:
    """The board's core (``cpu``)."""

    #: e.g. ``cortex-m55``: what the board has; the firmware may be built for another core
    #: (kiln-deploy --cpu).
    core: str
    fpu: bool
    #: Helium (M-profile Vector Extension).
    mve: bool
    dcache: bool
    #: None where the board file does not give it (unknown, or no D-cache).
    dcache_bytes: int | None
    clock_hz: int
    #: ``secure``, ``non_secure`` or ``none`` (no TrustZone): the state the firmware runs in.
    security_state: str


@dataclass(frozen=True)
class MemoryRegion:
    """One region of ``memory.regions``."""

    name: str
    #: The address the firmware uses (and the linker script's ORIGIN).
    origin: int
    size: int
    #: ``r``, ``rw``, ``rx`` or ``rwx``.
    access: str
    #: The NPU's bus masters reach it.
    npu_visible: bool
    #: Whether ``origin`` is the secure or the non-secure alias (``none``: no TrustZone).
    security: str
    #: The same memory's address in the other security state, if the board file gives it.
    alias: int | None = None

    @property
    def end(self) -> int:
        return self.origin + self.size

    @property
    def executable(self) -> bool:
        return "x" in self.access

    @property
    def writable(self) -> bool:
        return "w" in self.access


@dataclass(frozen=True)
class Placement:
    """Which region holds what (``memory``): names of regions."""

    vectors: str
    code: str
    #: .data, .bss, the newlib heap and the stack.
    data: str
    #: Kiln's pools the memory manifest places in "SRAM" and in "DDR".
    sram_pools: str
    ddr_pools: str
    #: The embedded program, its inputs and expected outputs.
    program: str
    stack_bytes: int
    heap_bytes: int


@dataclass(frozen=True)
class Npu:
    """The board's Ethos-U (``npu``)."""

    #: The families this NPU may be (a board may carry one of several, e.g. U55 or U65).
    families: tuple[str, ...]
    #: The register base the driver programs.
    base: int
    #: Whether ``base`` is the secure or the non-secure alias (``none``: no TrustZone).
    security: str
    #: The registers' address in the other security state, if the board file gives it.
    alias: int | None
    irq: int
    #: The NPU's own transactions are Secure / privileged (the core driver's
    #: secure_enable / privilege_enable).
    secure_mode: bool
    privileged_mode: bool
    #: ``model``: Kiln's virtual NPU stands in for the device; ``silicon``: a real Ethos-U.
    device: str

    def allows(self, target: str) -> bool:
        """Whether a compile target (``ethos-u55-128``) is of one of this NPU's families."""
        return any(target == family or target.startswith(family + "-") for family in self.families)


@dataclass(frozen=True)
class Console:
    #: ``cmsdk-apb-uart``: the one Kiln's board support drives.
    uart: str
    base: int


@dataclass(frozen=True)
class Timer:
    #: ``sse-system-counter`` (control_base, read_base) or ``cmsdk-apb-timer`` (base).
    kind: str
    hz: int
    base: int | None = None
    control_base: int | None = None
    read_base: int | None = None


@dataclass(frozen=True)
class Qemu:
    """The QEMU machine that runs the board's firmware (``qemu``)."""

    machine: str
    #: The core QEMU emulates (``-cpu``'s default for the machine).
    cpu: str
    #: What runs, said plainly, e.g. "Corstone-300".
    description: str


@dataclass(frozen=True)
class BoardProfile:
    """Everything a board file says."""

    name: str
    description: str
    #: The board file.
    path: Path
    sources: tuple[str, ...]
    cpu: Cpu
    regions: tuple[MemoryRegion, ...]
    placement: Placement
    npu: Npu | None
    console: Console
    timer: Timer
    #: None: no QEMU machine runs this board's firmware (kiln-deploy only builds it).
    qemu: Qemu | None
    #: How to run the image, one line each; ``{elf}`` and ``{hex}`` stand for the files.
    run: tuple[str, ...] = field(default_factory=tuple)

    def region(self, name: str) -> MemoryRegion:
        return next(region for region in self.regions if region.name == name)

    @property
    def sram_pool_region(self) -> MemoryRegion:
        return self.region(self.placement.sram_pools)

    @property
    def ddr_pool_region(self) -> MemoryRegion:
        return self.region(self.placement.ddr_pools)

    @property
    def npu_visible_regions(self) -> tuple[MemoryRegion, ...]:
        return tuple(region for region in self.regions if region.npu_visible)
