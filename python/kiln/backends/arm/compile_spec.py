"""What to compile for: one Ethos-U target, its system configuration and memory mode.

``EthosUCompileSpec("ethos-u55-128")`` is all most users write; the system
configuration and memory mode default from the target, and every name is checked
against Vela's own configuration file (``vela.ini`` shipped with ethos-u-vela, or the
file given as ``config_ini``), so a typo fails here, with the valid names, rather
than deep inside Vela.

The defaults per family, and why, are in :mod:`kiln.targets` (``NPU_FAMILIES``).

A memory mode is available on a system configuration when Vela would accept the
placement it implies: constants in Dram/OnChipFlash/OffChipFlash, the arena in
Sram/Dram, the cache in Sram (the rules of Vela's ``architecture_features``). On a
U55 system (AXI1 = flash) that rules out Dedicated_Sram, whose arena would be flash.
"""

from __future__ import annotations

import configparser
import difflib
import functools
import importlib.util
from dataclasses import dataclass, field
from pathlib import Path

from kiln.targets import (
    CORTEX_M_TARGETS,
    NPU_FAMILIES,
    TARGETS,
    CompileSpecError,
    TargetError,
    family_of,
    macs_of,
    suggest_target,
)

# Flags that the spec's own fields produce; giving them in extra_flags would be ambiguous.
_FIELD_FLAGS = {
    "--accelerator-config": "target",
    "--system-config": "system_config",
    "--memory-mode": "memory_mode",
    "--config": "config_ini",
}

_SYSTEM_PREFIX = "System_Config."
_MEMORY_PREFIX = "Memory_Mode."


def _did_you_mean(name: str, valid: list[str] | tuple[str, ...]) -> str:
    close = difflib.get_close_matches(name, valid, n=1, cutoff=0.6)
    return f" Did you mean {close[0]!r}?" if close else ""


def default_vela_ini() -> Path:
    """The ``Arm/vela.ini`` shipped with ethos-u-vela (found without importing Vela)."""
    spec = importlib.util.find_spec("ethosu")
    if spec is None or not spec.submodule_search_locations:
        raise CompileSpecError(
            "ethos-u-vela is not installed, so its vela.ini cannot be read: install it "
            "(pip install ethos-u-vela) or pass config_ini=Path('your/vela.ini')"
        )
    for location in spec.submodule_search_locations:
        candidate = Path(location) / "config_files" / "Arm" / "vela.ini"
        if candidate.is_file():
            return candidate
    raise CompileSpecError(
        f"ethos-u-vela has no config_files/Arm/vela.ini under {list(spec.submodule_search_locations)}; "
        "pass config_ini explicitly"
    )


@dataclass(frozen=True)
class VelaConfig:
    """The sections of one Vela configuration file that a compile spec checks names against."""

    path: Path
    system_configs: dict[str, dict[str, str]]
    memory_modes: dict[str, dict[str, str]]  # 'inherit=' already resolved


@functools.lru_cache(maxsize=8)
def read_vela_config(path: Path) -> VelaConfig:
    """Parses a Vela ``.ini`` file; raises CompileSpecError if it is missing or malformed."""
    if not path.is_file():
        raise CompileSpecError(f"Vela configuration file {str(path)!r} does not exist")
    parser = configparser.ConfigParser()
    try:
        parser.read(path, encoding="utf-8")
    except configparser.Error as error:
        raise CompileSpecError(f"cannot parse Vela configuration file {str(path)!r}: {error}") from None

    def resolved(section: str, seen: tuple[str, ...] = ()) -> dict[str, str]:
        if section in seen:
            raise CompileSpecError(f"{path}: circular 'inherit' through {' -> '.join(seen + (section,))}")
        if not parser.has_section(section):
            raise CompileSpecError(f"{path}: section [{seen[-1]}] inherits missing section [{section}]")
        values = dict(parser.items(section))
        parent = values.pop("inherit", None)
        return {**resolved(parent, seen + (section,)), **values} if parent else values

    systems = {s[len(_SYSTEM_PREFIX):]: resolved(s) for s in parser.sections() if s.startswith(_SYSTEM_PREFIX)}
    memories = {s[len(_MEMORY_PREFIX):]: resolved(s) for s in parser.sections() if s.startswith(_MEMORY_PREFIX)}
    return VelaConfig(path=path, system_configs=systems, memory_modes=memories)


