"""The virtual NPU's own definitions checked against Vela's: command codes (Vela's
ethos_u55_regs register description) and the weight stream decoder (Vela's mlw_codec)."""

from __future__ import annotations

import numpy as np
import pytest

from ethosu import mlw_codec
from ethosu.vela.ethos_u55_regs import ethos_u55_regs as regs


@pytest.fixture(scope="module")
def runtime():
    from kiln import _runtime

    return _runtime


def test_command_codes_match_vela(runtime) -> None:
    ours = runtime.vnpu_command_codes()
    vela = {member.name: (0, member.value) for member in regs.cmd0}
    vela.update({member.name: (1, member.value) for member in regs.cmd1})
    assert ours == vela


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
