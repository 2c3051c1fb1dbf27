"""The targets Kiln compiles for: one table, and the checks and suggestions for their names.

Ethos-U NPUs (``ethos-u55-128``: family and MAC count, as Vela's ``--accelerator-config``
names them) and Cortex-M CPUs without an NPU (``cortex-m55``). Every backend and command
takes its target facts from here; the virtual NPU's C++ copy of the NPU table
(``backends/arm/vnpu/virtual_npu.cpp``) is checked against it by a test.

Default Vela system configuration and memory mode per family (why):

============  ================================  ==============  =====================================
family        system config                     memory mode     note
============  ================================  ==============  =====================================
ethos-u55     Ethos_U55_High_End_Embedded       Shared_Sram     as ExecuTorch and Vela do
ethos-u65     Ethos_U65_High_End                Shared_Sram     ExecuTorch: Dedicated_Sram_384KB
ethos-u85     Ethos_U85_SYS_DRAM_Mid            Shared_Sram     ExecuTorch: Sram_Only
============  ================================  ==============  =====================================

Shared_Sram on every target keeps one memory layout everywhere: weights and the
command stream stay in read-only memory (flash or DRAM, AXI1) and the tensor arena in
SRAM (AXI0), so a program needs no NPU-private cache region. Dedicated_Sram* (U65/U85:
arena in DRAM, SRAM used as a cache) and Sram_Only are one argument away.
"""

from __future__ import annotations

import difflib
import math
import re

from dataclasses import dataclass

from kiln import KilnError


@dataclass(frozen=True)
class NpuFamily:
    """An Ethos-U generation and the Vela configuration Kiln compiles for by default."""

    name: str  # "ethos-u55"
    system_config: str  # Vela's default system configuration for the family
    memory_mode: str  # and memory mode


@dataclass(frozen=True)
class NpuTarget:
    """One Ethos-U configuration: its family, MACs per cycle and NPU cores."""

    name: str  # "ethos-u55-128", Vela's --accelerator-config
    family: str
    macs: int
    cores: int  # cores of the configuration (the virtual NPU runs as many)


@dataclass(frozen=True)
class CpuTarget:
    """A Cortex-M CPU without an NPU (int8 programs run on its cortex_m:: kernels)."""

    name: str  # "cortex-m55"
    preset: str = ""  # the CMake configure preset of its firmware (CMakePresets.json); "": none
    board: str = ""  # the shipped board whose QEMU machine runs its firmware; "": none
    deploy: bool = False  # kiln-deploy builds firmware for it (the others: Cortex-M kernel runs only)


NPU_FAMILIES: dict[str, NpuFamily] = {family.name: family for family in (
    NpuFamily("ethos-u55", "Ethos_U55_High_End_Embedded", "Shared_Sram"),
    NpuFamily("ethos-u65", "Ethos_U65_High_End", "Shared_Sram"),
    NpuFamily("ethos-u85", "Ethos_U85_SYS_DRAM_Mid", "Shared_Sram"),
)}

NPU_TARGETS: tuple[NpuTarget, ...] = (
    NpuTarget("ethos-u55-32", "ethos-u55", 32, 1),
    NpuTarget("ethos-u55-64", "ethos-u55", 64, 1),
    NpuTarget("ethos-u55-128", "ethos-u55", 128, 1),
    NpuTarget("ethos-u55-256", "ethos-u55", 256, 1),
    NpuTarget("ethos-u65-256", "ethos-u65", 256, 1),
    NpuTarget("ethos-u65-512", "ethos-u65", 512, 2),
    NpuTarget("ethos-u85-128", "ethos-u85", 128, 1),
    NpuTarget("ethos-u85-256", "ethos-u85", 256, 1),
    NpuTarget("ethos-u85-512", "ethos-u85", 512, 2),
    NpuTarget("ethos-u85-1024", "ethos-u85", 1024, 4),
    NpuTarget("ethos-u85-2048", "ethos-u85", 2048, 4),
)

#: The Ethos-U target names, smallest family and configuration first.
TARGETS: tuple[str, ...] = tuple(target.name for target in NPU_TARGETS)

#: The target the command-line tools compile for when none is given.
DEFAULT_TARGET = "ethos-u55-128"

