"""Accuracy of a delegated int8 program without an NPU: reference models instead.

* Per delegate: the subgraph gets the int8 tensors the quantized PyTorch model
  computes at its boundary; the backend's reference model (for Ethos-U: the TOSA
  reference model, ``preprocessed.tosa.run_reference``) must reproduce the int8
  tensors PyTorch computes at its outputs. Differences are in LSBs (int8 steps).
* The whole program: the quantized graph runs in PyTorch with every delegate call
  answered by the reference model; its outputs are compared with the quantized
  PyTorch model (in output LSBs) and with the fp32 model (top-1 agreement).
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Optional

import numpy as np
import torch
from torch.export import ExportedProgram
from torch.export.graph_signature import InputKind

from kiln.export.delegate import CompileReport, DelegateInfo
from kiln.passes.delegation import (
    DELEGATE_META_KEY,
    constant_tensors,
    copy_graph_module,
    duplicate_shared_dequantize,
    is_delegate_call,
    is_dequantize,
)


@dataclass
class DelegateAccuracy:
    """Reference model vs quantized PyTorch at one delegate's outputs."""

    name: str
    max_lsb: list[int]  # per output: max |reference - pytorch| in int8 steps
    mismatched: list[float]  # per output: fraction of elements that differ


@dataclass
class OutputAccuracy:
    """One program output compared three ways."""

    index: int
    lsb: Optional[float]  # quantization step of the output (None if not dequantized)
    max_lsb_vs_quantized: Optional[float]  # delegated program vs quantized PyTorch
    max_abs_vs_fp32: float  # quantized PyTorch vs fp32 PyTorch
    top1_quantized_vs_fp32: bool
    top1_program_vs_fp32: bool


@dataclass
class Evaluation:
    delegates: list[DelegateAccuracy] = field(default_factory=list)
    outputs: list[OutputAccuracy] = field(default_factory=list)

    def lines(self) -> list[str]:
        lines = []
        for d in self.delegates:
            errors = ", ".join(f"{e} LSB ({m:.1%} differ)" for e, m in zip(d.max_lsb, d.mismatched))
            lines.append(f"evaluate: delegate {d.name}: TOSA reference vs quantized PyTorch: max {errors}")
        for o in self.outputs:
            vs_q = "-" if o.max_lsb_vs_quantized is None else f"{o.max_lsb_vs_quantized:.0f} LSB"
            lines.append(
                f"evaluate: output {o.index}: program (CPU + TOSA reference) vs quantized PyTorch: max {vs_q}; "
                f"quantized vs fp32: max abs {o.max_abs_vs_fp32:.4g}"
                + (f" ({o.max_abs_vs_fp32 / o.lsb:.1f} LSB)" if o.lsb else "")
                + f", top-1 quantized {'agrees' if o.top1_quantized_vs_fp32 else 'DIFFERS'}, "
                f"program {'agrees' if o.top1_program_vs_fp32 else 'DIFFERS'}"
            )
        return lines


@contextlib.contextmanager
def _native_output_silenced() -> Iterator[None]:
    """Silences what native libraries print on file descriptors 1 and 2 (the TOSA
    reference model warns about every graph whose spec version it upgrades)."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = [os.dup(1), os.dup(2)]
    with open(os.devnull, "wb") as devnull:
        os.dup2(devnull.fileno(), 1)
        os.dup2(devnull.fileno(), 2)
    try:
        yield
    finally:
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in saved:
            os.close(fd)


def _placeholder_arguments(program: ExportedProgram, inputs: tuple[torch.Tensor, ...]) -> list[Any]:
    """Values for every placeholder of the program's graph, in order."""
    constants = constant_tensors(program)
    user_inputs = iter(inputs)
    values = []
    for spec in program.graph_signature.input_specs:
        if spec.kind is InputKind.USER_INPUT:
            values.append(next(user_inputs))
        else:
            values.append(constants.get(spec.arg.name))
    return values


