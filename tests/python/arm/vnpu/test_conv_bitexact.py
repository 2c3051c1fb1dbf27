"""CONV2D / DEPTHWISE_CONV2D / FULLY_CONNECTED (as 1x1 CONV2D) on the virtual Ethos-U vs the
TOSA reference model, bit for bit, on ethos-u55-128, ethos-u55-64 and ethos-u65-256."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest


def _conv_graph(t: Any, *, n_in: int, n_out: int, hw: tuple[int, int], kernel: tuple[int, int],
                stride: tuple[int, int] = (1, 1), dilation: tuple[int, int] = (1, 1),
                pad: tuple[int, int, int, int] = (0, 0, 0, 0), in_zp: int = 0, out_zp: int = 0,
                depthwise: bool = False, multiplier: int = 1, per_channel: bool = True,
                relu6: bool = False, seed: int = 0, scale_boost: int = 0) -> Any:
    ts = t.ts
    rng = np.random.default_rng(seed)
    g = t.Graph()
    h, w = hw
    x = rng.integers(-128, 128, (1, h, w, n_in), dtype=np.int8)
    xi = g.input(x)
    kh, kw = kernel
    if depthwise:
        n_out = n_in * multiplier
        weights = rng.integers(-127, 128, (kh, kw, n_in, multiplier), dtype=np.int8)
    else:
        weights = rng.integers(-127, 128, (n_out, kh, kw, n_in), dtype=np.int8)
    bias = rng.integers(-3000, 3000, n_out, dtype=np.int32)
    oh = (h + pad[0] + pad[1] - dilation[0] * (kh - 1) - 1) // stride[0] + 1
    ow = (w + pad[2] + pad[3] - dilation[1] * (kw - 1) - 1) // stride[1] + 1
    acc = g.tensor([1, oh, ow, n_out], ts.DType.INT32)
    attr = ts.TosaSerializerAttribute()
    izp = g.const(np.array([in_zp], np.int8), ts.DType.INT8)
    wzp = g.const(np.array([0], np.int8), ts.DType.INT8)
    wc = g.const(weights, ts.DType.INT8)
    bc = g.const(bias, ts.DType.INT32)
    if depthwise:
        attr.DepthwiseConv2dAttribute(pad=list(pad), stride=list(stride), dilation=list(dilation),
                                      local_bound=False, acc_type=ts.DType.INT32)
        g.op(ts.Op.DEPTHWISE_CONV2D, [xi, wc, bc, izp, wzp], [acc], attr)
    else:
        attr.Conv2dAttribute(pad=list(pad), stride=list(stride), dilation=list(dilation),
                             local_bound=False, acc_type=ts.DType.INT32)
        g.op(ts.Op.CONV2D, [xi, wc, bc, izp, wzp], [acc], attr)
    fan_in = kh * kw * (1 if depthwise else n_in)
    # Scale so that outputs use the int8 range (and saturate at both ends now and then).
    base_shift = 20 + int(np.log2(fan_in * 128 * 128) / 2) - scale_boost
    n_scales = n_out if per_channel else 1
    multipliers = rng.integers(1 << 29, (1 << 31) - 1, n_scales).tolist()
    shifts = (base_shift + 10 + rng.integers(0, 3, n_scales)).tolist()
    out = g.rescale(acc, [1, oh, ow, n_out], ts.DType.INT32, ts.DType.INT8, multipliers, shifts, 0, out_zp,
                    output=not relu6)
    if relu6:
        clamped = g.tensor([1, oh, ow, n_out], ts.DType.INT8, output=True)
        cattr = ts.TosaSerializerAttribute()
        cattr.ClampAttribute(list(np.array([out_zp], np.int8).tobytes()), list(np.array([out_zp + 90], np.int8).tobytes()), ts.NanPropagationMode.PROPAGATE)
        g.op(ts.Op.CLAMP, [out], [clamped], cattr)
    return g


CONV_CASES = {
    "1x1": dict(n_in=16, n_out=24, hw=(6, 6), kernel=(1, 1)),
    "3x3_pad_all": dict(n_in=8, n_out=16, hw=(7, 9), kernel=(3, 3), pad=(1, 1, 1, 1), in_zp=-7, out_zp=5),
    "3x3_stride2": dict(n_in=16, n_out=8, hw=(9, 9), kernel=(3, 3), stride=(2, 2), pad=(1, 1, 1, 1), in_zp=3),
    "3x3_asym_pad": dict(n_in=4, n_out=8, hw=(6, 5), kernel=(3, 3), pad=(0, 2, 1, 0)),
    "5x3_dilation2": dict(n_in=8, n_out=8, hw=(12, 10), kernel=(3, 3), dilation=(2, 2), pad=(2, 2, 2, 2)),
    "deep_ifm": dict(n_in=72, n_out=40, hw=(4, 4), kernel=(3, 3), pad=(1, 1, 1, 1), in_zp=-128),
    "first_layer_rgb": dict(n_in=3, n_out=32, hw=(16, 16), kernel=(3, 3), stride=(2, 2), pad=(0, 1, 0, 1)),
    "saturate": dict(n_in=16, n_out=16, hw=(5, 5), kernel=(3, 3), pad=(1, 1, 1, 1), scale_boost=6, out_zp=-20),
    "relu6_fused": dict(n_in=16, n_out=16, hw=(5, 5), kernel=(1, 1), relu6=True, out_zp=-128),
    "per_tensor": dict(n_in=8, n_out=8, hw=(4, 4), kernel=(3, 3), pad=(1, 1, 1, 1), per_channel=False),
    "fully_connected": dict(n_in=64, n_out=10, hw=(1, 1), kernel=(1, 1)),
}

DEPTHWISE_CASES = {
    "dw3x3": dict(n_in=16, n_out=16, hw=(8, 8), kernel=(3, 3), pad=(1, 1, 1, 1), in_zp=4),
    "dw3x3_stride2": dict(n_in=24, n_out=24, hw=(9, 9), kernel=(3, 3), stride=(2, 2), pad=(1, 1, 1, 1)),
    "dw_multiplier2": dict(n_in=8, n_out=16, hw=(5, 5), kernel=(3, 3), pad=(1, 1, 1, 1), multiplier=2),
    "dw5x5_dilation2": dict(n_in=8, n_out=8, hw=(10, 10), kernel=(3, 3), dilation=(2, 2), pad=(2, 2, 2, 2)),
}


@pytest.mark.parametrize("case", sorted(CONV_CASES))
def test_conv2d(vnpu_tools: Any, target: str, case: str) -> None:
    graph = _conv_graph(vnpu_tools, **CONV_CASES[case])
    counters = vnpu_tools.assert_bit_exact(graph, target)
    assert counters["macs"] > 0


@pytest.mark.parametrize("case", sorted(DEPTHWISE_CASES))
def test_depthwise_conv2d(vnpu_tools: Any, target: str, case: str) -> None:
    graph = _conv_graph(vnpu_tools, depthwise=True, **DEPTHWISE_CASES[case])
    vnpu_tools.assert_bit_exact(graph, target)
