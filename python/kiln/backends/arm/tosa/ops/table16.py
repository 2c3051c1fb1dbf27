"""16-bit lookup tables: a pointwise function of one int16 tensor -> TOSA 1.0 TABLE (int16).

TOSA's int16 TABLE reads a 513-entry int16 table and interpolates: for an input code ``v``,
``index = (v + 32768) >> 7`` and ``fraction = (v + 32768) & 127`` give
``(table[index] << 7) + (table[index + 1] - table[index]) * fraction``, an int32 with seven
fractional bits. Entry ``i`` is the function at input code ``-32768 + 128 * i`` (entry 512 one
step past the largest code), quantized to the output's scale, so that the int32 result is the
output code times 128 and one RESCALE (by 1/128, rounding) finishes it. The interpolation is
the table's only approximation: between entries it is linear over 128 input codes, within
about a step of the smooth functions the quantizer gives 16 bits (sigmoid, tanh, GELU, SiLU
...; kiln.backends.arm.quantizer.precision), a few steps across a kink (hardswish).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import torch
import tosa_serializer as ts

from kiln.backends.arm.tosa.values import QTensor

if TYPE_CHECKING:
    from kiln.backends.arm.tosa.context import LoweringContext
    from kiln.backends.arm.tosa.ops.activation import UnaryRegion

TABLE16_ENTRIES = 513
_FRACTION_BITS = 7


def table16_values(region: UnaryRegion, x: QTensor, output_scale: float, output_zero_point: int) -> np.ndarray:
    """The 513 int16 entries: the region's own PyTorch operators on the dequantized input codes
    -32768, -32640, ..., 32768, in output steps, each lowered by half of how far the line from
    it to the next entry passes above the function halfway between them (as Vela's own 16-bit
    tables do: the largest error over a segment is halved), rounded to int16."""
    step = 1 << _FRACTION_BITS
    codes = torch.arange(2 * TABLE16_ENTRIES - 1, dtype=torch.float32) * (step // 2) - 32768
    source = (codes - x.zero_point) * torch.tensor(x.scale, dtype=torch.float32)
    env: dict[torch.fx.Node, Any] = {}
    for node in region.nodes:
        # Every argument from outside the region is the source (or a copy of its dequantize).
        args, kwargs = torch.fx.map_arg((node.args, node.kwargs), lambda a: env.get(a, source))
        env[node] = node.target(*args, **kwargs)
    values = (env[region.quantize.args[0]].to(torch.float64) / output_scale).numpy()
    at_entries, halfway = values[0::2], values[1::2]
    bias = np.zeros(TABLE16_ENTRIES)
    bias[:-1] = ((at_entries[:-1] + at_entries[1:]) / 2 - halfway) / 2
    entries = np.round(at_entries - bias) + output_zero_point
    return np.clip(entries, -32768, 32767).astype(np.int16)


def slope_problem(entries: np.ndarray) -> str | None:
    """TOSA requires each step between neighbouring entries to fit int16."""
    steps = np.diff(entries.astype(np.int32))
    if steps.size and (steps.min() < -32768 or steps.max() > 32767):
        return f"the function changes by {int(np.abs(steps).max())} output codes between two table entries (TOSA allows 32767)"
    return None


def lower_table16(ctx: LoweringContext, node: torch.fx.Node, region: UnaryRegion, x: QTensor) -> None:
    """TABLE (int16 -> int32 with 7 fractional bits), then RESCALE to the region's quantize node."""
    out = ctx.output_quant_at(region.quantize)
    if out.dtype != ts.DType.INT16:
        raise ctx.fail(node, f"a 16-bit table writes int16; the result is quantized to {region.quantize.args[5]}")
    if x.zero_point != 0:
        raise ctx.fail(node, f"a 16-bit table reads a symmetric int16 input; its zero point is {x.zero_point}")
    entries = table16_values(region, x, out.scale, 0)
    problem = slope_problem(entries)
    if problem is not None:
        raise ctx.fail(node, problem)
    stem = ctx.stem(node)
    table = ctx.builder.const(entries, f"{stem}_table16")
    result = ctx.builder.op(ts.Op.TABLE, [x.name, table], x.tosa_shape, ts.DType.INT32, None, stem)
    ctx.consumed.update(region.nodes)
    ctx.finish(region.nodes[-1], out, result, x.tosa_shape, ts.DType.INT32, out.scale / (1 << _FRACTION_BITS),
               logical_shape=x.shape)
