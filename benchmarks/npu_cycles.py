"""The NPU's cycle count per zoo model and Ethos-U configuration: the virtual NPU device's
estimate, read by the register-level driver from the PMU's cycle counter, next to Vela's.

    python benchmarks/npu_cycles.py [--models mv2,dscnn,...] [--targets ethos-u55-128,...]

Each model is quantized to int8 and delegated to the Ethos-U (kiln.export), then run once
with Kiln's runtime on the host, where every delegate call goes driver -> registers -> device
(Method.npu_counters()). Printed as a Markdown table: Vela's NPU cycles and its total with
memory stalls (the sum over the program's delegates), the device's cycles and active cycles,
their ratio to Vela's NPU cycles, and the AXI beats. Models whose compile puts nothing on the
NPU for a target are listed with no counts. The device's estimate is a documented
per-operation formula (backends/arm/vnpu/NOTES.md), not a timing model: the ratio says how far
it is from Vela's, not which one silicon would match.
"""

from __future__ import annotations

import argparse
import logging
import time

from vnpu import compile_program

import kiln.models
from kiln.runtime import Runtime

DEFAULT_MODELS = ("smallcnn", "dscnn", "mv2", "resnet", "vww", "autoencoder")
DEFAULT_TARGETS = ("ethos-u55-128", "ethos-u65-256", "ethos-u85-256")


def measure(model: str, target: str) -> list[str]:
    """One table row: compile, run once, read the counters."""
    program, inputs = compile_program(model, target)
    reports = [d.report for d in program.compile_report.delegates]
    if not reports:
        return [model, target, "0", "-", "-", "-", "-", "-", "-"]
    vela = sum(int(r.npu_cycles or 0) for r in reports)
    vela_total = sum(int(r.total_cycles or 0) for r in reports)
    method = Runtime().load_program(program.to_bytes()).load_method("forward")
    method.execute(list(inputs))
    c = method.npu_counters()
    ratio = f"{c['cycles'] / vela:.2f}" if vela else "-"
    return [model, target, str(len(reports)), f"{vela:,}", f"{vela_total:,}", f"{c['cycles']:,}",
            f"{c['active_cycles']:,}", ratio, f"{c['axi_read_beats']:,} / {c['axi_write_beats']:,}"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default=",".join(DEFAULT_MODELS),
                        help=f"comma-separated, from {', '.join(kiln.models.names())}")
    parser.add_argument("--targets", default=",".join(DEFAULT_TARGETS), help="comma-separated Ethos-U configurations")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    header = ["model", "NPU", "delegates", "Vela NPU cycles", "Vela total cycles", "device cycles (PMU)",
              "device active cycles", "device / Vela", "AXI read / write beats"]
    print("| " + " | ".join(header) + " |")
    print("|" + "|".join("---" if i < 2 else "---:" for i in range(len(header))) + "|")
    start = time.perf_counter()
    for model in args.models.split(","):
        for target in args.targets.split(","):
            print("| " + " | ".join(measure(model.strip(), target.strip())) + " |", flush=True)
    print(f"\n({time.perf_counter() - start:.0f} s; the device's cycles: backends/arm/vnpu/NOTES.md)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
