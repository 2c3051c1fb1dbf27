"""upsample_nearest2d with an integer factor -> RESIZE (NEAREST).

PyTorch's nearest picks input row ``floor(oy / k)``. TOSA's NEAREST rounds
``(oy * scale_d + offset) / scale_n`` to the nearest integer (ties up). With the
half-pixel encoding scale ``2k / 2`` and offset ``1 - k`` that rounding selects
``floor(oy / k)`` too, and it is the encoding Vela maps to the Ethos-U55/U65
upscaler (offset ``-k`` selects the same rows but Vela 5.2 rejects it on U55).
The border makes TOSA's output-size equation exact: ``2*(OH-1) - 2k*(IH-1) + offset``.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

import torch
import tosa_serializer as ts

from kiln.backends.arm.tosa.builder import attribute
from kiln.backends.arm.tosa.context import LoweringContext
from kiln.backends.arm.tosa.ops import register
from kiln.backends.arm.tosa.values import QTensor

aten = torch.ops.aten

# Vela's resize: scale factors 2, 4 or 8 (and the trivial 1).
_VELA_FACTORS = (1, 2, 4, 8)


def _factors(node: torch.fx.Node) -> tuple[int, int] | None:
    in_shape = tuple(node.args[0].meta["val"].shape)
    out_shape = tuple(node.meta["val"].shape)
    if len(in_shape) != 4:
        return None
    if out_shape[2] % in_shape[2] or out_shape[3] % in_shape[3]:
        return None
    return out_shape[2] // in_shape[2], out_shape[3] // in_shape[3]


def check_resize(node: torch.fx.Node, compile_spec: Any, constants: Collection[Any] = ()) -> str | None:
    factors = _factors(node)
    if factors is None:
        return "only integer-factor nearest upsampling of rank-4 tensors is lowered"
    if factors[0] != factors[1] or factors[0] not in _VELA_FACTORS:
        return f"upsampling factors {factors}: Vela supports equal factors of 2, 4 or 8"
    return None


@register(aten.upsample_nearest2d.vec, aten.upsample_nearest2d.default, check=check_resize)
def lower_upsample_nearest(ctx: LoweringContext, node: torch.fx.Node) -> None:
    reason = check_resize(node, ctx.compile_spec)
    if reason is not None:
        raise ctx.fail(node, reason)
    x = ctx.qtensor(node.args[0], node)
    ky, kx = _factors(node)  # type: ignore[misc]
    _, _, ih, iw = x.shape
    oh, ow = ih * ky, iw * kx
    stem = ctx.stem(node)
    builder = ctx.builder
    scale = builder.shape_const([2 * ky, 2, 2 * kx, 2], f"{stem}_scale")
    offset = builder.shape_const([1 - ky, 1 - kx], f"{stem}_offset")
    border = builder.shape_const([(oh - 1) * 2 - (ih - 1) * 2 * ky + 1 - ky, (ow - 1) * 2 - (iw - 1) * 2 * kx + 1 - kx],
                                 f"{stem}_border")
    result = QTensor("", (x.shape[0], x.shape[1], oh, ow), x.dtype, x.scale, x.zero_point)
    attr = attribute("Resize", ts.ResizeMode.NEAREST)
    name = builder.op(ts.Op.RESIZE, [x.name, scale, offset, border], result.tosa_shape, x.dtype, attr, stem)
    ctx.bind(node, result.renamed(name))
