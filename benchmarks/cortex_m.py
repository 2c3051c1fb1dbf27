"""Instruction counts of the Cortex-M int8 kernels (kernels/cortex_m) in QEMU.

    python benchmarks/cortex_m.py [--work-dir DIR] [--programs kiln|executorch]
                                  [--shapes pointwise_96_24,...] [--models mv2,dscnn,...]
                                  [--flavours mve,m4-dsp,m33-dsp,dsp,portable] [--no-kiln-int8]

Each program runs as firmware in QEMU with `-icount shift=0` and the runner's per-operator
table; the firmware checks its outputs against the reference embedded with it ("exact").
The flavours: mve, dsp and portable are the three kernel builds on the Cortex-M55
(mps3-an547); m4-dsp and m33-dsp the DSP build on a Cortex-M4 (mps2-an386) and a Cortex-M33
(mps2-an505).

Programs (--programs):
  kiln       (default) Kiln's own Cortex-M flow: CortexMQuantizer + CortexMLowering, no
             ExecuTorch needed. Single layers (SHAPES, the shapes of CMSIS-NN's reference
             figures and a few more) and the zoo models (kiln.models, whole inference).
             Reference outputs: the host runtime (the portable flavour of the same kernels;
             the kernels' bit-exactness against ExecuTorch's reference operators is the
             kernel case suite's job).
  executorch ExecuTorch 1.5.1's Cortex-M flow (`aot_arm_compiler --target cortex-m55 -q`),
             made in its venv (KILN_EXECUTORCH_PYTHON) by
             tests/python/cortex_m/executorch_cortex_m_programs.py; reference outputs from
             ExecuTorch's own reference operators.

QEMU counts instructions: it does not model the M55's beat-wise vector execution, memory
wait states or the pipeline, so the tables say instructions, not cycles.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from math import prod
from pathlib import Path
from typing import Callable

from kiln.deploy.cortex_m import TARGETS, prepare_existing
from kiln.deploy.firmware import build_firmware
from kiln.firmware_tree import FirmwareTree
from kiln.deploy.firmware_log import parse_firmware_log
from kiln.deploy.prepare import prepare_program
from kiln.deploy.qemu import run_firmware

ROOT = Path(__file__).resolve().parents[1]
#: The firmware is built from the checkout this file is in (the kernels being measured),
#: not from the copy installed with the kiln package.
SOURCES = FirmwareTree(ROOT, "the checkout benchmarks/cortex_m.py is in")
EXECUTORCH_MAKER = ROOT / "tests" / "python" / "cortex_m" / "executorch_cortex_m_programs.py"

QEMU_NOTE = ("QEMU -icount shift=0 counts instructions; it does not model the M55's beat-wise vector "
             "execution (nor wait states or pipelines): instructions, not cycles")


@dataclass(frozen=True)
class Shape:
    """One layer, NCHW input, batch 1."""

    describe: str
    build: Callable[[], object]  # the nn.Module
    input_shape: tuple[int, ...]
    cmsis_nn: float | None = None  # CMSIS-NN's instructions per MAC on QEMU's M55 (gcc 12.2 -Ofast)
    dsp_target: float | None = None  # the DSP flavour's target, instructions per MAC
    linear_kernel_sums: bool = True


def _conv(cin: int, cout: int, k: int, stride: int = 1, padding: int = 0, groups: int = 1):
    from torch import nn

    return lambda: nn.Conv2d(cin, cout, k, stride=stride, padding=padding, groups=groups)


def _linear(features_in: int, features_out: int):
    from torch import nn

    return lambda: nn.Linear(features_in, features_out)


#: The layers measured one by one. CMSIS-NN's figures: its kernels on the same shapes,
#: inputs and requantization parameters on QEMU's Cortex-M55, built the way it ships
#: (arm-none-eabi-gcc 12.2, -Ofast; its linear built with clang 14 reaches 0.165). The DSP
#: targets follow from SIMD32: SMLAD takes two multiply-accumulates per instruction, so
#: a GEMM block of 2 rows x 2 columns (8 SMLAD, 2 input and 2 filter words widened by 4
#: SXTB16 per 4 depth) needs ~1.0 per MAC before its output stage; a depthwise
#: convolution cannot pair two channels in one SMLAD, which leaves SMLABB/SMLATT (one MAC
#: each) fed by SXTB16, and a scalar requantization per 9 MACs (3x3).
SHAPES: dict[str, Shape] = {
    "pointwise_96_24": Shape("pointwise 96->24, 28x28", _conv(96, 24, 1), (1, 96, 28, 28), 0.322, 1.3),
    "pointwise_16_96": Shape("pointwise 16->96, 56x56", _conv(16, 96, 1), (1, 16, 56, 56), 1.054, 1.8),
    "conv3x3_16_32": Shape("conv 3x3 16->32, 28x28, pad 1", _conv(16, 32, 3, padding=1), (1, 16, 28, 28), 0.328,
                           1.3),
    "depthwise_96_s1": Shape("depthwise 3x3, 96 ch, 28x28, stride 1", _conv(96, 96, 3, padding=1, groups=96),
                             (1, 96, 28, 28), 2.173, 3.5),
    "depthwise_96_s2": Shape("depthwise 3x3, 96 ch, 56x56, stride 2", _conv(96, 96, 3, 2, 1, groups=96),
                             (1, 96, 56, 56), 2.175, 3.5),
    "depthwise_144_s1": Shape("depthwise 3x3, 144 ch, 28x28, stride 1", _conv(144, 144, 3, padding=1, groups=144),
                              (1, 144, 28, 28), 2.279, 3.5),
    "linear_1280_1000": Shape("linear 1280->1000 (kernel sums precomputed)", _linear(1280, 1000), (1, 1280), 0.479,
                              1.1),
    "linear_1280_1000_bias": Shape("linear 1280->1000 (bias only)", _linear(1280, 1000), (1, 1280), None, 1.1,
                                   linear_kernel_sums=False),
    # Fewer channels than one Helium vector: the product runs from the scratch memory the
    # compiler's rule (lowering.conv_scratch_bytes) gives it.
    "pointwise_8_16": Shape("pointwise 8->16, 56x56", _conv(8, 16, 1), (1, 8, 56, 56), None, 1.8),
    "conv5x5_s2_24_40": Shape("conv 5x5 stride 2 24->40, 28x28, pad 2", _conv(24, 40, 5, 2, 2), (1, 24, 28, 28),
                              None, 1.3),
    "depthwise_40_5x5_s2": Shape("depthwise 5x5, 40 ch, 28x28, stride 2", _conv(40, 40, 5, 2, 2, groups=40),
                                 (1, 40, 28, 28), None, 3.5),
    "depthwise_mult2_24": Shape("depthwise 3x3, 24 -> 48 ch (multiplier 2), 28x28", _conv(24, 48, 3, padding=1,
                                                                                            groups=24),
                                (1, 24, 28, 28), None, 3.5),
}

#: ExecuTorch's programs (executorch_cortex_m_programs.py) measured instead with --programs executorch.
EXECUTORCH_PROGRAMS = ("pointwise", "conv3x3", "depthwise", "linear", "zoo_dscnn", "zoo_resnet8", "zoo_mv2")

#: The runner's per-operator table: name, calls, ticks, ~instructions.
_OPERATOR_LINE = re.compile(r"^I \[runner\]\s+(\S+::\S+)\s+(\d+)\s+(\d+)\s+(\d+)")


@dataclass
class Run:
    """One program on one flavour."""

    instructions: int | None
    exact: bool
    operators: dict[str, int] = field(default_factory=dict)  # name without ".out": ~instructions


@dataclass(frozen=True)
class Program:
    """A program on disk: the .pte, its inputs and reference outputs, its MACs per operator."""

    name: str
    folder: Path
    macs: dict[str, int]

    @property
    def total_macs(self) -> int:
        return sum(self.macs.values())


def operator_macs(graph) -> dict[str, int]:
    """Multiply-accumulates per cortex_m:: operator of a lowered graph (weights OHWI,
    depthwise 1HWC, transposed convolutions OHWI over the input pixels)."""
    macs: dict[str, int] = {}
    for node in graph.nodes:
        schema = getattr(node.target, "_schema", None)
        if node.op != "call_function" or schema is None or not schema.name.startswith("cortex_m::"):
            continue
        out = node.meta["val"]
        shape = lambda i: tuple(node.args[i].meta["val"].shape)  # noqa: E731
        op = schema.name.split("::")[1]
        if op.startswith("quantized_depthwise_conv2d"):
            count = out.numel() * shape(1)[1] * shape(1)[2]
        elif op.startswith("quantized_conv2d"):
            count = out.numel() * prod(shape(1)[1:])
        elif op.startswith("quantized_transpose_conv2d"):
            count = prod(shape(0)) * prod(shape(1)[:3])
        elif op == "quantized_linear":
            count = out.numel() * shape(1)[-1]
        elif op == "quantized_batch_matmul":
            count = out.numel() * shape(0)[-1]
        else:
            continue
        macs[f"cortex_m::{op}"] = macs.get(f"cortex_m::{op}", 0) + int(count)
    return macs


def make_kiln_program(name: str, folder: Path) -> Program:
    """Compiles a shape or a zoo model with Kiln's Cortex-M flow into ``folder``."""
    import numpy as np
    import torch

    import kiln
    import kiln.models
    from kiln.backends.cortex_m import CortexMLowering, CortexMQuantizer, to_cortex_m
    from kiln.cli.aot import calibration_samples
    from kiln.runtime import Runtime

    folder.mkdir(parents=True, exist_ok=True)
    macs_file = folder / "macs.json"
    if (folder / f"{name}.pte").exists() and macs_file.exists():
        return Program(name, folder, json.loads(macs_file.read_text()))
    torch.manual_seed(sum(map(ord, name)))
    kernel_sums = True
    if name in SHAPES:
        shape = SHAPES[name]
        model = shape.build().eval()  # type: ignore[operator]
        inputs = (torch.randn(shape.input_shape),)
        kernel_sums = shape.linear_kernel_sums
    else:
        model, inputs = kiln.models.get(name)
    quantized = kiln.quantize(model, inputs, CortexMQuantizer("cortex-m55"), calibration_samples(inputs, 4),
                              progress=False)
    pte = folder / f"{name}.pte"
    kiln.export(quantized, cpu_lowering=CortexMLowering(linear_kernel_sums=kernel_sums)).save(pte)
    _, graph, _ = to_cortex_m(quantized, linear_kernel_sums=kernel_sums)
    macs = operator_macs(graph.graph)
    for i, x in enumerate(inputs):
        np.save(folder / f"{name}_input_{i}.npy", x.numpy())
    outputs = Runtime().load_program(pte.read_bytes()).load_method("forward").execute(list(inputs))
    for i, y in enumerate(outputs):
        np.save(folder / f"{name}_expected_{i}.npy", np.asarray(y))
    macs_file.write_text(json.dumps(macs))
    return Program(name, folder, macs)


