"""The virtual NPU's own definitions checked against Vela's: Ethos-U55/U65 command codes
(Vela's ethos_u55_regs register description), Ethos-U85 command codes (Vela's own
disassembly of the streams it compiles), and the weight stream decoder (Vela's mlw_codec)."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import ethosu.mlw_codec as mlw_codec
import ethosu.vela.ethos_u55_regs.ethos_u55_regs as regs


@pytest.fixture(scope="module")
def runtime():
    from kiln import _runtime

    return _runtime


def test_command_codes_match_vela(runtime) -> None:
    for target in ("ethos-u55-128", "ethos-u65-512"):
        ours = runtime.vnpu_command_codes(target)
        vela = {member.name: (0, member.value) for member in regs.cmd0}
        vela.update({member.name: (1, member.value) for member in regs.cmd1})
        assert ours == vela


# "0x00000c: 00000030 0000 4030 - NPU_SET_DMA0_SRC ...": the word's low half is the code,
# bit 14 marks cmd1.
_DISASSEMBLY_LINE = re.compile(r"^0x[0-9a-f]+:\s+(?:[0-9a-f]{8}\s+)?[0-9a-f]{4} ([0-9a-f]{4}) - (NPU_\w+)", re.M)


def _u85_cases() -> dict[str, Any]:
    name = "kiln_test_vnpu_u85_ops"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, Path(__file__).parent / "test_u85_ops_bitexact.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)  # type: ignore[union-attr]
    return sys.modules[name].CASES


def test_u85_command_codes_match_vela_disassembly(runtime, vnpu_tools: Any, capfd: pytest.CaptureFixture[str]) -> None:
    """Vela prints every command of the streams it compiles with the name its U85 register
    description gives the code; graphs that reach most of the command set are compiled
    in process with that listing on, and every (name, code) must be the vNPU's."""
    from ethosu import regor

    from kiln.backends.arm import EthosUCompileSpec

    spec = EthosUCompileSpec("ethos-u85-256")
    options = "\n[compiler]\nverbose_register_command_stream=true\noutput_format=Raw\ncop_format=COP1\n"
    cases = _u85_cases()
    for case in ("conv_stride4", "transpose_conv", "resize_bilinear_2x", "table_int16", "gather_batched",
                 "matmul", "greater", "reverse_w", "argmax_w"):
        graph = cases[case](vnpu_tools)
        regor.compile(spec.regor_accelerator, graph.serialize(), "TOSA", spec.regor_system_config(),
                      options=options, verbose=True)
    listing = capfd.readouterr().out
    seen = {name: (1 if int(word, 16) & 0x4000 else 0, int(word, 16) & 0x3ff)
            for word, name in _DISASSEMBLY_LINE.findall(listing)}
    assert len(seen) >= 60, f"only {len(seen)} distinct commands in Vela's listings"
    ours = runtime.vnpu_command_codes("ethos-u85-256")
    wrong = {name: (code, ours.get(name)) for name, code in seen.items() if ours.get(name) != code}
    assert not wrong, f"commands whose (is_cmd1, code) differ from Vela's: {wrong}"


def test_field_encodings_match_vela() -> None:
    # Values that the C++ enums in commands.h hard-code.
    assert [m.value for m in regs.elementwise_mode] == list(range(10))
    assert [m.name for m in regs.elementwise_mode][:6] == ["MUL", "ADD", "SUB", "MIN", "MAX", "LRELU"]
    assert {m.name: m.value for m in regs.pooling_mode} == {"MAX": 0, "AVERAGE": 1, "REDUCE_SUM": 2}
    assert {m.name: m.value for m in regs.rounding} == {"TFL": 0, "TRUNCATE": 1, "NATURAL": 2}
    assert {m.name: m.value for m in regs.resampling_mode} == {"NONE": 0, "NEAREST": 1, "TRANSPOSE": 2}
    assert {m.name: m.value for m in regs.ifm_precision} == {"U8": 0, "S8": 1, "U16": 4, "S16": 5, "S32": 9}
    assert {m.name: m.value for m in regs.ofm_precision} == {"U8": 0, "S8": 1, "U16": 2, "S16": 3, "S32": 5}
    assert regs.activation.LUT_START.value == 16 and regs.activation.LUT_END.value == 23
    # Command word layout: 10-bit code, payload size in bits 14-15, 16-bit parameter.
    fields = dict((name, bits) for name, _, bits in regs.command_with_payload_t._fields_)
    assert fields == {"cmd_code": 10, "must_be_zero": 4, "payload_size": 2, "param": 16, "data": 32}


def _weights(rng: np.random.Generator, n: int, kind: str) -> list[int]:
    if kind == "sparse":
        w = rng.integers(-30, 30, n) * (rng.random(n) < 0.2)
    elif kind == "palette":
        w = rng.choice([-7, -1, 0, 3, 12, 100], n)
    elif kind == "wide":
        w = rng.integers(-255, 256, n)
    else:
        w = np.zeros(n, np.int64)
    return [int(v) for v in w]


@pytest.mark.parametrize("kind", ["sparse", "palette", "wide", "zeros"])
@pytest.mark.parametrize("n", [1, 37, 1000, 40000])
def test_weight_decoder_matches_mlw_codec(runtime, kind: str, n: int) -> None:
    rng = np.random.default_rng(n)
    weights = _weights(rng, n, kind)
    stream = bytes(mlw_codec.encode(weights))
    expected = [int(v) for v in mlw_codec.decode(bytearray(stream))]
    assert expected == weights
    assert runtime.vnpu_decode_weights(stream, n + 64) == expected


def test_weight_decoder_rejects_garbage(runtime) -> None:
    from kiln.runtime.errors import KilnRuntimeError

    stream = bytes(mlw_codec.encode([1, 2, 3, 4] * 50))
    with pytest.raises(KilnRuntimeError) as caught:
        runtime.vnpu_decode_weights(stream[:5], 200)  # truncated mid-slice
    assert caught.value.error_name == "NpuWeightStreamInvalid"
