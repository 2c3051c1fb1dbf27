"""Upsampling by integer factors -> RESIZE (NEAREST, or BILINEAR on Ethos-U85).

Two spellings reach the lowering:

* ``upsample_nearest2d`` / ``upsample_bilinear2d`` (graphs exported straight to core ATen);
* the quantized form: the quantization flow traces to ATen IR, where ``F.interpolate``
  becomes ``index.Tensor`` with ``arange``-computed indices (nearest), or four of them
  blended with computed weights (bilinear). The region between the dequantize and the
  quantize is recognised by what it computes: it is run on a probe input and compared with
  PyTorch's own upsampling (:func:`upsample_region`), so any spelling of the same function
  is found and nothing else is.

Encoding: PyTorch's nearest picks input row ``floor(oy / k)`` and its bilinear
(``align_corners=False``) samples at ``(oy + 0.5) / k - 0.5``. TOSA's RESIZE samples at
``(oy * scale_d + offset) / scale_n``; the half-pixel encoding ``scale = 2k / 2``, ``offset
= 1 - k`` gives both (NEAREST rounds ties up, which selects ``floor(oy / k)``), and is the
one Vela maps to the Ethos-U55/U65 upscaler. ``align_corners=True`` is ``scale = (OH - 1) /
(IH - 1)``, offset 0. The border makes TOSA's output-size equation exact. BILINEAR sums the
four taps with integer weights totalling ``scale_n_y * scale_n_x`` into int32; a RESCALE
divides by that total.

Vela 5.2 compiles NEAREST for U55/U65 only with the factors the constraint table lists
(:mod:`kiln.backends.arm.constraints`) and the half-pixel encoding, and BILINEAR only for
U85; there, bilinear 2x is nearest 2x followed by a 3x3 filter
(:func:`emit_bilinear_2x_as_filter`).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
import tosa_serializer as ts

from kiln.backends.arm.constraints import bilinear_as_filter, upsampling_objection
from kiln.backends.arm.tosa.builder import attribute
from kiln.backends.arm.tosa.context import LoweringContext, carries_no_computation, is_quantize, scalar_arg
from kiln.backends.arm.tosa.ops import register
from kiln.backends.arm.tosa.ops.activation import value_key
from kiln.passes.constant_values import ConstantEvaluator
from kiln.backends.arm.tosa.values import QTensor

aten = torch.ops.aten

_INDEX_TARGETS = (aten.index.Tensor, aten._unsafe_index.Tensor)
# What PyTorch's upsampling decompositions compute with, besides the index reads.
_BLEND_TARGETS = {aten.add.Tensor, aten.sub.Tensor, aten.mul.Tensor, aten.clamp.default, aten.view.default,
                  aten._unsafe_view.default}
_MAX_REGION = 32


@dataclass(frozen=True)
class Upsampling:
    """What an upsampling computes: mode, output size, corner alignment."""

    mode: str  # "nearest" or "bilinear"
    in_hw: tuple[int, int]
    out_hw: tuple[int, int]
    align_corners: bool = False

    @property
    def factors(self) -> tuple[int, int] | None:
        """Integer upscale factors per axis, or None."""
        (ih, iw), (oh, ow) = self.in_hw, self.out_hw
        if oh % ih or ow % iw:
            return None
        return oh // ih, ow // iw


@dataclass(frozen=True)
class UpsampleRegion:
    """The quantized form of an upsampling: nodes between one input and one quantize."""

    source: torch.fx.Node
    nodes: tuple[torch.fx.Node, ...]  # graph order
    quantize: torch.fx.Node
    upsampling: Upsampling


# ----------------------------------------------------------------------------- checks
def check_upsampling(upsampling: Upsampling, compile_spec: Any) -> str | None:
    return upsampling_objection(compile_spec, upsampling.mode, upsampling.in_hw, upsampling.out_hw,
                                upsampling.align_corners)


def _of_node(node: torch.fx.Node) -> Upsampling | None:
    in_shape, out_shape = tuple(node.args[0].meta["val"].shape), tuple(node.meta["val"].shape)
    if len(in_shape) != 4:
        return None
    mode = "bilinear" if node.target == aten.upsample_bilinear2d.vec else "nearest"
    align = bool(scalar_arg(node, 2, "align_corners", False)) if mode == "bilinear" else False
    return Upsampling(mode, in_shape[2:], out_shape[2:], align)


def check_resize(node: torch.fx.Node, compile_spec: Any, constants: Collection[Any] = ()) -> str | None:
    upsampling = _of_node(node)
    if upsampling is None:
        return "only upsampling of rank-4 (NCHW) tensors is lowered"
    return check_upsampling(upsampling, compile_spec)


def check_index(node: torch.fx.Node, compile_spec: Any, constants: Collection[Any] = ()) -> str | None:
    region = upsample_region(node, ConstantEvaluator(lambda _: None))
    if region is None:
        return "an index with computed indices is lowered only where it is an upsampling (nearest or bilinear)"
    return check_upsampling(region.upsampling, compile_spec)


# ----------------------------------------------------------------------------- regions
def upsample_region(start: torch.fx.Node, evaluator: ConstantEvaluator) -> UpsampleRegion | None:
    """The upsampling ``start`` (an index read of a 4-D tensor) belongs to, if the nodes from
    its input to one quantize node compute nearest or bilinear upsampling."""
    if start.op != "call_function" or start.target not in _INDEX_TARGETS:
        return None
    source = start.args[0]
    if not isinstance(source, torch.fx.Node) or len(source.meta["val"].shape) != 4:
        return None
    key = value_key(source)
    region, quantizes = _grow(start, key, evaluator)
    if region is None or len(quantizes) != 1:
        return None
    quantize = quantizes.pop()
    order = tuple(n for n in start.graph.nodes if n in region)
    upsampling = _identify(source, order, quantize.args[0], key, evaluator)
    return None if upsampling is None else UpsampleRegion(source, order, quantize, upsampling)


def _grow(start: torch.fx.Node, key: Any, evaluator: ConstantEvaluator
          ) -> tuple[set[torch.fx.Node] | None, set[torch.fx.Node]]:
    """The nodes connected to ``start`` (through users, and inputs other than the source and
    constants) up to the quantize nodes, if each is an index read or blend arithmetic."""
    region: set[torch.fx.Node] = set()
    quantizes: set[torch.fx.Node] = set()
    frontier = [start]
    while frontier:
        node = frontier.pop()
        if node in region or node in quantizes:
            continue
        if is_quantize(node):
            quantizes.add(node)
            continue
        if carries_no_computation(node):
            continue
        if node.op != "call_function" or node.target not in (*_INDEX_TARGETS, *_BLEND_TARGETS) \
                or len(region) >= _MAX_REGION:
            return None, quantizes
        region.add(node)
        frontier.extend(node.users)
        frontier.extend(source for source in node.all_input_nodes
                        if value_key(source) != key and evaluator.value(source) is None)
    return region, quantizes


def _identify(source: torch.fx.Node, order: tuple[torch.fx.Node, ...], result: torch.fx.Node, key: Any,
              evaluator: ConstantEvaluator) -> Upsampling | None:
    """Runs the region on a probe input and names the upsampling it equals, if any."""
    shape = tuple(int(d) for d in source.meta["val"].shape)
    probe = torch.randn(shape, generator=torch.Generator().manual_seed(0))
    env: dict[torch.fx.Node, Any] = {}

    def argument(node: torch.fx.Node) -> Any:
        if node in env:
            return env[node]
        return probe if value_key(node) == key else evaluator.value(node)

    for node in order:
        args, kwargs = torch.fx.map_arg((node.args, node.kwargs), argument)
        env[node] = node.target(*args, **kwargs)
    output = env.get(result)
    if not isinstance(output, torch.Tensor) or output.dim() != 4 or output.shape[:2] != probe.shape[:2]:
        return None
    out_hw = tuple(int(d) for d in output.shape[2:])
    for mode, align in (("nearest", None), ("bilinear", False), ("bilinear", True)):
        expected = F.interpolate(probe, size=out_hw, mode=mode, align_corners=align)
        if torch.allclose(output, expected, atol=1e-5):
            return Upsampling(mode, shape[2:], out_hw, bool(align))
    return None


# ----------------------------------------------------------------------------- lowering
def emit_resize(ctx: LoweringContext, x: QTensor, upsampling: Upsampling, stem: str
                ) -> tuple[str, tuple[int, ...], ts.DType, int]:
    """RESIZE of ``x``: (tensor, NHWC shape, dtype, weight total - 1 for NEAREST)."""
    (ih, iw), (oh, ow) = upsampling.in_hw, upsampling.out_hw
    if upsampling.align_corners:
        scale = [max(oh - 1, 1), max(ih - 1, 1), max(ow - 1, 1), max(iw - 1, 1)]
        offset = [0, 0]
    else:
        ky, kx = upsampling.factors  # type: ignore[misc]
        scale, offset = [2 * ky, 2, 2 * kx, 2], [1 - ky, 1 - kx]
    border = [(oh - 1) * scale[1] - (ih - 1) * scale[0] + offset[0],
              (ow - 1) * scale[3] - (iw - 1) * scale[2] + offset[1]]
    builder = ctx.builder
    operands = [x.name, builder.shape_const(scale, f"{stem}_scale"), builder.shape_const(offset, f"{stem}_offset"),
                builder.shape_const(border, f"{stem}_border")]
    shape = (x.shape[0], oh, ow, x.shape[1])
    if upsampling.mode == "nearest":
        attr = attribute("Resize", ts.ResizeMode.NEAREST)
        return builder.op(ts.Op.RESIZE, operands, shape, x.dtype, attr, stem), shape, x.dtype, 1
    attr = attribute("Resize", ts.ResizeMode.BILINEAR)
    return builder.op(ts.Op.RESIZE, operands, shape, ts.DType.INT32, attr, stem), shape, ts.DType.INT32, \
        scale[0] * scale[2]


def _edge_rows(ctx: LoweringContext, source: str, shape: tuple[int, ...], axis: int, stem: str
               ) -> tuple[str, tuple[int, ...]]:
    """``source`` with its first and last slice along ``axis`` repeated once outside (SLICE, CONCAT)."""
    builder = ctx.builder
    edge_shape = tuple(1 if d == axis else s for d, s in enumerate(shape))
    edges = []
    for name, start in (("first", 0), ("last", shape[axis] - 1)):
        starts = [start if d == axis else 0 for d in range(len(shape))]
        edges.append(builder.op(ts.Op.SLICE, [source, builder.shape_const(starts, f"{stem}_{name}_start"),
                                              builder.shape_const(list(edge_shape), f"{stem}_{name}_size")],
                                edge_shape, ts.DType.INT8, None, f"{stem}_{name}"))
    padded = tuple(s + 2 if d == axis else s for d, s in enumerate(shape))
    name = builder.op(ts.Op.CONCAT, [edges[0], source, edges[1]], padded, ts.DType.INT8, attribute("Concat", axis),
                      f"{stem}_edges")
    return name, padded


def emit_bilinear_2x_as_filter(ctx: LoweringContext, x: QTensor, stem: str) -> tuple[str, tuple[int, ...], int]:
    """Bilinear 2x upsampling (half-pixel) without a bilinear RESIZE, for Ethos-U55/U65:
    ``out[2i] = (x[i-1] + 3 x[i]) / 4`` and ``out[2i+1] = (3 x[i] + x[i+1]) / 4`` (edges
    repeated) is the nearest 2x upsampling ``u`` filtered with [1, 2, 1] / 4, because
    ``u[2i] = u[2i+1] = x[i]``. In 2-D: RESIZE NEAREST, the edge rows and columns repeated,
    a 3x3 DEPTHWISE_CONV2D with weights [1, 2, 1] x [1, 2, 1] into int32 (zero point
    subtracted). Returns (tensor, NHWC shape, weight total 16)."""
    from kiln.backends.arm.tosa.ops.conv import emit_conv2d

    n, c, h, w = x.shape
    nearest, shape, _, _ = emit_resize(ctx, x, Upsampling("nearest", (h, w), (2 * h, 2 * w)), f"{stem}_nearest")
    padded, padded_shape = _edge_rows(ctx, nearest, shape, 1, f"{stem}_rows")
    padded, padded_shape = _edge_rows(ctx, padded, padded_shape, 2, f"{stem}_columns")
    taps = np.array([1, 2, 1], np.int8)
    weights = np.broadcast_to(np.outer(taps, taps)[:, :, None, None], (3, 3, c, 1)).astype(np.int8)
    result, result_shape = emit_conv2d(ctx.builder, padded, padded_shape, x.zero_point, weights,
                                       np.zeros(c, np.int32), (0, 0, 0, 0), (1, 1), (1, 1), True, f"{stem}_filter")
    return result, result_shape, int(weights[:, :, 0, 0].sum())


def lower_upsampling(ctx: LoweringContext, node: torch.fx.Node, x: QTensor, upsampling: Upsampling,
                     out_node: torch.fx.Node | None) -> None:
    """Binds ``node`` (nearest, same quantization) or the quantize node after it (bilinear)."""
    reason = check_upsampling(upsampling, ctx.compile_spec)
    if reason is not None:
        raise ctx.fail(node, reason)
    stem = ctx.stem(node)
    if upsampling.mode == "bilinear" and bilinear_as_filter(ctx.compile_spec):
        result, shape, total = emit_bilinear_2x_as_filter(ctx, x, stem)
        dtype, zero_point = ts.DType.INT32, 0  # the filter subtracted the zero point
    else:
        result, shape, dtype, total = emit_resize(ctx, x, upsampling, stem)
        zero_point = x.zero_point
    logical = (shape[0], shape[3], shape[1], shape[2])
    if upsampling.mode == "nearest" and out_node is None:
        ctx.bind(node, QTensor(result, logical, x.dtype, x.scale, x.zero_point))
        return
    out = ctx.output_quant(node) if out_node is None else ctx.output_quant_at(out_node)
    if dtype == ts.DType.INT32 and zero_point:  # int32 RESCALE inputs have zero point 0
        offset = ctx.builder.const(np.full((1, 1, 1, 1), -zero_point * total, np.int32), f"{stem}_zp")
        result = ctx.builder.op(ts.Op.ADD, [result, offset], shape, dtype, None, f"{stem}_centred")
        zero_point = 0
    ctx.finish(out.node, out, result, shape, dtype, x.scale / total, zero_point, logical_shape=logical)


@register(aten.upsample_nearest2d.vec, aten.upsample_nearest2d.default, check=check_resize)
def lower_upsample_nearest(ctx: LoweringContext, node: torch.fx.Node) -> None:
    """Picks input values: the result keeps the input's quantization."""
    _lower_upsample_node(ctx, node)


@register(aten.upsample_bilinear2d.vec, check=check_resize)
def lower_upsample_bilinear(ctx: LoweringContext, node: torch.fx.Node) -> None:
    _lower_upsample_node(ctx, node)


def _lower_upsample_node(ctx: LoweringContext, node: torch.fx.Node) -> None:
    upsampling = _of_node(node)
    if upsampling is None:
        raise ctx.fail(node, "only upsampling of rank-4 (NCHW) tensors is lowered")
    lower_upsampling(ctx, node, ctx.qtensor(node.args[0], node), upsampling, None)


@register(*_INDEX_TARGETS, check=check_index)
def lower_index(ctx: LoweringContext, node: torch.fx.Node) -> None:
    """The first index read of an upsampling's quantized form: the whole region -> RESIZE."""
    region = upsample_region(node, ctx.constants)
    if region is None:
        raise ctx.fail(node, "an index with computed indices is lowered only where it is an upsampling")
    x = ctx.qtensor(region.source, node)
    ctx.consumed.update(region.nodes)
    lower_upsampling(ctx, node, x, region.upsampling, region.quantize)