def make_executorch_programs(folder: Path, names: list[str]) -> list[Program]:
    """ExecuTorch's programs for ``names`` (made in its venv unless already in ``folder``)."""
    missing = [m for m in names if not (folder / f"{m}.pte").exists()]
    if missing:
        python = os.environ.get("KILN_EXECUTORCH_PYTHON")
        if not python:
            sys.exit("--programs executorch needs ExecuTorch 1.5.1's Python: set KILN_EXECUTORCH_PYTHON "
                     "(tools/setup_executorch.sh); without it, measure Kiln's own programs (the default)")
        print(f"making ExecuTorch Cortex-M programs: {', '.join(missing)}", flush=True)
        folder.mkdir(parents=True, exist_ok=True)
        subprocess.run([python, str(EXECUTORCH_MAKER), str(folder), "--models", ",".join(missing)], check=True,
                       stdout=subprocess.DEVNULL)
    return [Program(m, folder, json.loads((folder / f"{m}_macs.json").read_text())) for m in names]


def run_program(program: Program, flavour: str, work: Path) -> Run:
    inputs = sorted(program.folder.glob(f"{program.name}_input_*.npy"))
    expected = sorted(program.folder.glob(f"{program.name}_expected_*.npy"))
    target = TARGETS[flavour]
    prepared = prepare_existing(program.folder / f"{program.name}.pte", inputs, expected,
                                work / "prepared" / target.board_name / program.name, target.board)
    build = work / f"firmware_{flavour}"
    elf = build_firmware(prepared, build, SOURCES, build / "build.log", cpu=target.cpu, selective=True,
                         board_file=target.profile.path,
                         cmake_args=[f"-DKILN_CORTEX_M_FLAVOUR={target.cmake_flavour}"])
    result = run_firmware(elf, timeout=3600, machine=target.machine)
    return _as_run(result.output, result.exit_code)


