"""Interop with ExecuTorch 1.5.1 in both directions on what goes beyond one static
method: several methods, bounded dynamic shapes, state (mutable buffers with initial
values), non-tensor inputs. ExecuTorch runs Kiln's programs, Kiln runs ExecuTorch's,
call sequences in order, every output compared with eager PyTorch.

All ExecuTorch work happens in one subprocess (importing ExecuTorch dominates).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import torch

import kiln
from kiln.runtime import Module

from .conftest import (  # type: ignore[import-not-found]
    STALE_BYTES,
    Call,
    Decoder,
    Encoder,
    ExecuTorchBatch,
    RunningMean,
    ScaledWindow,
    assert_close,
    dynamic_head_inputs,
    dynamic_head_shapes,
    DynamicHead,
    eager_calls,
    make_gru_step,
    run_in_stale_memory,
)

pytestmark = [pytest.mark.executorch, pytest.mark.slow]


@dataclass
class Scenario:
    """Methods (module, example inputs, dynamic shapes) and the calls made on them."""

    methods: dict[str, tuple[torch.nn.Module, tuple[Any, ...], Any]]
    calls: list[Call]


def _frames(count: int, size: int) -> list[torch.Tensor]:
    return [torch.randn(1, size, generator=torch.Generator().manual_seed(50 + k)) for k in range(count)]


def _methods_scenario() -> Scenario:
    torch.manual_seed(21)
    image = torch.randn(1, 3, 8, 8, generator=torch.Generator().manual_seed(22))
    code = torch.randn(2, 4, generator=torch.Generator().manual_seed(23))
    return Scenario(
        {"encode": (Encoder().eval(), (image,), None), "decode": (Decoder().eval(), (code,), None)},
        [Call("encode", (image,)), Call("decode", (code,)), Call("encode", (image * 2,))],
    )


def _dynamic_scenario() -> Scenario:
    torch.manual_seed(24)
    sizes = [(8, 12), (3, 5), (1, 2), (5, 9)]
    return Scenario(
        {"forward": (DynamicHead().eval(), dynamic_head_inputs(2, 4), dynamic_head_shapes())},
        [Call("forward", dynamic_head_inputs(b, n, seed=b * 10 + n)) for b, n in sizes],
    )


def _gru_scenario() -> Scenario:
    model, _ = make_gru_step(seed=25)
    model.hidden.copy_(torch.linspace(-1, 1, 8).unsqueeze(0))
    frames = _frames(5, 5)
    return Scenario({"forward": (model, (frames[0],), None)}, [Call("forward", (f,)) for f in frames])


def _running_mean_scenario() -> Scenario:
    frames = [torch.randn(4, generator=torch.Generator().manual_seed(60 + k)) for k in range(4)]
    return Scenario({"forward": (RunningMean(), (frames[0],), None)}, [Call("forward", (f,)) for f in frames])


def _numbers_scenario() -> Scenario:
    x = torch.randn(3, 6, generator=torch.Generator().manual_seed(26))
    return Scenario({"forward": (ScaledWindow(), (x, 2, 0.5, True), None)},
                    [Call("forward", (x, 2, 0.5, True)), Call("forward", (x * 3, 2, 0.5, True))])  # fmt: skip


SCENARIOS: dict[str, Callable[[], Scenario]] = {
    "several_methods": _methods_scenario,
    "dynamic_shapes": _dynamic_scenario,
    "streaming_gru_state": _gru_scenario,
    "int_and_float_state": _running_mean_scenario,
    "number_inputs": _numbers_scenario,
}


@dataclass
class Outcome:
    eager: list[list[Any]]
    kiln_program: kiln.Program
    executorch_program: Path
    executorch_runs_kiln: list[Any]  # per call: outputs, or ExecuTorch's error text


@pytest.fixture(scope="module")
def outcomes(executorch_python: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Outcome]:
    """Every scenario exported by both tools; ExecuTorch's runs of Kiln's programs."""
    batch = ExecuTorchBatch(executorch_python, tmp_path_factory.mktemp("parity"))
    pending = {}
    for name, make in SCENARIOS.items():
        scenario = make()
        # Inference: ExecuTorch's buffer-initializing pass runs the graph and refuses
        # in-place updates computed from parameters that require grad.
        fresh = {method: copy.deepcopy(module).requires_grad_(False)
                 for method, (module, _, _) in scenario.methods.items()}  # fmt: skip
        eager = eager_calls({m: copy.deepcopy(module) for m, module in fresh.items()}, scenario.calls)
        program = kiln.export({m: (copy.deepcopy(fresh[m]), inputs, shapes)
                               for m, (_, inputs, shapes) in scenario.methods.items()})  # fmt: skip
        exported = {m: torch.export.export(copy.deepcopy(fresh[m]), inputs, dynamic_shapes=shapes, strict=False)
                    for m, (_, inputs, shapes) in scenario.methods.items()}  # fmt: skip
        et_path = batch.add_export(name, exported)
        kiln_path = program.save(et_path.parent / "kiln.pte")
        pending[name] = (eager, program, et_path, batch.add_run(name, kiln_path, scenario.calls), scenario.calls)
    batch.execute()
    return {
        name: Outcome(eager, program, et_path, ExecuTorchBatch.results(out))
        for name, (eager, program, et_path, out, _) in pending.items()
    }


def _calls(name: str) -> list[Call]:
    return SCENARIOS[name]().calls


def _assert_calls_match(got: list[Any], want: list[list[Any]], who: str) -> None:
    assert len(got) == len(want)
    for k, (outputs, expected) in enumerate(zip(got, want)):
        assert not isinstance(outputs, str), f"{who}, call {k} failed: {outputs}"
        assert len(outputs) == len(expected), f"{who}, call {k}: {len(outputs)} outputs, eager {len(expected)}"
        for i, (o, e) in enumerate(zip(outputs, expected)):
            assert_close(o, e, f"{who}, call {k}, output {i}")


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_executorch_runs_kiln_programs(outcomes, name: str) -> None:
    outcome = outcomes[name]
    _assert_calls_match(outcome.executorch_runs_kiln, outcome.eager, "ExecuTorch on Kiln's program")


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_kiln_runs_executorch_programs(outcomes, name: str) -> None:
    outcome = outcomes[name]
    module = Module(outcome.executorch_program)
    assert sorted(module.method_names) == sorted(outcome.kiln_program.method_names)
    got = [module.run(call.method, *call.inputs) for call in _calls(name)]
    _assert_calls_match(got, outcome.eager, "Kiln on ExecuTorch's program")


@pytest.mark.parametrize("producer", ["kiln", "executorch"])
@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_no_output_depends_on_stale_planned_memory(outcomes, name: str, producer: str) -> None:
    """The call sequence runs once per stale byte the planned memory holds before the
    methods load: an output that changes with it read memory the program never wrote."""
    outcome = outcomes[name]
    program = outcome.kiln_program.to_bytes() if producer == "kiln" else outcome.executorch_program
    first, *others = [run_in_stale_memory(program, _calls(name), stale) for stale in STALE_BYTES]
    for stale, run in zip(STALE_BYTES[1:], others):
        for k, (got, want) in enumerate(zip(run, first)):
            for i, (a, b) in enumerate(zip(got, want)):
                same = torch.equal(a, b) if isinstance(b, torch.Tensor) else a == b
                assert same, f"{producer}'s program, call {k}, output {i}: {a} with planned memory {stale:#04x}, {b} with 0x00"


def test_kiln_resets_executorch_state_by_loading_again(outcomes) -> None:
    """ExecuTorch's mutable buffers carry initial values Kiln loads at every method load."""
    outcome = outcomes["streaming_gru_state"]
    module = Module(outcome.executorch_program)
    calls = _calls("streaming_gru_state")
    for call in calls[:3]:
        module.forward(*call.inputs)
    module.reset()
    assert_close(module.forward(*calls[0].inputs)[0], outcome.eager[0][0], "first frame after reset")