def memory_mode_problem(system: dict[str, str], memory: dict[str, str]) -> str | None:
    """Why Vela would reject this memory mode on this system config, or None if it fits.

    Memory modes place constants, the arena and the cache on AXI ports; the system
    config says which memory sits on each port.
    """
    ports = {"axi0": system.get("axi0_port", "Sram"), "axi1": system.get("axi1_port", "Sram")}
    areas = {role: ports.get(memory.get(f"{role}_mem_area", "Axi0").lower(), "?")
             for role in ("const", "arena", "cache")}
    if areas["const"] == "Sram" and len({memory.get(f"{r}_mem_area") for r in areas}) == 1:
        areas["const"] = "OnChipFlash"  # Vela's Sram_Only rule: SRAM-resident constants act as on-chip flash
    if areas["const"] not in ("Dram", "OnChipFlash", "OffChipFlash"):
        return f"constants would be in {areas['const']} (needs Dram, OnChipFlash or OffChipFlash)"
    if areas["arena"] not in ("Sram", "Dram"):
        return f"the tensor arena would be in {areas['arena']} (needs Sram or Dram)"
    if areas["cache"] != "Sram":
        return f"the cache would be in {areas['cache']} (needs Sram)"
    return None


@dataclass(frozen=True)
class EthosUCompileSpec:
    """An Ethos-U target with its Vela system configuration and memory mode.

    Attributes:
        target: Vela accelerator configuration, e.g. ``"ethos-u55-128"`` (see TARGETS).
        system_config: section name in the Vela ini (without ``System_Config.``);
            None picks the target's default. After construction it holds the name used.
        memory_mode: section name in the Vela ini (without ``Memory_Mode.``); None picks
            the default. After construction it holds the name used.
        extra_flags: further Vela command-line flags, e.g. ``("--optimise=Size",)``.
        config_ini: a Vela ini file to use instead of the one shipped with Vela.
    """

    target: str
    system_config: str | None = None
    memory_mode: str | None = None
    extra_flags: tuple[str, ...] = field(default=())
    config_ini: Path | None = None

    def __post_init__(self) -> None:
        target = str(self.target).strip().lower()
        if target in CORTEX_M_TARGETS:
            raise TargetError(f"{target} is a CPU without an NPU, not an Ethos-U target: its int8 programs run on "
                              f"the cortex_m:: kernels (kiln-aot --target {target} --quantize, without --delegate)")
        if target not in TARGETS:
            guess = suggest_target(target)
            hint = f" Did you mean {guess!r}?" if guess else ""
            raise TargetError(f"unknown Ethos-U target {self.target!r}.{hint} Valid targets: {', '.join(TARGETS)}"
                              f" (CPUs without an NPU: {', '.join(CORTEX_M_TARGETS)})")
        object.__setattr__(self, "target", target)
        if self.config_ini is not None:
            object.__setattr__(self, "config_ini", Path(self.config_ini))
        object.__setattr__(self, "extra_flags", self._checked_extra_flags(self.extra_flags))
        config = self.vela_config()
        family = NPU_FAMILIES[self.arch]
        default_system, default_memory = family.system_config, family.memory_mode
        system = self._checked_system_config(config, self.system_config or default_system)
        object.__setattr__(self, "system_config", system)
        memory = self._checked_memory_mode(config, self.memory_mode or default_memory)
        object.__setattr__(self, "memory_mode", memory)

    # ----------------------------------------------------------------- validation
    @staticmethod
    def _checked_extra_flags(flags: object) -> tuple[str, ...]:
        if isinstance(flags, str):
            flags = tuple(flags.split())
        checked = tuple(flags)  # type: ignore[arg-type]
        for flag in checked:
            if not isinstance(flag, str) or not flag.startswith("--"):
                raise CompileSpecError(f"extra Vela flag {flag!r} must be a string starting with '--'")
            name = flag.split("=", 1)[0]
            if name in _FIELD_FLAGS:
                raise CompileSpecError(
                    f"extra Vela flag {flag!r} duplicates the compile spec field "
                    f"{_FIELD_FLAGS[name]!r}; set that field instead"
                )
        return checked

    def _family_system_configs(self, config: VelaConfig) -> list[str]:
        """System configs this target may use: its own family's, plus unprefixed custom ones."""
        family = "Ethos_U" + self.arch[-2:]  # "ethos-u55" -> "Ethos_U55"
        families = tuple("Ethos_U" + name[-2:] for name in NPU_FAMILIES)
        return [name for name in config.system_configs
                if name.startswith(family) or not name.startswith(families)]

    def _checked_system_config(self, config: VelaConfig, name: str) -> str:
        allowed = self._family_system_configs(config)
        if name in allowed:
            return name
        if name in config.system_configs:
            raise CompileSpecError(
                f"system config {name!r} is for another Ethos-U family than {self.target}; "
                f"valid for {self.target}: {', '.join(allowed)}"
            )
        raise CompileSpecError(
            f"unknown system config {name!r} in {config.path}.{_did_you_mean(name, allowed)} "
            f"Valid for {self.target}: {', '.join(allowed)}"
        )

    def _checked_memory_mode(self, config: VelaConfig, name: str) -> str:
        system = config.system_configs[self.system_config]  # type: ignore[index]
        available = [m for m, values in config.memory_modes.items() if memory_mode_problem(system, values) is None]
        if name not in config.memory_modes:
            raise CompileSpecError(
                f"unknown memory mode {name!r} in {config.path}.{_did_you_mean(name, list(config.memory_modes))} "
                f"Valid for {self.target} with {self.system_config}: {', '.join(available)}"
            )
        problem = memory_mode_problem(system, config.memory_modes[name])
        if problem is not None:
            raise CompileSpecError(
                f"memory mode {name!r} is not available on {self.target} with system config "
                f"{self.system_config!r}: {problem}. Available: {', '.join(available)}"
            )
        return name

    # ----------------------------------------------------------------- properties
    @property
    def arch(self) -> str:
        """Accelerator family: ``"ethos-u55"``, ``"ethos-u65"`` or ``"ethos-u85"``."""
        return family_of(self.target)

    @property
    def macs(self) -> int:
        """MACs per cycle of the configuration (the number after the family)."""
        return macs_of(self.target)

    @property
    def is_u55(self) -> bool:
        return self.arch == "ethos-u55"

    @property
    def is_u65(self) -> bool:
        return self.arch == "ethos-u65"

    @property
    def is_u85(self) -> bool:
        return self.arch == "ethos-u85"

    @property
    def tosa_profile(self) -> str:
        """The TOSA version and profile Kiln lowers to for every Ethos-U target."""
        return "TOSA-1.0+INT"

    @property
    def tosa_spec(self) -> str:
        """The TOSA specification string as ExecuTorch 1.5.1 writes it into compile specs.

        ExecuTorch names the int16 and int4 extensions for every Ethos-U target, whatever
        the program uses (its a16w8 programs and int8 ones alike); ``+u55`` marks the
        U55/U65 operator subset (U65 shares U55's NPU core rules), ``+cf`` the U85's
        control flow.
        """
        return self.tosa_profile + "+int16+int4" + ("+cf" if self.is_u85 else "+u55")

    @property
    def config_path(self) -> Path:
        """The Vela ini file the names were checked against."""
        return self.config_ini if self.config_ini is not None else default_vela_ini()

    @property
    def regor_accelerator(self) -> str:
        """The accelerator name as Vela's compiled core wants it (``"EthosU55"``)."""
        return "".join(part.capitalize() for part in self.arch.split("-"))

    @property
    def core_clock_hz(self) -> float:
        """NPU clock of the system config (turns cycle estimates into time)."""
        return float(self.vela_config().system_configs[self.system_config].get("core_clock", "1"))  # type: ignore[index]

    @property
    def arena_cache_size(self) -> int | None:
        """The memory mode's ``arena_cache_size`` (bytes), None when it does not set one."""
        value = self.vela_config().memory_modes[self.memory_mode].get("arena_cache_size")  # type: ignore[index]
        return int(value) if value is not None else None

    def vela_config(self) -> VelaConfig:
        return read_vela_config(self.config_path.resolve())

    # ----------------------------------------------------------------- outputs
    def vela_args(self) -> list[str]:
        """Vela command-line flags for this spec (no input file, no output format)."""
        return [
            f"--accelerator-config={self.target}",
            f"--system-config={self.system_config}",
            f"--memory-mode={self.memory_mode}",
            f"--config={self.config_path}",
            *self.extra_flags,
        ]

    def regor_system_config(self) -> str:
        """The configuration text Vela's compiled core takes (as Vela's CLI builds it: an
        Ethos-U65-512 is two cores of 256 MACs; an Ethos-U85 derives its cores from the MACs)."""
        macs, cores = (256, 2) if self.target == "ethos-u65-512" else (self.macs, 1)
        header = (
            f"[architecture]\nmacs={macs}\ncores={cores}\n"
            f"[vela]\nsystem_config_name={self.system_config}\nmemory_mode_name={self.memory_mode}\n"
        )
        return header + self.config_path.read_text(encoding="utf-8")

    def to_compile_specs(self) -> list[tuple[str, bytes]]:
        """(key, value) pairs as ExecuTorch 1.5.1 stores them on an EthosUBackend delegate.

        Same keys, order and flag order as ExecuTorch; ``--config`` names the ini file
        as ExecuTorch does (``Arm/vela.ini``, relative to Vela's config_files folder)
        unless a custom file was given.
        """
        config = "Arm/vela.ini" if self.config_ini is None else str(self.config_ini)
        flags = [
            *self.extra_flags,
            f"--accelerator-config={self.target}",
            f"--config={config}",
            "--output-format=raw",
            f"--system-config={self.system_config}",
            f"--memory-mode={self.memory_mode}",
        ]
        return [
            ("tosa_spec", self.tosa_spec.encode()),
            ("compile_flags", " ".join(flags).encode()),
            ("output_format", b"vela"),
            ("preserve_io_quantization", b"False"),
            ("target", self.target.encode()),
        ]

    def __str__(self) -> str:
        extra = f" {' '.join(self.extra_flags)}" if self.extra_flags else ""
        return f"{self.target} ({self.system_config}, {self.memory_mode}){extra}"