#: CPUs without an NPU: int8 programs for them run on the cortex_m:: kernels
#: (kiln.backends.cortex_m), DSP-accelerated on the M4/M7/M33, Helium on the M55/M85.
CPU_TARGETS: tuple[CpuTarget, ...] = (
    CpuTarget("cortex-m4", "arm-baremetal-m4", "mps2-an386"),  # the MPS2 boards' DSP cores
    CpuTarget("cortex-m7"),
    CpuTarget("cortex-m33", "arm-baremetal-m33", "mps2-an505"),
    CpuTarget("cortex-m55", "arm-baremetal", "corstone-300", deploy=True),
    CpuTarget("cortex-m85", "arm-baremetal-m85", deploy=True),
)
CORTEX_M_TARGETS: tuple[str, ...] = tuple(target.name for target in CPU_TARGETS)
DEFAULT_CORTEX_M_TARGET = "cortex-m55"


class CompileSpecError(KilnError, ValueError):
    """An Ethos-U compile spec names something Vela's configuration does not have."""


class TargetError(CompileSpecError):
    """The target is not one of the Ethos-U accelerator configurations Vela knows."""


def cpu_target(name: str) -> CpuTarget:
    """The table's row for Cortex-M target ``name`` (a TargetError with a suggestion for any other)."""
    for target in CPU_TARGETS:
        if target.name == name:
            return target
    return cpu_target(check_cortex_m_target(name))


def family_of(target: str) -> str:
    """The family part of an Ethos-U target name: ``"ethos-u55-128"`` -> ``"ethos-u55"``."""
    return target.rsplit("-", 1)[0]


def macs_of(target: str) -> int:
    """The MACs per cycle an Ethos-U target name gives: ``"ethos-u55-128"`` -> 128."""
    return int(target.rsplit("-", 1)[1])


def is_cortex_m_name(name: str) -> bool:
    """True for what reads as a Cortex-M CPU name, valid or not ("cortex-m56", "m55")."""
    return re.match(r"(cortex[-_ ]?)?m\s*\d+", name.strip().lower()) is not None or "cortex" in name.lower()


def nearest_cortex_m(name: str) -> str | None:
    """The Cortex-M target a mistyped name most likely means: the same digits (in any
    order), else the nearest number (``cortex-m56`` -> ``cortex-m55``, ``m3`` -> ``cortex-m4``)."""
    match = re.search(r"m\s*(\d+)", name.lower())
    if match is None:
        close = difflib.get_close_matches(name.lower(), CORTEX_M_TARGETS, n=1, cutoff=0.6)
        return close[0] if close else None
    numbers = [int(t.rsplit("m", 1)[1]) for t in CORTEX_M_TARGETS]
    digits = match.group(1)
    same = [n for n in numbers if sorted(str(n)) == sorted(digits)]
    return f"cortex-m{same[0] if same else min(numbers, key=lambda n: abs(n - int(digits)))}"


def suggest_target(name: str) -> str | None:
    """The valid target (Ethos-U or Cortex-M) a mistyped ``name`` most likely means."""
    return nearest_cortex_m(name) if is_cortex_m_name(name) else nearest_target(name)


def check_cortex_m_target(name: str) -> str:
    """``name`` if it is one of CORTEX_M_TARGETS, else a TargetError with a suggestion."""
    if name in CORTEX_M_TARGETS:
        return name
    close = suggest_target(name)
    hint = f" Did you mean {close!r}?" if close else ""
    raise TargetError(f"unknown Cortex-M target {name!r}.{hint} Valid Cortex-M targets: {', '.join(CORTEX_M_TARGETS)}")


def nearest_target(name: str) -> str | None:
    """The real configuration a mistyped target most likely means.

    The family is the two digits after "u" (the nearest of 55/65/85 if they name none),
    the MAC count the family's nearest by ratio -- unless the digits are a valid count's
    in another order (a transposition). ``ethos-u85-129`` -> ``ethos-u85-128``,
    ``ethos-u55-218`` -> ``ethos-u55-128``, ``u65_500`` -> ``ethos-u65-512``. Names with no
    family and count in them fall back to spelling (difflib).
    """
    match = re.search(r"u\s*(\d{2})\D+(\d+)", name.lower())
    if match is None:
        close = difflib.get_close_matches(name.lower(), TARGETS, n=1, cutoff=0.6)
        return close[0] if close else None
    family = min(sorted(NPU_FAMILIES), key=lambda f: abs(int(f[-2:]) - int(match.group(1))))
    counts = [t.macs for t in NPU_TARGETS if t.family == family]
    given = int(match.group(2))
    same_digits = [c for c in counts if sorted(str(c)) == sorted(match.group(2).lstrip("0") or "0")]
    if same_digits:
        return f"{family}-{same_digits[0]}"
    return f"{family}-{min(counts, key=lambda c: abs(math.log(c / max(given, 1))))}"
