"""16-bit activations on the virtual Ethos-U vs the TOSA reference model, bit for bit, on
ethos-u55-128, ethos-u55-64 and ethos-u65-256: int16 x int8 convolutions with INT48
accumulators (16-bit RESCALE multipliers), int16 elementwise ADD/MUL through int32,
pooling, RESCALE and CLAMP. These hand-built graphs pin down the vNPU's 16-bit IFM, OFM
and output-stage paths; Kiln's own a16w8 lowering is checked end to end in
tests/python/arm/a16w8. So is the 16-bit TABLE (interpolating 512-entry LUT).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

I16_MIN, I16_MAX = -32768, 32768


def _int16(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return rng.integers(I16_MIN, I16_MAX, shape).astype(np.int16)


def _attribute(ts: Any, kind: str, *args: Any, **kwargs: Any) -> Any:
    attr = ts.TosaSerializerAttribute()
    getattr(attr, kind)(*args, **kwargs)
    return attr


def _conv16(t: Any, depthwise: bool, kernel: int, stride: int, n_in: int, n_out: int, seed: int) -> Any:
    ts = t.ts
    rng = np.random.default_rng(seed)
    g = t.Graph()
    h = w = 7
    x = g.input(_int16(rng, (1, h, w, n_in)))
    pad = kernel // 2
    oh = (h + 2 * pad - kernel) // stride + 1
    n_out = n_in if depthwise else n_out
    weights = (rng.integers(-127, 128, (kernel, kernel, n_in, 1)) if depthwise
               else rng.integers(-127, 128, (n_out, kernel, kernel, n_in))).astype(np.int8)
    acc = g.tensor([1, oh, oh, n_out], ts.DType.INT48)
    kind, op = ("DepthwiseConv2dAttribute", ts.Op.DEPTHWISE_CONV2D) if depthwise else ("Conv2dAttribute", ts.Op.CONV2D)
    attr = _attribute(ts, kind, pad=[pad] * 4, stride=[stride] * 2, dilation=[1, 1], local_bound=False,
                      acc_type=ts.DType.INT48)
    g.op(op, [x, g.const(weights, ts.DType.INT8), g.const(rng.integers(-100000, 100000, n_out), ts.DType.INT48),
              g.const(np.array([0], np.int16), ts.DType.INT16), g.const(np.array([0], np.int8), ts.DType.INT8)],
         [acc], attr)
    fan_in = kernel * kernel * (1 if depthwise else n_in)
    shift = 14 + int(np.log2(fan_in * 128) / 2) + 3  # outputs span the int16 range and saturate at times
    g.rescale(acc, [1, oh, oh, n_out], ts.DType.INT48, ts.DType.INT16, rng.integers(1 << 13, 1 << 15, n_out).tolist(),
              [shift] * n_out, 0, 0, double_round=False, output=True)
    return g


def _binary16(t: Any, op_name: str, broadcast: bool, seed: int) -> Any:
    ts = t.ts
    rng = np.random.default_rng(seed)
    g = t.Graph()
    shape, other = [1, 5, 6, 7], [1, 1, 1, 7] if broadcast else [1, 5, 6, 7]
    a = g.rescale(g.input(_int16(rng, tuple(shape))), shape, ts.DType.INT16, ts.DType.INT32, [1 << 30], [30], 0, 0,
                  double_round=False)
    b = g.rescale(g.input(_int16(rng, tuple(other))), other, ts.DType.INT16, ts.DType.INT32, [1518500250], [31], 0, 0,
                  double_round=False)
    result = g.tensor(shape, ts.DType.INT32)
    if op_name == "MUL":
        g.op(ts.Op.MUL, [a, b, g.const(np.array([0], np.int8), ts.DType.INT8)], [result])
        multiplier, shift = 1518500250, 45
    else:
        g.op(getattr(ts.Op, op_name), [a, b], [result])
        multiplier, shift = 1431655765, 31
    g.rescale(result, shape, ts.DType.INT32, ts.DType.INT16, [multiplier], [shift], 0, 0, double_round=False,
              output=True)
    return g


def _pool16(t: Any, op_name: str, seed: int) -> Any:
    ts = t.ts
    rng = np.random.default_rng(seed)
    g = t.Graph()
    x = g.input(_int16(rng, (1, 8, 8, 5)))
    out = g.tensor([1, 4, 4, 5], ts.DType.INT16, output=True)
    if op_name == "MAX_POOL2D":
        attr = _attribute(ts, "MaxPool2dAttribute", [2, 2], [2, 2], [0, 0, 0, 0], ts.NanPropagationMode.PROPAGATE)
        g.op(ts.Op.MAX_POOL2D, [x], [out], attr)
    else:
        zero = g.const(np.array([0], np.int16), ts.DType.INT16)
        attr = _attribute(ts, "AvgPool2dAttribute", [3, 3], [2, 2], [1, 0, 1, 0], ts.DType.INT32)
        g.op(ts.Op.AVG_POOL2D, [x, zero, g.const(np.array([0], np.int16), ts.DType.INT16)], [out], attr)
    return g


def _unary16(t: Any, op_name: str, seed: int) -> Any:
    ts = t.ts
    rng = np.random.default_rng(seed)
    g = t.Graph()
    shape = [1, 5, 6, 7]
    x = g.input(_int16(rng, tuple(shape)))
    if op_name == "RESCALE":
        g.rescale(x, shape, ts.DType.INT16, ts.DType.INT16, [1518500250], [31], 0, 0, output=True)
    else:
        out = g.tensor(shape, ts.DType.INT16, output=True)
        low, high = (np.array([v], np.int16).tobytes() for v in (-1000, 20000))
        g.op(ts.Op.CLAMP, [x], [out], _attribute(ts, "ClampAttribute", list(low), list(high),
                                                 ts.NanPropagationMode.PROPAGATE))
    return g


CASES = {
    "conv3x3": lambda t: _conv16(t, False, 3, 1, 8, 16, seed=1),
    "conv1x1_stride2": lambda t: _conv16(t, False, 1, 2, 24, 8, seed=2),
    "depthwise3x3_stride2": lambda t: _conv16(t, True, 3, 2, 8, 8, seed=3),
    "add": lambda t: _binary16(t, "ADD", False, seed=4),
    "sub_broadcast": lambda t: _binary16(t, "SUB", True, seed=5),
    "mul_broadcast": lambda t: _binary16(t, "MUL", True, seed=6),
    "max_pool": lambda t: _pool16(t, "MAX_POOL2D", seed=7),
    "avg_pool_padded": lambda t: _pool16(t, "AVG_POOL2D", seed=8),
    "rescale": lambda t: _unary16(t, "RESCALE", seed=9),
    "clamp": lambda t: _unary16(t, "CLAMP", seed=10),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_int16(vnpu_tools: Any, target: str, case: str) -> None:
    vnpu_tools.assert_bit_exact(CASES[case](vnpu_tools), target)


@pytest.mark.parametrize("rescaled", [False, True])
def test_int16_table(vnpu_tools: Any, target: str, rescaled: bool) -> None:
    """TOSA's interpolating int16 TABLE (513 entries): its int32 result as it is, or rescaled
    by 2^-7 to int16 (what Kiln's 16-bit tables emit; Vela folds it into the lookup)."""
    ts = vnpu_tools.ts
    g = vnpu_tools.Graph()
    x = g.input(_int16(np.random.default_rng(11), (1, 4, 5, 6)))
    table = np.round(np.tanh(np.linspace(-4, 4, 513)) * 32767).astype(np.int16)
    looked_up = g.tensor([1, 4, 5, 6], ts.DType.INT32, output=not rescaled)
    g.op(ts.Op.TABLE, [x, g.const(table, ts.DType.INT16)], [looked_up])
    if rescaled:
        g.rescale(looked_up, [1, 4, 5, 6], ts.DType.INT32, ts.DType.INT16, [1 << 30], [37], 0, 0,
                  double_round=False, output=True)
    vnpu_tools.assert_bit_exact(g, target)