def _as_run(output: str, exit_code: int) -> Run:
    log = parse_firmware_log(output)
    operators = {}
    for line in output.splitlines():
        if match := _OPERATOR_LINE.match(line.strip()):
            operators[match.group(1).removesuffix(".out")] = int(match.group(4))
    return Run(log.inference_instructions, exit_code == 0, operators)


def run_kiln_int8(model: str, work: Path) -> Run:
    """mv2 as Kiln's int8 program without the cortex_m:: kernels (kiln-aot --quantize: q/dq
    around float portable kernels) on the same firmware."""
    prepared = prepare_program(model, work / "kiln_int8" / model, aot_args=["--quantize"])
    elf = build_firmware(prepared, work / "firmware_kiln_int8", SOURCES,
                         work / "firmware_kiln_int8" / "build.log", cpu="cortex-m55", selective=True)
    result = run_firmware(elf, timeout=3600)
    return _as_run(result.output, result.exit_code)


def _count(value: int | None) -> str:
    return f"{value:,}" if value is not None else "-"


def _per_mac(run: Run, program: Program) -> float | None:
    """Instructions per MAC of the program's MAC-carrying operators (all their calls)."""
    spent = sum(run.operators.get(op, 0) for op in program.macs)
    return spent / program.total_macs if spent and program.total_macs else None


