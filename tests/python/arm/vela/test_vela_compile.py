"""Vela compiles every TOSA operator Kiln emits, for U55, U65 and U85; both ways in agree."""

from __future__ import annotations

import math

import pytest

from kiln.backends.arm.vela import VelaError, compile_tosa

TARGETS = ("ethos-u55-128", "ethos-u65-256", "ethos-u85-256")

# One graph per TOSA operator family Kiln emits (see tests/python/arm/tosa/test_ops_reference.py).
CASES = ("conv_relu", "conv_1x1_stride2_crop", "depthwise", "grouped_conv", "linear", "bmm", "add_broadcast", "sub", "mul",
         "relu6_shared_qparams", "hardswish", "max_pool", "avg_pool_padded", "mean_hw", "concat", "flatten",
         "permute", "pad", "upsample_nearest")


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", CASES)
def test_vela_compiles(name: str, target: str, tosa_of, specs) -> None:
    subgraph = tosa_of(name)
    result = compile_tosa(subgraph.flatbuffer, specs[target], name=name)
    assert result.via == "regor" and result.target == target
    assert result.command_stream.startswith(b"COP1")
    assert result.npu_cycles > 0 and result.layers and all(layer.cycles >= 0 for layer in result.layers)
    assert result.scratch_size > 0 and result.sram_bytes > 0
    assert result.flash_bytes == len(result.weights) + len(result.command_stream)
    assert len(result.inputs) == len(subgraph.inputs) and len(result.outputs) == len(subgraph.outputs)
    for vela_io, tosa_io in zip([*result.inputs, *result.outputs], [*subgraph.inputs, *subgraph.outputs]):
        assert len(vela_io.shape) == 6 and vela_io.element_size == 1
        assert math.prod(vela_io.shape) == math.prod(tosa_io.tosa_shape)
        assert vela_io.offset + vela_io.nbytes <= result.scratch_size


@pytest.mark.parametrize("name", ["conv_relu", "add_broadcast"])
def test_cli_and_in_process_agree(name: str, tosa_of, specs, tmp_path) -> None:
    spec = specs["ethos-u55-128"]
    tosa = tosa_of(name).flatbuffer
    fast = compile_tosa(tosa, spec, name=name, output_dir=tmp_path / "regor")
    cli = compile_tosa(tosa, spec, name=name, use_cli=True, output_dir=tmp_path / "cli")
    assert (fast.via, cli.via) == ("regor", "cli")
    assert fast.command_stream == cli.command_stream and fast.weights == cli.weights
    assert (fast.scratch_size, fast.fast_scratch_size) == (cli.scratch_size, cli.fast_scratch_size)
    assert fast.inputs == cli.inputs and fast.outputs == cli.outputs
    assert fast.npu_cycles == cli.npu_cycles and [l.cycles for l in fast.layers] == [l.cycles for l in cli.layers]
    assert abs(fast.sram_bytes - cli.sram_bytes) <= 16  # the CLI reports KiB with 4 decimals
    for folder in ("regor", "cli"):
        assert (tmp_path / folder / f"{name}_vela.npz").is_file()
        assert (tmp_path / folder / f"{name}_per-layer.csv").is_file()
    assert (tmp_path / "regor" / f"{name}.tosa").read_bytes() == tosa


def test_rejected_graph_names_the_subgraph(specs) -> None:
    with pytest.raises(VelaError, match="'broken'") as error:
        compile_tosa(b"not a tosa flatbuffer at all", specs["ethos-u55-128"], name="broken")
    assert error.value.subgraph == "broken" and error.value.reason
