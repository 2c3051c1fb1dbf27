"""NPU cycles per inference: the virtual NPU device's PMU estimate next to Vela's.

    python benchmarks/npu_cycles.py [--models smallcnn,mv2] [--targets ethos-u55-128,ethos-u85-256]
                                    [--markdown FILE]

Per zoo model and Ethos-U configuration: compiles the model (int8, Ethos-U delegates), runs
one inference with Kiln's runtime (every delegate through the register-level driver on the
virtual NPU's register-accurate device) and prints, summed over the method's delegates:

* Vela's estimates from the compile (``npu_cycles``: the NPU busy; ``total_cycles``: with
  memory-bound stalls) — Vela's performance model of that configuration and system;
* the PMU's cycle counter and NPU_ACTIVE as the driver read them (``Method.npu_counters()``):
  the device's own estimate (backends/arm/vnpu/NOTES.md, "Cycle estimate": per operation
  max(MACs / MACs-per-cycle, bytes / AXI beat) + 32), not Vela's model and not silicon;
* their ratio (device active cycles / Vela NPU cycles).

Neither number is a measurement of hardware. The table shows where the two models agree
and where the device's simpler one departs (memory-bound layers, elementwise operations).
"""

from __future__ import annotations

import argparse
import logging
from dataclasses import dataclass
from pathlib import Path

import kiln
import kiln.models
from kiln.backends.arm import EthosUCompileSpec, EthosUQuantizer
from kiln.backends.arm.partitioner import EthosUPartitioner
from kiln.runtime import Runtime

DEFAULT_MODELS = ["smallcnn", "resnet", "dscnn", "autoencoder", "vww", "mv2", "mv3", "transformer"]
DEFAULT_TARGETS = ["ethos-u55-128", "ethos-u85-256"]


@dataclass
class Row:
    model: str
    target: str
    delegates: int
    vela_npu_cycles: int
    vela_total_cycles: int
    device_cycles: int
    device_active_cycles: int
    error: str = ""

    @property
    def ratio(self) -> str:
        if self.error or self.vela_npu_cycles == 0:
            return "-"
        return f"{self.device_active_cycles / self.vela_npu_cycles:.2f}"


def measure(model_name: str, target: str) -> Row:
    """Compiles `model_name` for `target`, runs it once; Vela's and the device's cycles."""
    model, inputs = kiln.models.get(model_name)
    spec = EthosUCompileSpec(target)
    quantized = kiln.quantize(model.eval(), inputs, EthosUQuantizer(spec), [tuple(inputs)], progress=False)
    program = kiln.export(quantized, inputs, partitioner=EthosUPartitioner(spec))
    report = program.compile_report
    delegates = [d.preprocessed.report for d in (report.delegates if report else [])]
    vela_npu = sum(int(d.npu_cycles or 0) for d in delegates)
    vela_total = sum(int(d.total_cycles or 0) for d in delegates)
    row = Row(model_name, target, len(delegates), vela_npu, vela_total, 0, 0)
    try:
        method = Runtime().load_program(program.to_bytes()).load_method("forward")
        method.execute([x.numpy() for x in inputs])
        counters = method.npu_counters()
        row.device_cycles = int(counters["cycles"])
        row.device_active_cycles = int(counters["active_cycles"])
    except Exception as error:  # a program that does not run is a row, not the end of the table
        row.error = f"{type(error).__name__}: {error}"
    return row


def table(rows: list[Row]) -> str:
    header = ["model", "target", "delegates", "Vela NPU cycles", "Vela total cycles", "device cycles",
              "device active", "active / Vela NPU"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for r in rows:
        device = (f"{r.device_cycles:,}", f"{r.device_active_cycles:,}") if not r.error else (r.error, "-")
        lines.append(f"| {r.model} | {r.target} | {r.delegates} | {r.vela_npu_cycles:,} | {r.vela_total_cycles:,} | "
                     f"{device[0]} | {device[1]} | {r.ratio} |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default=",".join(DEFAULT_MODELS),
                        help=f"comma-separated, of {', '.join(kiln.models.names())}")
    parser.add_argument("--targets", default=",".join(DEFAULT_TARGETS), help="comma-separated Ethos-U targets")
    parser.add_argument("--markdown", type=Path, help="also write the table to this file")
    args = parser.parse_args()
    logging.getLogger("torchao").setLevel(logging.ERROR)
    rows = []
    for name in args.models.split(","):
        for target in args.targets.split(","):
            rows.append(measure(name.strip(), target.strip()))
            print(f"{name} {target}: done", flush=True)
    text = table(rows)
    print(text)
    if args.markdown:
        args.markdown.write_text(text + "\n")
    return 1 if any(r.error for r in rows) else 0


if __name__ == "__main__":
    raise SystemExit(main())
