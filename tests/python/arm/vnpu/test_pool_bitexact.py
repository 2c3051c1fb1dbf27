"""AVG_POOL2D, MAX_POOL2D, mean-style REDUCE_SUM, CONCAT and TRANSPOSE on the virtual
Ethos-U vs the TOSA reference model, bit for bit."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

POOL_CASES = {
    "2x2_s2": dict(shape=[1, 8, 8, 16], kernel=[2, 2], stride=[2, 2], pad=[0, 0, 0, 0]),
    "3x3_s1_pad": dict(shape=[1, 6, 7, 8], kernel=[3, 3], stride=[1, 1], pad=[1, 1, 1, 1]),
    "3x3_s2_asym": dict(shape=[1, 9, 8, 8], kernel=[3, 3], stride=[2, 2], pad=[1, 1, 0, 1]),
    "global_7x7": dict(shape=[1, 7, 7, 32], kernel=[7, 7], stride=[1, 1], pad=[0, 0, 0, 0]),
}


def _pool_graph(t: Any, kind: str, shape: list[int], kernel: list[int], stride: list[int],
                pad: list[int], in_zp: int = -3, out_zp: int = -3) -> Any:
    ts = t.ts
    rng = np.random.default_rng(5)
    g = t.Graph()
    x = g.input(rng.integers(-128, 128, shape, dtype=np.int8))
    oh = (shape[1] + pad[0] + pad[1] - kernel[0]) // stride[0] + 1
    ow = (shape[2] + pad[2] + pad[3] - kernel[1]) // stride[1] + 1
    out = g.tensor([1, oh, ow, shape[3]], ts.DType.INT8, output=True)
    attr = ts.TosaSerializerAttribute()
    if kind == "avg":
        attr.AvgPool2dAttribute(kernel, stride, pad, ts.DType.INT32)
        zps = [g.const(np.array([in_zp], np.int8), ts.DType.INT8), g.const(np.array([out_zp], np.int8), ts.DType.INT8)]
        g.op(ts.Op.AVG_POOL2D, [x] + zps, [out], attr)
    else:
        attr.MaxPool2dAttribute(kernel, stride, pad, ts.NanPropagationMode.PROPAGATE)
        g.op(ts.Op.MAX_POOL2D, [x], [out], attr)
    return g


@pytest.mark.parametrize("case", sorted(POOL_CASES))
def test_avg_pool2d(vnpu_tools: Any, target: str, case: str) -> None:
    vnpu_tools.assert_bit_exact(_pool_graph(vnpu_tools, "avg", **POOL_CASES[case]), target)


@pytest.mark.parametrize("case", sorted(POOL_CASES))
def test_max_pool2d(vnpu_tools: Any, target: str, case: str) -> None:
    vnpu_tools.assert_bit_exact(_pool_graph(vnpu_tools, "max", **POOL_CASES[case]), target)


@pytest.mark.parametrize("axis", [1, 2, 3])
def test_reduce_sum(vnpu_tools: Any, target: str, axis: int) -> None:
    ts = vnpu_tools.ts
    rng = np.random.default_rng(6)
    g = vnpu_tools.Graph()
    shape = [1, 4, 5, 16]
    x = g.input(rng.integers(-128, 128, shape, dtype=np.int8))
    x32 = g.rescale(x, shape, ts.DType.INT8, ts.DType.INT32, [1 << 30], [30], 7, 0)
    out_shape = list(shape)
    out_shape[axis] = 1
    s = g.tensor(out_shape, ts.DType.INT32)
    attr = ts.TosaSerializerAttribute()
    attr.ReduceSumAttribute(axis)
    g.op(ts.Op.REDUCE_SUM, [x32], [s], attr)
    g.rescale(s, out_shape, ts.DType.INT32, ts.DType.INT8, [1431655765], [33], 0, -1, output=True)
    vnpu_tools.assert_bit_exact(g, target)


def test_concat(vnpu_tools: Any, target: str) -> None:
    ts = vnpu_tools.ts
    rng = np.random.default_rng(7)
    g = vnpu_tools.Graph()
    a = g.input(rng.integers(-128, 128, [1, 4, 4, 8], dtype=np.int8))
    b = g.input(rng.integers(-128, 128, [1, 4, 4, 24], dtype=np.int8))
    out = g.tensor([1, 4, 4, 32], ts.DType.INT8, output=True)
    attr = ts.TosaSerializerAttribute()
    attr.ConcatAttribute(3)
    g.op(ts.Op.CONCAT, [a, b], [out], attr)
    vnpu_tools.assert_bit_exact(g, target)


@pytest.mark.parametrize("perms", [[0, 2, 1, 3], [0, 3, 1, 2]])
def test_transpose(vnpu_tools: Any, target: str, perms: list[int]) -> None:
    ts = vnpu_tools.ts
    rng = np.random.default_rng(8)
    g = vnpu_tools.Graph()
    shape = [1, 3, 5, 8]
    x = g.input(rng.integers(-128, 128, shape, dtype=np.int8))
    out = g.tensor([shape[p] for p in perms], ts.DType.INT8, output=True)
    attr = ts.TosaSerializerAttribute()
    attr.TransposeAttribute(perms)
    g.op(ts.Op.TRANSPOSE, [x], [out], attr)
    vnpu_tools.assert_bit_exact(g, target)
