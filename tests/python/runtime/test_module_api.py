"""kiln.runtime.Module: a program's methods by name, from a path or bytes."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import torch

import kiln
from kiln.runtime import KilnRuntimeError, MethodMeta, Module

from .conftest import Decoder, RunningMean, assert_close  # type: ignore[import-not-found]

FRAME = torch.arange(4, dtype=torch.float32)
CODE = torch.randn(1, 4, generator=torch.Generator().manual_seed(8))


@pytest.fixture(scope="module")
def models() -> dict[str, torch.nn.Module]:
    torch.manual_seed(9)
    return {"forward": RunningMean(), "decode": Decoder().eval()}


@pytest.fixture(scope="module")
def program_path(models, tmp_path_factory: pytest.TempPathFactory) -> Path:
    program = kiln.export({"forward": (copy.deepcopy(models["forward"]), (FRAME,)),
                           "decode": (models["decode"], (CODE,))})  # fmt: skip
    return program.save(tmp_path_factory.mktemp("module") / "program.pte")


def test_from_a_path_and_from_bytes(models, program_path: Path) -> None:
    for source in (program_path, str(program_path), program_path.read_bytes()):
        module = Module(source)
        assert module.method_names == ["forward", "decode"]
        eager = copy.deepcopy(models["forward"])
        with torch.no_grad():
            assert_close(module.forward(FRAME)[0], eager(FRAME), f"forward from {type(source).__name__}")
            assert_close(module(FRAME)[0], eager(FRAME), "a second call (state kept)")
            assert_close(module.run("decode", CODE)[0], models["decode"](CODE), "decode")


def test_methods_load_on_first_use_and_reset_reloads_them(models, program_path: Path) -> None:
    module = Module(program_path)
    assert not module.is_loaded("forward")
    meta = module.meta("forward")  # read from the program, without loading
    assert isinstance(meta, MethodMeta) and meta.method_allocator_used is None
    assert not module.is_loaded("forward")
    first = module.forward(FRAME)[0]
    assert module.is_loaded("forward") and not module.is_loaded("decode")
    assert module.meta("forward").method_allocator_used is not None
    module.forward(FRAME)
    module.reset("forward")
    assert torch.equal(module.forward(FRAME)[0], first)
    module.forward(FRAME)
    module.reset()  # every loaded method
    assert torch.equal(module.forward(FRAME)[0], first)
    assert module.load_method("forward") is module.load_method("forward")


def test_bad_method_names_and_programs_are_named_errors(program_path: Path, tmp_path: Path) -> None:
    module = Module(program_path)
    for call in (lambda: module.run("encode", CODE), lambda: module.meta("encode"), lambda: module.reset("encode")):
        with pytest.raises(KilnRuntimeError) as caught:
            call()
        assert caught.value.error_name == "NotFound"
        assert "no method named 'encode'; its methods: 'forward', 'decode'" in str(caught.value)
    with pytest.raises(KilnRuntimeError) as count:
        module.run("decode")
    assert count.value.error_name == "InputCountMismatch"
    with pytest.raises(KilnRuntimeError) as missing:
        Module(tmp_path / "missing.pte")
    assert missing.value.error_name == "AccessFailed"
    with pytest.raises(KilnRuntimeError) as garbage:
        Module(b"\x00" * 64)
    assert garbage.value.error_name == "ProgramBadIdentifier"
