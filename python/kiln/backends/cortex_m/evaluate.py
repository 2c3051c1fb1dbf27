"""``kiln-aot --target cortex-m* --evaluate``: the program on Kiln's runtime against the
quantized PyTorch model, in output quantization steps (LSBs).

The kernels compute in integers as CMSIS-NN does (requantization with multiplier and
shift) where the quantized PyTorch model computes in float between its quantize nodes,
so the two differ by a step here and there, and more after many layers; the report
says by how much, and whether the top-1 class agrees with both PyTorch models.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np
import torch
from torch.export import ExportedProgram

from kiln.export.evaluate import output_lsb


@dataclass(frozen=True)
class OutputComparison:
    max_lsb: Optional[float]  # None: the output is not a dequantized int8 tensor
    max_abs: float
    top1_vs_quantized: bool
    top1_vs_fp32: bool

    def line(self, index: int) -> str:
        steps = f"{self.max_lsb:.0f} LSB" if self.max_lsb is not None else f"max abs {self.max_abs:.3g}"
        return (f"evaluate: output {index}: {steps} from the quantized PyTorch model, top-1 "
                f"{'agrees' if self.top1_vs_quantized else 'DIFFERS'} with it and "
                f"{'agrees' if self.top1_vs_fp32 else 'DIFFERS'} with fp32")


def compare_outputs(program_bytes: bytes, quantized: ExportedProgram, inputs: Sequence[torch.Tensor],
                    fp32: Sequence[torch.Tensor]) -> list[OutputComparison]:
    from kiln.runtime import Runtime

    got = Runtime().load_program(program_bytes).load_method("forward").execute(list(inputs))
    with torch.no_grad():
        expected = quantized.module()(*inputs)
    expected = list(expected) if isinstance(expected, (tuple, list)) else [expected]
    results = []
    for value, want, reference, scale in zip(got, expected, fp32, output_lsb(quantized.graph)):
        value, want_np, ref_np = np.asarray(value), want.numpy(), reference.detach().numpy()
        difference = float(np.abs(value - want_np).max()) if value.size else 0.0
        results.append(OutputComparison(
            max_lsb=None if not scale else difference / scale, max_abs=difference,
            top1_vs_quantized=bool(value.reshape(-1).argmax() == want_np.reshape(-1).argmax()),
            top1_vs_fp32=bool(value.reshape(-1).argmax() == ref_np.reshape(-1).argmax()),
        ))
    return results
