"""A MobileNetV2-style block in one graph (expand 1x1 → depthwise 3x3 → project 1x1 →
residual add → global average pool → fully connected): multi-operation streams with
intermediate tensors (NHCWB16), weight DMA into fast scratch on Ethos-U65, bit for bit."""

from __future__ import annotations

from typing import Any

import numpy as np


def _conv(g: Any, ts: Any, rng: np.random.Generator, x: str, shape: list[int], n_out: int,
          kernel: int, stride: int, depthwise: bool, relu6: bool, in_zp: int, out_zp: int,
          output: bool = False) -> tuple[str, list[int]]:
    n, h, w, c = shape
    # TOSA wants exact output sizes: stride 2 pads only bottom/right (as TFLite SAME does).
    pads = [kernel // 2] * 4 if stride == 1 else [0, kernel // 2, 0, kernel // 2]
    oh = (h + pads[0] + pads[1] - kernel) // stride + 1
    ow = (w + pads[2] + pads[3] - kernel) // stride + 1
    if depthwise:
        weights = rng.integers(-127, 128, (kernel, kernel, c, 1), dtype=np.int8)
        n_out = c
    else:
        weights = rng.integers(-127, 128, (n_out, kernel, kernel, c), dtype=np.int8)
    acc = g.tensor([n, oh, ow, n_out], ts.DType.INT32)
    attr = ts.TosaSerializerAttribute()
    args = dict(pad=pads, stride=[stride, stride], dilation=[1, 1], local_bound=False, acc_type=ts.DType.INT32)
    inputs = [x, g.const(weights, ts.DType.INT8), g.const(rng.integers(-2000, 2000, n_out, dtype=np.int32), ts.DType.INT32),
              g.const(np.array([in_zp], np.int8), ts.DType.INT8), g.const(np.array([0], np.int8), ts.DType.INT8)]
    if depthwise:
        attr.DepthwiseConv2dAttribute(**args)
        g.op(ts.Op.DEPTHWISE_CONV2D, inputs, [acc], attr)
    else:
        attr.Conv2dAttribute(**args)
        g.op(ts.Op.CONV2D, inputs, [acc], attr)
    fan_in = kernel * kernel * (1 if depthwise else c)
    shift = 30 + int(np.log2(fan_in * 128 * 128) / 2) + 10
    out = g.rescale(acc, [n, oh, ow, n_out], ts.DType.INT32, ts.DType.INT8,
                    rng.integers(1 << 29, 1 << 31, n_out).tolist(), [shift] * n_out, 0, out_zp, output=output and not relu6)
    if relu6:
        clamped = g.tensor([n, oh, ow, n_out], ts.DType.INT8, output=output)
        cattr = ts.TosaSerializerAttribute()
        cattr.ClampAttribute(list(np.array([out_zp], np.int8).tobytes()), list(np.array([100], np.int8).tobytes()),
                             ts.NanPropagationMode.PROPAGATE)
        g.op(ts.Op.CLAMP, [out], [clamped], cattr)
        out = clamped
    return out, [n, oh, ow, n_out]


def test_mobilenet_block(vnpu_tools: Any, target: str) -> None:
    ts = vnpu_tools.ts
    rng = np.random.default_rng(11)
    g = vnpu_tools.Graph()
    shape = [1, 10, 10, 16]
    x = g.input(rng.integers(-128, 128, shape, dtype=np.int8))
    e, es = _conv(g, ts, rng, x, shape, 64, 1, 1, False, True, in_zp=-3, out_zp=-128)
    d, ds = _conv(g, ts, rng, e, es, 64, 3, 1, True, True, in_zp=-128, out_zp=-128)
    p, ps = _conv(g, ts, rng, d, ds, 16, 1, 1, False, False, in_zp=-128, out_zp=4)
    # Residual add in the TOSA int8 pattern: rescale both to int32, add, rescale back.
    a32 = g.rescale(x, shape, ts.DType.INT8, ts.DType.INT32, [1 << 30], [10], -3, 0)
    b32 = g.rescale(p, ps, ts.DType.INT8, ts.DType.INT32, [1518500250], [11], 4, 0)
    s32 = g.tensor(shape, ts.DType.INT32)
    g.op(ts.Op.ADD, [a32, b32], [s32])
    r = g.rescale(s32, shape, ts.DType.INT32, ts.DType.INT8, [1431655765], [50], 0, 2)
    s2, s2s = _conv(g, ts, rng, r, shape, 32, 3, 2, False, True, in_zp=2, out_zp=-128)
    pooled = g.tensor([1, 1, 1, 32], ts.DType.INT8)
    attr = ts.TosaSerializerAttribute()
    attr.AvgPool2dAttribute([s2s[1], s2s[2]], [1, 1], [0, 0, 0, 0], ts.DType.INT32)
    g.op(ts.Op.AVG_POOL2D, [s2, g.const(np.array([-128], np.int8), ts.DType.INT8),
                            g.const(np.array([-128], np.int8), ts.DType.INT8)], [pooled], attr)
    _conv(g, ts, rng, pooled, [1, 1, 1, 32], 10, 1, 1, False, False, in_zp=-128, out_zp=0, output=True)
    counters = vnpu_tools.assert_bit_exact(g, target)
    assert counters["operations"] >= 6
    assert counters["macs"] > 10 * 10 * 16 * 64


def test_conv_depthwise_residual_add(vnpu_tools: Any, target: str) -> None:
    """conv → depthwise → residual ADD with Kiln's add lowering (the larger-scale operand
    times exactly 2**19): Vela cascades the depthwise and the ADD per row and fuses the
    RESCALEs into an ADD that scales one operand (OPA_32/OPB_32). mv2's residual blocks."""
    from kiln.backends.arm.tosa.ops.rescale import quantize_scale

    ts = vnpu_tools.ts
    rng = np.random.default_rng(12)
    g = vnpu_tools.Graph()
    shape = [1, 12, 12, 3]
    x = g.input(rng.integers(-128, 128, shape, dtype=np.int8))
    y, ys = _conv(g, ts, rng, x, shape, 8, 3, 1, False, True, in_zp=8, out_zp=-128)
    z, zs = _conv(g, ts, rng, y, ys, 8, 3, 1, True, True, in_zp=-128, out_zp=-128)
    scale_z, scale_y = 0.041, 0.125  # z has the smaller scale: Vela scales the IFM
    common = 2.0 * max(scale_z, scale_y) / (1 << 20)
    (mz, sz), (my, sy) = quantize_scale(scale_z / common), quantize_scale(scale_y / common)
    z32 = g.rescale(z, zs, ts.DType.INT8, ts.DType.INT32, [mz], [sz], -128, 0, double_round=False)
    y32 = g.rescale(y, ys, ts.DType.INT8, ts.DType.INT32, [my], [sy], -128, 0, double_round=False)
    s32 = g.tensor(zs, ts.DType.INT32)
    g.op(ts.Op.ADD, [z32, y32], [s32])
    mo, so = quantize_scale(common / 0.16)
    g.rescale(s32, zs, ts.DType.INT32, ts.DType.INT8, [mo], [so], 0, -128, double_round=False, output=True)
    vnpu_tools.assert_bit_exact(g, target)