def _cell(value: float | None, width: int = 10) -> str:
    return f"{value:>{width}.3f}" if value is not None else f"{'-':>{width}}"


def print_shape_tables(programs: list[Program], flavours: list[str], runs: dict[tuple[str, str], Run]) -> None:
    shapes = [p for p in programs if p.name in SHAPES]
    if not shapes:
        return
    if "mve" in flavours:
        print(f"\nSingle layers on the Cortex-M55, Helium (MVE) kernels: instructions per MAC\n({QEMU_NOTE})")
        print(f"{'shape (NHWC, batch 1)':<48}{'MACs':>12}{'CMSIS-NN':>10}{'Kiln MVE':>10}{'Kiln/CMSIS':>12}"
              f"{'exact':>7}")
        for p in shapes:
            shape, run = SHAPES[p.name], runs[p.name, "mve"]
            mine = _per_mac(run, p)
            ratio = f"{mine / shape.cmsis_nn:>12.2f}" if mine and shape.cmsis_nn else f"{'-':>12}"
            print(f"{shape.describe:<48}{p.total_macs:>12,}{_cell(shape.cmsis_nn)}{_cell(mine)}{ratio}"
                  f"{'yes' if run.exact else 'NO':>7}")
    dsp = [f for f in flavours if f in ("m4-dsp", "m33-dsp", "dsp")]
    if dsp:
        print(f"\nSingle layers, DSP (SIMD32) kernels: instructions per MAC against the target\n({QEMU_NOTE})")
        print(f"{'shape (NHWC, batch 1)':<48}{'target':>8}" + "".join(f"{f:>10}" for f in dsp) + f"{'exact':>7}")
        for p in shapes:
            shape = SHAPES[p.name]
            cells = "".join(_cell(_per_mac(runs[p.name, f], p)) for f in dsp)
            exact = all(runs[p.name, f].exact for f in dsp)
            print(f"{shape.describe:<48}{_cell(shape.dsp_target, 8)}{cells}{'yes' if exact else 'NO':>7}")


def print_model_table(programs: list[Program], flavours: list[str], runs: dict[tuple[str, str], Run],
                      kiln_int8: Run | None) -> None:
    models = [p for p in programs if p.name not in SHAPES]
    if not models:
        return
    machines = ", ".join(f"{f}: {TARGETS[f].cpu} on {TARGETS[f].machine}" for f in flavours)
    print(f"\nWhole inference: instructions, and instructions per MAC of the MAC-carrying operators\n"
          f"({machines}; {QEMU_NOTE})")
    print(f"{'program':<16}{'MACs':>14}" + "".join(f"{f:>16}{'/MAC':>7}" for f in flavours) + f"{'exact':>7}")
    for p in models:
        cells = ""
        for f in flavours:
            run = runs[p.name, f]
            total = run.instructions / p.total_macs if run.instructions and p.total_macs else None
            cells += f"{_count(run.instructions):>16}{_cell(total, 7) if total is None else f'{total:>7.2f}'}"
        exact = all(runs[p.name, f].exact for f in flavours)
        print(f"{p.name:<16}{p.total_macs:>14,}{cells}{'yes' if exact else 'NO':>7}")
    mv2 = next((p for p in models if p.name in ("mv2", "zoo_mv2")), None)
    if mv2 is not None and "mve" in flavours:
        print(f"int8 MobileNetV2 on the Cortex-M55 without NPU: {_count(runs[mv2.name, 'mve'].instructions)} "
              "instructions per inference (Helium kernels)")
    if kiln_int8 is not None and mv2 is not None:
        print(f"  the same network through kiln-aot --quantize (q/dq around float portable kernels): "
              f"{_count(kiln_int8.instructions)}")


