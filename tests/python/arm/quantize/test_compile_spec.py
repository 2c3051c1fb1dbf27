"""EthosUCompileSpec: defaults per target, names checked against Vela's own ini, errors
that name the valid choices. Vela's ArchitectureFeatures is the independent judge of
which system config / memory mode combinations are valid."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from kiln import KilnError
from kiln.backends.arm import TARGETS, CompileSpecError, EthosUCompileSpec, TargetError
from kiln.backends.arm.compile_spec import default_vela_ini, read_vela_config

ALL_TARGETS = [
    "ethos-u55-32", "ethos-u55-64", "ethos-u55-128", "ethos-u55-256", "ethos-u65-256", "ethos-u65-512",
    "ethos-u85-128", "ethos-u85-256", "ethos-u85-512", "ethos-u85-1024", "ethos-u85-2048",
]


def _vela_accepts(target: str, system_config: str, memory_mode: str, ini: Path) -> bool:
    """Vela's own configuration reader decides (raises on an invalid combination)."""
    from ethosu.vela.architecture_features import ArchitectureFeatures
    from ethosu.vela.errors import VelaError

    try:
        ArchitectureFeatures([str(ini)], target, system_config, memory_mode, None, False, None)
    except VelaError:
        return False
    return True


def test_targets_are_vela_accelerators() -> None:
    from ethosu.vela.architecture_features import Accelerator

    assert list(TARGETS) == ALL_TARGETS
    assert set(TARGETS) == set(Accelerator.member_list())


@pytest.mark.parametrize("target", ALL_TARGETS)
def test_defaults_are_valid_for_vela(target: str) -> None:
    spec = EthosUCompileSpec(target)
    family = target.rsplit("-", 1)[0]
    assert spec.arch == family
    assert spec.macs == int(target.rsplit("-", 1)[1])
    assert [spec.is_u55, spec.is_u65, spec.is_u85] == [family == f"ethos-u{n}" for n in (55, 65, 85)]
    assert spec.system_config.startswith("Ethos_U" + family[-2:])
    assert spec.memory_mode == "Shared_Sram"
    assert spec.tosa_profile == "TOSA-1.0+INT"
    assert _vela_accepts(target, spec.system_config, spec.memory_mode, spec.config_path)


def test_default_system_configs_match_executorch() -> None:
    assert EthosUCompileSpec("ethos-u55-128").system_config == "Ethos_U55_High_End_Embedded"
    assert EthosUCompileSpec("ethos-u65-256").system_config == "Ethos_U65_High_End"
    assert EthosUCompileSpec("ethos-u85-256").system_config == "Ethos_U85_SYS_DRAM_Mid"


@pytest.mark.parametrize("target", ["ethos-u55-128", "ethos-u65-512", "ethos-u85-1024"])
def test_every_accepted_memory_mode_is_accepted_by_vela_and_vice_versa(target: str) -> None:
    config = read_vela_config(default_vela_ini().resolve())
    family = "Ethos_U" + target.split("-")[1][1:]
    for system, memory in itertools.product(config.system_configs, config.memory_modes):
        if not system.startswith(family):
            continue
        vela = _vela_accepts(target, system, memory, default_vela_ini())
        try:
            EthosUCompileSpec(target, system, memory)
            kiln_accepts = True
        except CompileSpecError:
            kiln_accepts = False
        assert kiln_accepts == vela, (target, system, memory)


def test_unknown_target_suggests_the_closest() -> None:
    with pytest.raises(TargetError, match=r"Did you mean 'ethos-u55-128'.*ethos-u85-2048") as info:
        EthosUCompileSpec("ethos-u55-218")
    assert isinstance(info.value, KilnError)


def test_target_is_normalised() -> None:
    assert EthosUCompileSpec(" Ethos-U85-256 ").target == "ethos-u85-256"


def test_system_config_typo_suggests_and_lists() -> None:
    with pytest.raises(CompileSpecError, match=r"Did you mean 'Ethos_U55_High_End_Embedded'.*Ethos_U55_Deep_Embedded"):
        EthosUCompileSpec("ethos-u55-128", system_config="Ethos_U55_HighEnd_Embedded")


def test_system_config_of_another_family_is_rejected() -> None:
    with pytest.raises(CompileSpecError, match="another Ethos-U family.*Ethos_U85_SYS_DRAM_Mid"):
        EthosUCompileSpec("ethos-u85-256", system_config="Ethos_U55_High_End_Embedded")


