"""The delegate payload: Kiln's pack/unpack and ExecuTorch's EthosUBackend format."""

from __future__ import annotations

import struct
import subprocess
from pathlib import Path

import pytest

from kiln.backends.arm.payload import BLOCK_ORDER, PayloadError, pack, unpack
from kiln.backends.arm.vela import compile_tosa

WORKER = Path(__file__).with_name("et_pack_worker.py")


@pytest.fixture(scope="module")
def vela_result(tosa_of, specs):
    return compile_tosa(tosa_of("conv_relu").flatbuffer, specs["ethos-u55-128"], name="conv_relu")


def test_round_trip(vela_result) -> None:
    blob = pack(vela_result)
    assert len(blob) % 16 == 0
    parsed = unpack(blob)
    assert list(parsed.blocks) == list(BLOCK_ORDER)
    assert parsed.command_stream == vela_result.command_stream
    assert parsed.weights == vela_result.weights
    assert parsed.scratch_size == vela_result.scratch_size
    assert parsed.inputs == vela_result.inputs and parsed.outputs == vela_result.outputs


def test_layout_of_the_first_blocks(vela_result) -> None:
    blob = pack(vela_result)
    assert blob[:16] == b"vela_bin_stream\x00" and struct.unpack_from("<IB", blob, 16) == (0, 0)
    assert blob[32:41] == b"cmd_data\x00"
    length = struct.unpack_from("<I", blob, 48)[0]
    assert length == len(vela_result.command_stream) and blob[64:68] == b"COP1"
    assert blob[-32:] == b"vela_end_stream\x00" + b"\x00" * 16


@pytest.mark.parametrize("damage", ["truncate", "no_footer", "bad_magic", "unknown_block", "unaligned"])
def test_malformed_payloads_are_rejected(vela_result, damage: str) -> None:
    blob = bytearray(pack(vela_result))
    if damage == "truncate":
        blob = blob[:100]
    elif damage == "no_footer":
        blob = blob[:-32]
    elif damage == "bad_magic":
        blob[64:68] = b"XXXX"
    elif damage == "unknown_block":
        blob[32:48] = b"mystery\x00" + b"\x00" * 8
    else:
        blob += b"\x00"
    with pytest.raises(PayloadError):
        unpack(bytes(blob))


@pytest.mark.executorch
def test_matches_executorch_packer(tosa_of, specs, executorch_python, tmp_path) -> None:
    """ExecuTorch 1.5.1's own packer, fed the same Vela .npz, writes the same bytes."""
    result = compile_tosa(tosa_of("conv_relu").flatbuffer, specs["ethos-u55-128"], name="conv_relu",
                          use_cli=True, output_dir=tmp_path)
    et_blob = tmp_path / "et.bin"
    subprocess.run([str(executorch_python), str(WORKER), str(tmp_path / "conv_relu_vela.npz"), str(et_blob)],
                   check=True, capture_output=True, timeout=300)
    assert et_blob.read_bytes() == pack(result)
    assert unpack(et_blob.read_bytes()).command_stream == result.command_stream
