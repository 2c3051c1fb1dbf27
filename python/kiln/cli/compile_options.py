"""The compile flags ``kiln-aot`` takes and ``kiln-deploy`` passes on to it, declared once.

``kiln-deploy`` compiles by running ``kiln-aot``: it declares the same flags (as ExecuTorch's
``aot_arm_compiler`` spells them, which its ``run.sh`` also takes inside
``--aot_arm_compiler_flags``) with no defaults of its own, and passes on the ones given
(:func:`passed_on`).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from kiln.targets import CORTEX_M_TARGETS, DEFAULT_TARGET

DEFAULT_CALIBRATION_SAMPLES = 8

#: The flags of :func:`add_compile_options`, by their ``dest``.
COMPILE_FLAGS = ("quantize", "delegate", "target", "system_config", "memory_mode", "calibration_samples",
                 "intermediates", "evaluate", "debug")


def add_compile_options(parser: argparse.ArgumentParser, *, for_deploy: bool = False) -> None:
    """Adds the compile flags to ``parser``: with kiln-aot's defaults, or ``for_deploy``
    with none (only what the user gives is passed on to kiln-aot)."""

    def add(*names: str, default: Any = None, **kwargs: Any) -> None:
        if default is not None and not for_deploy:
            kwargs["default"] = default
        parser.add_argument(*names, **kwargs)

    npu = "the firmware runs it on Kiln's virtual Ethos-U" if for_deploy else "the rest stays on the CPU, " \
        "each node with its reason in the report"
    add("--quantize", "-q", action="store_true",
        help="quantize to int8 (PT2E, Ethos-U quantizer) before compiling; without --delegate the int8 program "
             "runs on the CPU's portable quantized kernels")
    add("--delegate", "-d", action="store_true",
        help=f"run the parts the Ethos-U NPU supports as delegates (needs --quantize); {npu}")
    target_help = (f"Ethos-U target for --delegate: ethos-u55-32/64/128/256, ethos-u65-256/512, "
                   f"ethos-u85-128/256/512/1024/2048 (default: {DEFAULT_TARGET}); or a CPU without NPU for "
                   f"--quantize: {', '.join(CORTEX_M_TARGETS)} (int8 on the cortex_m:: kernels)")
    if for_deploy:
        target_help += "; a CPU name is also the firmware's --cpu"
    add("--target", "-t", help=target_help)
    add("--system_config", help="Vela system configuration for --delegate (default: derived from the target)")
    add("--memory_mode", help="Vela memory mode for --delegate, e.g. Shared_Sram, Dedicated_Sram (default: "
                              "derived from the target)")
    add("--calibration_samples", type=int, default=DEFAULT_CALIBRATION_SAMPLES, metavar="N",
        help="calibrate on N inputs: the example input and N-1 random inputs of the same mean and spread "
             f"(default: {DEFAULT_CALIBRATION_SAMPLES})")
    add("--intermediates", "-i", type=Path, metavar="DIR",
        help="write the example inputs (input_<i>.npy), eager PyTorch's outputs (reference_output_<i>.npy; with "
             "--quantize also the quantized model's, quantized_reference_output_<i>.npy), the summary "
             "(summary.txt) and with --delegate the partition report, each subgraph's TOSA flatbuffer and Vela "
             "output here" + (" (default: <output>/intermediates)" if for_deploy else ""))
    add("--evaluate", action="store_true",
        help="fp32: run the program on Kiln's runtime vs eager PyTorch; --quantize: vs the quantized PyTorch "
             "model; --delegate: each delegate on the TOSA reference model vs quantized PyTorch (LSBs), and top-1 "
             "agreement with fp32" + (" (before building the firmware)" if for_deploy else ""))
    add("--debug", action="store_true", help="verbose logging and full tracebacks")


def passed_on(args: argparse.Namespace, *, leave_out: tuple[str, ...] = ()) -> list[str]:
    """The compile flags given in ``args``, as kiln-aot's command line."""
    flags = []
    for name in COMPILE_FLAGS:
        value = getattr(args, name, None)
        if name in leave_out or value in (None, False):
            continue
        flags += [f"--{name}"] if value is True else [f"--{name}", str(value)]
    return flags