def test_memory_mode_typo_suggests() -> None:
    with pytest.raises(CompileSpecError, match="Did you mean 'Dedicated_Sram_384KB'"):
        EthosUCompileSpec("ethos-u65-256", memory_mode="Dedicated_Sram_384kb")


def test_memory_mode_not_available_on_target_says_why() -> None:
    with pytest.raises(CompileSpecError, match=r"not available on ethos-u55-128.*arena.*OffChipFlash.*Available: Sram_Only, Shared_Sram"):
        EthosUCompileSpec("ethos-u55-128", memory_mode="Dedicated_Sram")
    assert EthosUCompileSpec("ethos-u65-256", memory_mode="Dedicated_Sram").memory_mode == "Dedicated_Sram"
    assert EthosUCompileSpec("ethos-u85-256", memory_mode="Dedicated_Sram_512KB").arena_cache_size == 524288


def test_vela_args_and_extra_flags() -> None:
    spec = EthosUCompileSpec("ethos-u85-512", memory_mode="Sram_Only", extra_flags=["--optimise=Size"])
    assert spec.extra_flags == ("--optimise=Size",)
    assert spec.vela_args() == [
        "--accelerator-config=ethos-u85-512",
        "--system-config=Ethos_U85_SYS_DRAM_Mid",
        "--memory-mode=Sram_Only",
        f"--config={default_vela_ini()}",
        "--optimise=Size",
    ]
    hash(spec)  # frozen dataclass: usable as a cache key


@pytest.mark.parametrize("flag", ["--memory-mode=Sram_Only", "--config=x.ini", "optimise=Size"])
def test_bad_extra_flags(flag: str) -> None:
    with pytest.raises(CompileSpecError, match="extra Vela flag"):
        EthosUCompileSpec("ethos-u55-128", extra_flags=(flag,))


def test_compile_specs_have_executorch_keys_and_flags() -> None:
    specs = dict(EthosUCompileSpec("ethos-u55-128").to_compile_specs())
    assert list(specs) == ["tosa_spec", "compile_flags", "output_format", "preserve_io_quantization", "target"]
    assert specs["compile_flags"] == (
        b"--accelerator-config=ethos-u55-128 --config=Arm/vela.ini --output-format=raw "
        b"--system-config=Ethos_U55_High_End_Embedded --memory-mode=Shared_Sram"
    )
    assert specs["output_format"] == b"vela" and specs["target"] == b"ethos-u55-128"
    # ExecuTorch 1.5.1's EthosUCompileSpec._tosa_spec_for_target: int16 and int4 always named.
    assert specs["tosa_spec"] == b"TOSA-1.0+INT+int16+int4+u55"
    assert dict(EthosUCompileSpec("ethos-u65-256").to_compile_specs())["tosa_spec"] == b"TOSA-1.0+INT+int16+int4+u55"
    assert dict(EthosUCompileSpec("ethos-u85-128").to_compile_specs())["tosa_spec"] == b"TOSA-1.0+INT+int16+int4+cf"


def test_custom_config_ini(tmp_path: Path) -> None:
    ini = tmp_path / "board.ini"
    ini.write_text(
        "[System_Config.My_Board]\ncore_clock=400e6\naxi0_port=Sram\naxi1_port=OffChipFlash\n"
        "[Memory_Mode.My_Shared]\ninherit=Memory_Mode.Base\n"
        "[Memory_Mode.Base]\nconst_mem_area=Axi1\narena_mem_area=Axi0\ncache_mem_area=Axi0\n"
    )
    spec = EthosUCompileSpec("ethos-u55-64", "My_Board", "My_Shared", config_ini=ini)
    assert spec.core_clock_hz == 400e6
    assert f"--config={ini}" in spec.vela_args()
    assert _vela_accepts("ethos-u55-64", "My_Board", "My_Shared", ini)
    with pytest.raises(CompileSpecError, match="unknown system config.*Valid for ethos-u55-64: My_Board"):
        EthosUCompileSpec("ethos-u55-64", config_ini=ini)  # the default name is not in this file
    with pytest.raises(CompileSpecError, match="does not exist"):
        EthosUCompileSpec("ethos-u55-64", config_ini=tmp_path / "missing.ini")


def test_regor_system_config_names_the_choice() -> None:
    spec = EthosUCompileSpec("ethos-u65-512")
    text = spec.regor_system_config()
    # Vela describes an Ethos-U65-512 as two 256-MAC cores (its CLI's architecture table).
    assert text.startswith("[architecture]\nmacs=256\ncores=2\n")
    assert "system_config_name=Ethos_U65_High_End" in text and "[System_Config.Ethos_U65_High_End]" in text
    assert spec.regor_accelerator == "EthosU65"
