"""Elementwise ops (quantized ADD/SUB/MUL as RESCALE→op→RESCALE, MAXIMUM/MINIMUM, CLAMP,
TABLE) and broadcasts on the virtual Ethos-U vs the TOSA reference model, bit for bit."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest


def _binary_graph(t: Any, op_name: str, shape_a: list[int], shape_b: list[int], *, zp_a: int = 3,
                  zp_b: int = -9, out_zp: int = -4, seed: int = 0) -> Any:
    ts = t.ts
    rng = np.random.default_rng(seed)
    g = t.Graph()
    a = g.input(rng.integers(-128, 128, shape_a, dtype=np.int8))
    b = g.input(rng.integers(-128, 128, shape_b, dtype=np.int8))
    out_shape = list(np.broadcast_shapes(tuple(shape_a), tuple(shape_b)))
    op = {"add": ts.Op.ADD, "sub": ts.Op.SUB, "mul": ts.Op.MUL}[op_name]
    if op_name == "mul":
        a32 = g.rescale(a, shape_a, ts.DType.INT8, ts.DType.INT32, [1 << 30], [30], zp_a, 0)
        b32 = g.rescale(b, shape_b, ts.DType.INT8, ts.DType.INT32, [1 << 30], [30], zp_b, 0)
        prod = g.tensor(out_shape, ts.DType.INT32)
        g.op(op, [a32, b32, g.const(np.array([0], np.int8), ts.DType.INT8)], [prod])
        mult, shift = 1518500250, 37
    else:
        # TFLite-style add: inputs shifted left by 20 bits, then rescaled to a common scale.
        a32 = g.rescale(a, shape_a, ts.DType.INT8, ts.DType.INT32, [1073741824], [10], zp_a, 0)
        b32 = g.rescale(b, shape_b, ts.DType.INT8, ts.DType.INT32, [1518500250], [11], zp_b, 0)
        prod = g.tensor(out_shape, ts.DType.INT32)
        g.op(op, [a32, b32], [prod])
        mult, shift = 1431655765, 50
    g.rescale(prod, out_shape, ts.DType.INT32, ts.DType.INT8, [mult], [shift], 0, out_zp, output=True)
    return g


BINARY_CASES = {
    "add": ("add", [1, 4, 5, 16], [1, 4, 5, 16]),
    "add_broadcast_c": ("add", [1, 4, 5, 16], [1, 1, 1, 16]),
    "add_broadcast_hw": ("add", [1, 4, 5, 8], [1, 4, 5, 1]),
    "add_broadcast_first": ("add", [1, 1, 1, 8], [1, 3, 3, 8]),
    "sub": ("sub", [1, 3, 6, 8], [1, 3, 6, 8]),
    "sub_broadcast": ("sub", [1, 3, 6, 8], [1, 1, 6, 8]),
    "mul": ("mul", [1, 4, 4, 8], [1, 4, 4, 8]),
    "mul_broadcast": ("mul", [1, 4, 4, 8], [1, 1, 1, 8]),
}


@pytest.mark.parametrize("case", sorted(BINARY_CASES))
def test_binary(vnpu_tools: Any, target: str, case: str) -> None:
    op, sa, sb = BINARY_CASES[case]
    vnpu_tools.assert_bit_exact(_binary_graph(vnpu_tools, op, sa, sb), target)


@pytest.mark.parametrize("op_name", ["maximum", "minimum"])
def test_min_max(vnpu_tools: Any, target: str, op_name: str) -> None:
    ts = vnpu_tools.ts
    rng = np.random.default_rng(1)
    g = vnpu_tools.Graph()
    shape = [1, 3, 4, 8]
    a = g.input(rng.integers(-128, 128, shape, dtype=np.int8))
    b = g.input(rng.integers(-128, 128, shape, dtype=np.int8))
    # TOSA 1.0 PRO-INT has MAXIMUM/MINIMUM on int32 only: rescale around them.
    a32 = g.rescale(a, shape, ts.DType.INT8, ts.DType.INT32, [1 << 30], [30], 5, 0)
    b32 = g.rescale(b, shape, ts.DType.INT8, ts.DType.INT32, [1 << 30], [30], -3, 0)
    m = g.tensor(shape, ts.DType.INT32)
    attr = ts.TosaSerializerAttribute()
    if op_name == "maximum":
        attr.MaximumAttribute(ts.NanPropagationMode.PROPAGATE)
    else:
        attr.MinimumAttribute(ts.NanPropagationMode.PROPAGATE)
    g.op(ts.Op.MAXIMUM if op_name == "maximum" else ts.Op.MINIMUM, [a32, b32], [m], attr)
    g.rescale(m, shape, ts.DType.INT32, ts.DType.INT8, [1 << 30], [30], 0, 2, output=True)
    vnpu_tools.assert_bit_exact(g, target)


@pytest.mark.parametrize("bounds", [(-128, 127), (-20, 90), (0, 127)])
def test_clamp(vnpu_tools: Any, target: str, bounds: tuple[int, int]) -> None:
    ts = vnpu_tools.ts
    rng = np.random.default_rng(2)
    g = vnpu_tools.Graph()
    shape = [1, 5, 5, 16]
    x = g.input(rng.integers(-128, 128, shape, dtype=np.int8))
    out = g.tensor(shape, ts.DType.INT8, output=True)
    attr = ts.TosaSerializerAttribute()
    attr.ClampAttribute(list(np.array([bounds[0]], np.int8).tobytes()),
                        list(np.array([bounds[1]], np.int8).tobytes()), ts.NanPropagationMode.PROPAGATE)
    g.op(ts.Op.CLAMP, [x], [out], attr)
    vnpu_tools.assert_bit_exact(g, target)


def test_table(vnpu_tools: Any, target: str) -> None:
    ts = vnpu_tools.ts
    rng = np.random.default_rng(3)
    g = vnpu_tools.Graph()
    shape = [1, 4, 4, 16]
    x = g.input(rng.integers(-128, 128, shape, dtype=np.int8))
    table = g.const(rng.integers(-128, 128, 256, dtype=np.int8), ts.DType.INT8)
    out = g.tensor(shape, ts.DType.INT8, output=True)
    g.op(ts.Op.TABLE, [x, table], [out])
    vnpu_tools.assert_bit_exact(g, target)


@pytest.mark.parametrize("in_zp,out_zp,mult,shift", [(0, 0, 1 << 30, 30), (-5, 17, 1518500250, 31),
                                                     (100, -100, 2000000000, 29)])
def test_rescale_int8(vnpu_tools: Any, target: str, in_zp: int, out_zp: int, mult: int, shift: int) -> None:
    ts = vnpu_tools.ts
    rng = np.random.default_rng(4)
    g = vnpu_tools.Graph()
    shape = [1, 4, 6, 8]
    x = g.input(rng.integers(-128, 128, shape, dtype=np.int8))
    g.rescale(x, shape, ts.DType.INT8, ts.DType.INT8, [mult], [shift], in_zp, out_zp, output=True)
    vnpu_tools.assert_bit_exact(g, target)


def _residual_graph(t: Any, op_name: str, scale_a: float, scale_b: float, shape_a: list[int],
                    shape_b: list[int], *, zp_a: int = -128, zp_b: int = 7, seed: int = 5) -> Any:
    """ADD/SUB as Kiln lowers it (python/kiln/backends/arm/tosa/ops/elementwise.py): both
    operands RESCALEd to int32 at the common scale 2 * max(s_a, s_b) / 2**20 (so the operand
    with the larger scale is multiplied by exactly 2**19), SINGLE_ROUND. Vela fuses the three
    RESCALEs and the ADD into one elementwise ADD that scales only the other operand
    (IFM_PRECISION scale_mode OPA_32 or OPB_32, OPB_SCALE = 0)."""
    from kiln.backends.arm.tosa.ops.rescale import quantize_scale

    ts = t.ts
    rng = np.random.default_rng(seed)
    g = t.Graph()
    a = g.input(rng.integers(-128, 128, shape_a, dtype=np.int8))
    b = g.input(rng.integers(-128, 128, shape_b, dtype=np.int8))
    out_shape = list(np.broadcast_shapes(tuple(shape_a), tuple(shape_b)))
    common = 2.0 * max(scale_a, scale_b) / (1 << 20)
    (ma, sa), (mb, sb) = quantize_scale(scale_a / common), quantize_scale(scale_b / common)
    a32 = g.rescale(a, shape_a, ts.DType.INT8, ts.DType.INT32, [ma], [sa], zp_a, 0, double_round=False)
    b32 = g.rescale(b, shape_b, ts.DType.INT8, ts.DType.INT32, [mb], [sb], zp_b, 0, double_round=False)
    acc = g.tensor(out_shape, ts.DType.INT32)
    g.op(ts.Op.ADD if op_name == "add" else ts.Op.SUB, [a32, b32], [acc])
    mo, so = quantize_scale(common / 0.11)
    g.rescale(acc, out_shape, ts.DType.INT32, ts.DType.INT8, [mo], [so], 0, -6, double_round=False, output=True)
    return g


RESIDUAL_CASES = {
    # name: (op, scale_a, scale_b, shape_a, shape_b)
    "add_scale_ifm": ("add", 0.037, 0.1, [1, 4, 5, 16], [1, 4, 5, 16]),  # OPA_32
    "add_scale_ifm2": ("add", 0.1, 0.037, [1, 4, 5, 16], [1, 4, 5, 16]),  # OPB_32
    "add_power_of_two_ratio": ("add", 0.05, 0.1, [1, 3, 3, 8], [1, 3, 3, 8]),
    "sub_scale_ifm": ("sub", 0.037, 0.1, [1, 3, 6, 8], [1, 3, 6, 8]),
    "sub_scale_ifm2": ("sub", 0.1, 0.037, [1, 3, 6, 8], [1, 3, 6, 8]),
    "add_broadcast_c": ("add", 0.037, 0.1, [1, 4, 5, 16], [1, 1, 1, 16]),
    "sub_broadcast_first": ("sub", 0.1, 0.037, [1, 1, 1, 8], [1, 3, 3, 8]),
}


@pytest.mark.parametrize("case", sorted(RESIDUAL_CASES))
def test_add_sub_with_one_scaled_operand(vnpu_tools: Any, target: str, case: str) -> None:
    op, scale_a, scale_b, sa, sb = RESIDUAL_CASES[case]
    vnpu_tools.assert_bit_exact(_residual_graph(vnpu_tools, op, scale_a, scale_b, sa, sb), target)


def test_run_raw_accepts_a_vela_result(vnpu_tools: Any) -> None:
    """kiln.backends.arm.vnpu.run_raw takes kiln.backends.arm.vela.VelaResult (compile_tosa's
    result: regions implied, `fast_scratch_size`) as well as regor's raw model."""
    from kiln.backends.arm import EthosUCompileSpec
    from kiln.backends.arm.vela import compile_tosa
    from kiln.backends.arm.vnpu import run_raw

    g = _residual_graph(vnpu_tools, "add", 0.037, 0.1, [1, 3, 4, 16], [1, 3, 4, 16])
    tosa = g.serialize()
    result = compile_tosa(tosa, EthosUCompileSpec("ethos-u55-128"))
    (got,) = run_raw(result, g.inputs)
    (expected,) = vnpu_tools.reference(tosa, g.inputs)
    np.testing.assert_array_equal(got.reshape(expected.shape), expected)