class _Recorder(torch.fx.Interpreter):
    """Runs a graph, keeping the values of chosen nodes; delegate calls run on references."""

    def __init__(self, module: torch.fx.GraphModule, keep: set[str], references: dict[str, Any]) -> None:
        super().__init__(module, garbage_collect_values=True)
        self.keep, self.kept, self.references = keep, {}, references

    def run_node(self, node: torch.fx.Node) -> Any:
        if is_delegate_call(node):
            args, _ = self.fetch_args_kwargs_from_env(node)
            tosa = self.references[node.meta[DELEGATE_META_KEY].name]
            outputs = tosa.run_reference([a.detach().numpy() for a in args])
            value: Any = tuple(torch.from_numpy(np.ascontiguousarray(o)) for o in outputs)
        else:
            value = super().run_node(node)
        if node.name in self.keep:
            self.kept[node.name] = value
        return value


def output_lsb(graph: torch.fx.Graph) -> list[Optional[float]]:
    """Quantization step of each graph output produced by a dequantize node."""
    output = next(n for n in reversed(graph.nodes) if n.op == "output")
    steps = []
    for value in output.args[0]:
        steps.append(float(value.args[1]) if isinstance(value, torch.fx.Node) and is_dequantize(value)
                     and isinstance(value.args[1], (int, float)) else None)
    return steps


def _as_list(value: Any) -> list[torch.Tensor]:
    return list(value) if isinstance(value, (tuple, list)) else [value]


def _delegate_accuracy(info: DelegateInfo, kept: dict[str, Any]) -> DelegateAccuracy:
    inputs = [kept[name].detach().numpy() for name in info.input_nodes]
    produced = info.preprocessed.tosa.run_reference(inputs)
    errors, mismatched = [], []
    for name, got in zip(info.output_nodes, produced):
        want = kept[name].detach().numpy().astype(np.int64)
        diff = np.abs(got.astype(np.int64) - want)
        errors.append(int(diff.max()) if diff.size else 0)
        mismatched.append(float((diff > 0).mean()) if diff.size else 0.0)
    return DelegateAccuracy(info.name, errors, mismatched)


def evaluate_delegated(
    quantized: ExportedProgram,
    report: CompileReport,
    inputs: tuple[torch.Tensor, ...],
    fp32_outputs: list[torch.Tensor],
) -> Evaluation:
    """Compares the delegated program (reference models) with quantized and fp32 PyTorch."""
    arguments = _placeholder_arguments(quantized, inputs)
    reference = copy_graph_module(quantized)
    duplicate_shared_dequantize(reference.graph)  # same node names as the delegated graph
    boundary = {name for info in report.delegates for name in (*info.input_nodes, *info.output_nodes)}
    with torch.no_grad(), _native_output_silenced():
        recorder = _Recorder(reference, boundary, {})
        quantized_outputs = _as_list(recorder.run(*arguments))
        evaluation = Evaluation([_delegate_accuracy(info, recorder.kept) for info in report.delegates])
        references = {info.name: info.preprocessed.tosa for info in report.delegates}
        delegated = report.graph_module if report.graph_module is not None else reference
        program_outputs = _as_list(_Recorder(delegated, set(), references).run(*arguments))
    for index, (q, p, f, lsb) in enumerate(
        zip(quantized_outputs, program_outputs, fp32_outputs, output_lsb(reference.graph))
    ):
        q_np, p_np, f_np = (t.detach().float().numpy().reshape(-1) for t in (q, p, f))
        evaluation.outputs.append(
            OutputAccuracy(
                index=index,
                lsb=lsb,
                max_lsb_vs_quantized=float(np.abs(p_np - q_np).max()) / lsb if lsb else None,
                max_abs_vs_fp32=float(np.abs(q_np - f_np).max()),
                top1_quantized_vs_fp32=bool(q_np.argmax() == f_np.argmax()),
                top1_program_vs_fp32=bool(p_np.argmax() == f_np.argmax()),
            )
        )
    return evaluation
