"""Several methods in one program: kiln.export({...}), each method planned on its
own, listed and run by name (Python and kiln-run)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest
import torch

import kiln
from kiln.runtime import KilnRuntimeError, Module, Runtime

from .conftest import Decoder, Encoder, assert_close  # type: ignore[import-not-found]

IMAGE = torch.randn(1, 3, 8, 8, generator=torch.Generator().manual_seed(1))
CODE = torch.randn(2, 4, generator=torch.Generator().manual_seed(2))


@pytest.fixture(scope="module")
def models() -> dict[str, torch.nn.Module]:
    torch.manual_seed(3)
    return {"encode": Encoder().eval(), "decode": Decoder().eval()}


@pytest.fixture(scope="module")
def program(models) -> kiln.Program:
    """"encode" from a module and its inputs, "decode" from an ExportedProgram."""
    decode = torch.export.export(models["decode"], (CODE,))
    return kiln.export({"encode": (models["encode"], (IMAGE,)), "decode": decode})


def test_every_method_runs_like_eager(models, program) -> None:
    assert program.method_names == ["encode", "decode"]
    module = Module(program.to_bytes())
    assert module.method_names == ["encode", "decode"]
    with torch.no_grad():
        assert_close(module.run("encode", IMAGE)[0], models["encode"](IMAGE), "encode")
        assert_close(module.run("decode", CODE)[0], models["decode"](CODE), "decode")


def test_each_method_is_planned_on_its_own(models, program) -> None:
    alone = {name: kiln.export(model, (IMAGE if name == "encode" else CODE,)) for name, model in models.items()}
    for name in ("encode", "decode"):
        assert program.method(name).planned_buffer_sizes == alone[name].methods[0].planned_buffer_sizes
        assert program.method(name).operators == alone[name].methods[0].operators
    runtime_program = Runtime.get().load_program(program.to_bytes())
    assert runtime_program.method_meta("decode").planned_buffer_sizes == tuple(
        program.method("decode").planned_buffer_sizes
    )
    # Constants are stored once for the program: no more than both alone.
    assert program.constant_bytes <= sum(p.constant_bytes for p in alone.values())


def test_kiln_run_runs_the_method_it_is_given(models, program, kiln_run, tmp_path: Path) -> None:
    path = program.save(tmp_path / "codec.pte")
    np.save(tmp_path / "code.npy", CODE.numpy())
    result = subprocess.run([*kiln_run, path, "--method", "decode", "--input", tmp_path / "code.npy",
                             "--output-dir", tmp_path / "out"], capture_output=True, text=True, timeout=120)  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "method 'decode' of 2 methods: encode, decode" in result.stdout
    with torch.no_grad():
        assert_close(torch.from_numpy(np.load(tmp_path / "out" / "output_0.npy")), models["decode"](CODE), "decode")
    # Without --method: "forward" if there is one, else the first method.
    default = subprocess.run([*kiln_run, path, "--output-dir", tmp_path / "default"],
                             capture_output=True, text=True, timeout=120)  # fmt: skip
    assert default.returncode == 0 and "method 'encode'" in default.stdout, default.stderr


def test_a_wrong_method_name_is_a_named_error(program, kiln_run, tmp_path: Path) -> None:
    with pytest.raises(KilnRuntimeError) as caught:
        Runtime.get().load_program(program.to_bytes()).load_method("forward")
    assert caught.value.error_name == "NotFound"
    assert "no method named 'forward'; its methods: 'encode', 'decode'" in str(caught.value)
    with pytest.raises(KilnRuntimeError, match="its methods: 'encode', 'decode'"):
        Module(program.to_bytes()).forward(IMAGE)
    result = subprocess.run([*kiln_run, program.save(tmp_path / "codec.pte"), "--method", "decoder"],
                            capture_output=True, text=True, timeout=120)  # fmt: skip
    assert result.returncode == 1
    assert result.stderr.splitlines()[-2].startswith("error: NotFound (0x20): the program has no method named 'decoder'")


@pytest.mark.parametrize(
    ("methods", "inputs", "message"),
    [
        ({}, None, "the dict of methods is empty"),
        ({"forward": Decoder()}, None, "method 'forward' is a module without example inputs"),
        ({"forward": (Decoder(), (CODE,))}, (CODE,), "give each method its inputs in the dict"),
        ({"": (Decoder(), (CODE,))}, None, "method names must be non-empty strings"),
        ({"forward": [Decoder(), (CODE,)]}, None, "method 'forward' is a list; each method is an ExportedProgram"),
    ],
)
def test_a_malformed_dict_of_methods_is_explained(methods, inputs, message: str) -> None:
    with pytest.raises(kiln.ExportError, match=message):
        kiln.export(methods, inputs)
