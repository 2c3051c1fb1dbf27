"""Kernels wider or taller than 64 (the pooling over a ViT's 197 tokens, 1-D convolutions
with long kernels over time) on the virtual Ethos-U vs the TOSA reference model, bit for
bit, on every configuration. Each case first checks that Vela's stream really carries the
large kernel (KERNEL_WIDTH_M1 / KERNEL_HEIGHT_M1 of 64 or more), so that a Vela that split
it would not make the test pass vacuously; and that the work memory the virtual NPU was
given (sized from the stream) covers what it used."""

from __future__ import annotations

import struct
from typing import Any

import numpy as np
import pytest

from kiln import _runtime

POOL_CASES = {
    "vit_tokens_1x197": dict(shape=[1, 1, 197, 16], kernel=[1, 197]),
    "tall_80x1": dict(shape=[1, 80, 3, 8], kernel=[80, 1]),
}
CONV_CASES = {
    "wide_1x80": dict(shape=[1, 1, 100, 8], kernel=[1, 80], n_out=16),
    "tall_72x1": dict(shape=[1, 75, 2, 8], kernel=[72, 1], n_out=8),
}


def _largest_kernel_extent(command_stream: bytes, target: str) -> int:
    """The largest KERNEL_HEIGHT_M1 / KERNEL_WIDTH_M1 + 1 a (COP1) stream sets."""
    codes = _runtime.vnpu_command_codes(target)
    wanted = {codes["NPU_SET_KERNEL_HEIGHT_M1"][1], codes["NPU_SET_KERNEL_WIDTH_M1"][1]}
    words = struct.unpack(f"<{len(command_stream) // 4}I", command_stream)
    largest, i = 0, 0
    while i < len(words):
        word = words[i]
        code, param = word & 0x3FF, word >> 16
        if code in wanted and not word & 0x4000:
            largest = max(largest, param + 1)
        i += 2 if word & 0x4000 else 1
    return largest


def _assert_runs_large_kernel(t: Any, graph: Any, target: str, extent: int) -> None:
    from kiln.backends.arm.vnpu import load_vela_raw

    raw = load_vela_raw(t.compile_with_vela(graph.serialize(), target))
    assert _largest_kernel_extent(raw.command_stream, target) >= extent, "Vela split the kernel"
    counters = t.assert_bit_exact(graph, target)
    assert 0 < counters["work_memory_used"] <= counters["work_memory_bytes"]


def _pool_graph(t: Any, kind: str, shape: list[int], kernel: list[int]) -> Any:
    ts = t.ts
    rng = np.random.default_rng(11)
    g = t.Graph()
    x = g.input(rng.integers(-128, 128, shape, dtype=np.int8))
    out = g.tensor([1, shape[1] - kernel[0] + 1, shape[2] - kernel[1] + 1, shape[3]], ts.DType.INT8, output=True)
    attr = ts.TosaSerializerAttribute()
    if kind == "avg":
        attr.AvgPool2dAttribute(kernel, [1, 1], [0, 0, 0, 0], ts.DType.INT32)
        zps = [g.const(np.array([-5], np.int8), ts.DType.INT8), g.const(np.array([3], np.int8), ts.DType.INT8)]
        g.op(ts.Op.AVG_POOL2D, [x] + zps, [out], attr)
    else:
        attr.MaxPool2dAttribute(kernel, [1, 1], [0, 0, 0, 0], ts.NanPropagationMode.PROPAGATE)
        g.op(ts.Op.MAX_POOL2D, [x], [out], attr)
    return g


def _conv_graph(t: Any, shape: list[int], kernel: list[int], n_out: int) -> Any:
    ts = t.ts
    rng = np.random.default_rng(12)
    g = t.Graph()
    x = g.input(rng.integers(-128, 128, shape, dtype=np.int8))
    kh, kw = kernel
    weights = rng.integers(-127, 128, (n_out, kh, kw, shape[3]), dtype=np.int8)
    bias = rng.integers(-3000, 3000, n_out, dtype=np.int32)
    oh, ow = shape[1] - kh + 1, shape[2] - kw + 1
    acc = g.tensor([1, oh, ow, n_out], ts.DType.INT32)
    attr = ts.TosaSerializerAttribute()
    attr.Conv2dAttribute(pad=[0, 0, 0, 0], stride=[1, 1], dilation=[1, 1], local_bound=False, acc_type=ts.DType.INT32)
    inputs = [x, g.const(weights, ts.DType.INT8), g.const(bias, ts.DType.INT32),
              g.const(np.array([-9], np.int8), ts.DType.INT8), g.const(np.array([0], np.int8), ts.DType.INT8)]
    g.op(ts.Op.CONV2D, inputs, [acc], attr)
    # Scale the int32 sums (about sqrt(fan-in) * 128 * 128) into the int8 range.
    shift = 20 + int(np.log2(kh * kw * shape[3] * 128 * 128) / 2) + 10
    multipliers = rng.integers(1 << 29, (1 << 31) - 1, n_out).tolist()
    g.rescale(acc, [1, oh, ow, n_out], ts.DType.INT32, ts.DType.INT8, multipliers, [shift] * n_out, 0, 4, output=True)
    return g


@pytest.mark.parametrize("kind", ["avg", "max"])
@pytest.mark.parametrize("case", sorted(POOL_CASES))
def test_pooling_with_kernels_over_64(vnpu_tools: Any, target: str, case: str, kind: str) -> None:
    spec = POOL_CASES[case]
    _assert_runs_large_kernel(vnpu_tools, _pool_graph(vnpu_tools, kind, **spec), target, max(spec["kernel"]))


@pytest.mark.parametrize("case", sorted(CONV_CASES))
def test_convolution_with_kernels_over_64(vnpu_tools: Any, target: str, case: str) -> None:
    spec = CONV_CASES[case]
    _assert_runs_large_kernel(vnpu_tools, _conv_graph(vnpu_tools, **spec), target, max(spec["kernel"]))
