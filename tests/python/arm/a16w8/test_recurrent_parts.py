"""A GRU/LSTM's parts have names a quantizer takes (recurrent.py: ``rnn.l0.input_projection``,
``rnn.l0.steps.T``), so that the last time steps of a sequence can compute in 16 bits and the
rest in int8; the automatic choice (choice.py) uses them to reach its error target for fewer
NPU cycles than the whole layer in 16 bits.

Expected values come from eager PyTorch (the model in float) and from the quantized graph
itself (which operators read 16-bit tensors)."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
import torch
from torch import nn

import kiln
from kiln.backends.arm import EthosUCompileSpec, EthosUQuantizer
from kiln.backends.arm.quantizer.choice import choose_precision, outputs_of, relative_error
from kiln.cli.aot import main
from kiln.delegation.quantizer.recurrent import unroll_recurrent_layers
from kiln.quantize import QuantizationError

aten = torch.ops.aten
qd = torch.ops.quantized_decomposed
STEPS = 8


class LastStep(nn.Module):
    """A classifier on the last step's state, as sequence models are written."""

    def __init__(self, cell: type[nn.RNNBase] = nn.GRU, hidden: int = 16) -> None:
        super().__init__()
        self.rnn = cell(6, hidden, batch_first=True)
        self.head = nn.Linear(hidden, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        sequence, _ = self.rnn(x)
        return self.head(sequence[:, -1])


def _samples(count: int = 4) -> list[tuple[torch.Tensor]]:
    generator = torch.Generator().manual_seed(1)
    return [(torch.randn(1, STEPS, 6, generator=generator),) for _ in range(count)]


def _int16_linears(program: torch.export.ExportedProgram) -> list[bool]:
    """For each fully connected layer (``addmm`` once quantized) in graph order: is its output
    16-bit? (The input projection of all steps is viewed back to 3-D before its quantize.)"""
    flags = []
    for node in program.graph.nodes:
        if node.op == "call_function" and node.target == aten.addmm.default:
            users = list(node.users)
            if len(users) == 1 and users[0].target == aten.view.default:
                users = list(users[0].users)
            quantizes = [u for u in users if u.target == qd.quantize_per_tensor.default]
            assert len(quantizes) == 1, node.name
            flags.append(quantizes[0].args[-1] == torch.int16)
    return flags


@pytest.mark.parametrize("cell", [nn.GRU, nn.LSTM])
def test_a_read_of_the_last_step_needs_no_stack_of_every_step(cell: type[nn.RNNBase]) -> None:
    torch.manual_seed(0)
    model = LastStep(cell).eval()
    x = _samples(1)[0][0]
    module = torch.export.export(model, (x,), strict=False).module(check_guards=False)
    unrolled = unroll_recurrent_layers(module)
    targets = [n.target for n in unrolled.graph.nodes if n.op == "call_function"]
    assert aten.stack.default not in targets
    torch.testing.assert_close(unrolled(x), model(x), rtol=1e-5, atol=1e-6)


def test_named_steps_alone_compute_in_16_bits() -> None:
    torch.manual_seed(0)
    model = LastStep().eval()
    samples = _samples()
    last = f"rnn.l0.steps.{STEPS - 1}"
    quantizer = EthosUQuantizer(EthosUCompileSpec("ethos-u55-128"), int16_modules=[last, "head"])
    program = kiln.quantize(model, samples[0], quantizer, samples, progress=False)
    # linears in graph order: the input projection, one per step (the hidden state's), the head;
    # 16-bit: the last step's and the head's
    assert _int16_linears(program) == [False] * STEPS + [True, True]


def test_a_step_the_sequence_does_not_have_is_a_named_error() -> None:
    model = LastStep().eval()
    samples = _samples(2)
    quantizer = EthosUQuantizer(EthosUCompileSpec("ethos-u55-128"), int16_modules=[f"rnn.l0.steps.{STEPS}"])
    with pytest.raises(QuantizationError, match=rf"'rnn.l0.steps.{STEPS}' names no part of the recurrent layer "
                                                rf"'rnn': it has layers l0..l0, .* steps.0..steps.{STEPS - 1}"):
        kiln.quantize(model, samples[0], quantizer, samples, progress=False)


@pytest.fixture(scope="module")
def gru_choice():
    logging.getLogger("torchao").setLevel(logging.ERROR)
    torch.manual_seed(0)
    model = LastStep().eval()
    samples = _samples()
    spec = EthosUCompileSpec("ethos-u55-128")
    probe = choose_precision(model, samples[0], samples, spec, max_error=1e-9, candidates=[])
    target = probe.a16w8_error + 0.5 * (probe.int8_error - probe.a16w8_error)
    return model, samples, spec, target, choose_precision(model, samples[0], samples, spec, max_error=target)


def test_the_choice_takes_the_last_steps_of_a_gru_below_all_a16w8_cost(gru_choice) -> None:
    model, samples, spec, target, choice = gru_choice
    print(choice.table())
    assert choice.target_met and choice.error <= target < choice.int8_error
    assert "rnn in part" in choice.summary and "last " in choice.table()
    assert "rnn" not in choice.int16_modules and "rnn.l0.input_projection" in choice.int16_modules
    steps = [name for name in choice.int16_modules if name.startswith("rnn.l0.steps.")]
    assert 0 < len(steps) < STEPS and f"rnn.l0.steps.{STEPS - 1}" in steps
    assert choice.npu_cycles is not None and choice.a16w8_npu_cycles is not None
    assert choice.npu_cycles < choice.a16w8_npu_cycles
    # the names reproduce the choice
    quantizer = EthosUQuantizer(spec, int16_modules=choice.int16_modules)
    program = kiln.quantize(model, samples[0], quantizer, samples, progress=False)
    again = relative_error(outputs_of(model, samples), outputs_of(program.module(), samples))
    assert again == pytest.approx(choice.error, rel=1e-6)


def test_kiln_aot_takes_step_names_and_refuses_a_step_past_the_sequence(capsys: pytest.CaptureFixture[str],
                                                                        tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    base = ["--model_name", "lstm", "--quantize", "--delegate", "--target", "ethos-u55-128",
            "--calibration_samples", "2"]
    assert main([*base, "--int16_layers", "rnn.l0.input_projection,rnn.l0.steps.31,classifier",
                 "--output", "out/lstm.pte"]) == 0, capsys.readouterr().err
    assert (tmp_path / "out" / "lstm.pte").stat().st_size > 0
    capsys.readouterr()
    assert main([*base, "--int16_layers", "rnn.l0.steps.32", "--output", "bad.pte"]) != 0
    err = capsys.readouterr().err
    assert "'rnn.l0.steps.32' names no part of the recurrent layer 'rnn'" in err and "steps.31" in err, err
    assert main([*base, "--int16_layers", "rnn.l1.steps.0", "--output", "bad.pte"]) == 2
    assert "no submodule 'rnn.l1.steps.0'" in capsys.readouterr().err
    assert not (tmp_path / "bad.pte").exists()