def print_operator_table(programs: list[Program], flavours: list[str], runs: dict[tuple[str, str], Run]) -> None:
    print(f"\nInstructions per MAC, per operator (all its calls in the program; {QEMU_NOTE})")
    print(f"{'program':<22}{'operator':<40}{'MACs':>14}" + "".join(f"{f:>10}" for f in flavours))
    for p in programs:
        for op, count in sorted(p.macs.items()):
            cells = []
            for flavour in flavours:
                spent = runs[p.name, flavour].operators.get(op)
                cells.append(_cell(spent / count if spent and count else None))
            print(f"{p.name:<22}{op:<40}{count:>14,}" + "".join(cells))


def _default_models() -> list[str]:
    import kiln.models

    return kiln.models.names()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work-dir", type=Path, help="programs and firmware builds (default: a temporary folder)")
    parser.add_argument("--programs", choices=("kiln", "executorch"), default="kiln",
                        help="Kiln's own Cortex-M flow (default) or ExecuTorch's (needs KILN_EXECUTORCH_PYTHON)")
    parser.add_argument("--shapes", default=",".join(SHAPES), help="single layers (--programs kiln); '' for none")
    parser.add_argument("--models", help="zoo models (--programs kiln; default: all of kiln.models) or "
                                         f"ExecuTorch programs (default: {','.join(EXECUTORCH_PROGRAMS)}); '' for none")
    parser.add_argument("--flavours", default="mve,m4-dsp,m33-dsp",
                        help=f"of {', '.join(TARGETS)} (mve, dsp, portable: the three builds on a Cortex-M55; "
                             "m4-dsp, m33-dsp: the DSP build on a Cortex-M4 / M33)")
    parser.add_argument("--no-kiln-int8", action="store_true",
                        help="skip mv2 through kiln-aot --quantize (float portable kernels between q/dq)")
    args = parser.parse_args()
    work = (args.work_dir or Path(tempfile.mkdtemp(prefix="kiln_cortex_m_"))).resolve()
    flavours = [f for f in args.flavours.split(",") if f]
    unknown = [f for f in flavours if f not in TARGETS]
    if unknown:
        sys.exit(f"unknown flavour(s) {', '.join(unknown)}: choose from {', '.join(TARGETS)}")
    if args.programs == "executorch":
        names = [m for m in (args.models if args.models is not None else ",".join(EXECUTORCH_PROGRAMS)).split(",") if m]
        programs = make_executorch_programs(work / "executorch", names)
    else:
        shapes = [s for s in args.shapes.split(",") if s]
        unknown = [s for s in shapes if s not in SHAPES]
        if unknown:
            sys.exit(f"unknown shape(s) {', '.join(unknown)}: choose from {', '.join(SHAPES)}")
        models = [m for m in args.models.split(",") if m] if args.models is not None else _default_models()
        programs = []
        for name in shapes + models:
            print(f"compiling {name} (Kiln's Cortex-M flow)", flush=True)
            programs.append(make_kiln_program(name, work / "kiln" / name))
    runs = {}
    for flavour in flavours:
        for program in programs:
            print(f"running {program.name} with {flavour} kernels", flush=True)
            runs[program.name, flavour] = run_program(program, flavour, work)
    has_mv2 = any(p.name in ("mv2", "zoo_mv2") for p in programs)
    kiln_int8 = None if args.no_kiln_int8 or not has_mv2 else run_kiln_int8("mv2", work)
    print_shape_tables(programs, flavours, runs)
    print_model_table(programs, flavours, runs, kiln_int8)
    print_operator_table(programs, flavours, runs)


if __name__ == "__main__":
    main()
