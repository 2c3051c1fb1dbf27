"""TOSA operators that Vela runs natively only on the Ethos-U85, single graphs compiled for
every Ethos-U85 configuration and run on the virtual NPU: bit for bit equal to the TOSA
reference model.

They reach the command patterns the Ethos-U55 never has: NPU_OP_RESIZE (bilinear, nearest),
16-bit interpolating LUTs, argmax and min pooling, comparisons and bitwise operations
(chained into each other), arithmetic/logical shifts with rounding, integer division,
gather as indexed DMA, reverse and transpose on output, matmul with the weights from IFM2,
accumulators handed from one operation to the next (strided and transposed convolution),
casts that wrap, and COND_IF / WHILE_LOOP as NPU_OP_BRANCH.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest

U85_TARGETS = ["ethos-u85-128", "ethos-u85-256", "ethos-u85-512", "ethos-u85-1024", "ethos-u85-2048"]


@pytest.fixture(params=U85_TARGETS)
def u85_target(request: pytest.FixtureRequest) -> str:
    return request.param


def _attr(ts: Any, name: str, *args: Any, **kwargs: Any) -> Any:
    attr = ts.TosaSerializerAttribute()
    getattr(attr, name)(*args, **kwargs)
    return attr


_INT = {np.int8: "INT8", np.int16: "INT16", np.int32: "INT32"}


def _random(rng: np.random.Generator, shape: Any, dtype: Any) -> np.ndarray:
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)


def _resize(t: Any, mode: str, scale: tuple[int, int, int, int], offset: tuple[int, int], *,
            int16: bool = False, double_round: bool = False) -> Any:
    """RESIZE [1, 5, 6, 8]; bilinear results (int32/int48, scaled by n_y * n_x) RESCALEd back."""
    ts = t.ts
    g = t.Graph()
    dtype = np.int16 if int16 else np.int8
    x = g.input(_random(np.random.default_rng(11), (1, 5, 6, 8), dtype))
    sy_n, sy_d, sx_n, sx_d = scale
    oh = ((5 - 1) * sy_n - offset[0]) // sy_d + 1
    ow = ((6 - 1) * sx_n - offset[1]) // sx_d + 1
    border = [(oh - 1) * sy_d - (5 - 1) * sy_n + offset[0], (ow - 1) * sx_d - (6 - 1) * sx_n + offset[1]]
    shapes = [g.ser.addConst([len(v)], ts.DType.SHAPE, list(v), name=g.name("shape")).name
              for v in (scale, offset, border)]
    bilinear = mode == "bilinear"
    out_type = ts.DType.INT16 if int16 else ts.DType.INT8
    acc_type = (ts.DType.INT48 if int16 else ts.DType.INT32) if bilinear else out_type
    out = g.tensor([1, oh, ow, 8], acc_type, output=not bilinear)
    g.op(ts.Op.RESIZE, [x, *shapes], [out],
         _attr(ts, "ResizeAttribute", ts.ResizeMode.BILINEAR if bilinear else ts.ResizeMode.NEAREST))
    if bilinear:
        shift = int(np.log2(sy_n * sx_n))
        g.rescale(out, [1, oh, ow, 8], acc_type, out_type, [1 << 14 if int16 else 1 << 30],
                  [(14 if int16 else 30) + shift], 0, 0, double_round=double_round, output=True)
    return g


def _table16(t: Any, rescale: bool) -> Any:
    """int16 TABLE (513 entries, interpolated) -> int32, optionally RESCALEd back to int16."""
    ts = t.ts
    rng = np.random.default_rng(12)
    g = t.Graph()
    shape = [1, 4, 4, 16]
    x = g.input(_random(rng, shape, np.int16), ts.DType.INT16)
    table = np.clip(np.cumsum(rng.integers(-300, 400, 513)), -32768, 32767).astype(np.int16)
    out = g.tensor(shape, ts.DType.INT32, output=not rescale)
    g.op(ts.Op.TABLE, [x, g.const(table, ts.DType.INT16)], [out])
    if rescale:
        g.rescale(out, shape, ts.DType.INT32, ts.DType.INT16, [1 << 30], [37], 0, 0, output=True)
    return g


def _reduce(t: Any, op: str, axis: int) -> Any:
    ts = t.ts
    g = t.Graph()
    shape = [1, 4, 6, 10]
    x = g.input(np.random.default_rng(13).integers(-10 if op == "argmax" else -128, 10 if op == "argmax" else 128,
                                                   shape, dtype=np.int8))
    if op == "argmax":
        out = g.tensor([d for i, d in enumerate(shape) if i != axis], ts.DType.INT32, output=True)
        g.op(ts.Op.ARGMAX, [x], [out], _attr(ts, "ArgMaxAttribute", axis, ts.NanPropagationMode.PROPAGATE))
        return g
    out_shape = list(shape)
    out_shape[axis] = 1
    out = g.tensor(out_shape, ts.DType.INT8, output=True)
    name, tosa_op = ("ReduceMaxAttribute", ts.Op.REDUCE_MAX) if op == "max" else ("ReduceMinAttribute", ts.Op.REDUCE_MIN)
    g.op(tosa_op, [x], [out], _attr(ts, name, axis, ts.NanPropagationMode.PROPAGATE))
    return g


def _binary(t: Any, op: str, dtype: Any = np.int32, *, low: int | None = None, high: int | None = None,
            shift_operand: bool = False) -> Any:
    """A binary operator on random int tensors [1, 3, 4, 8] (or a unary one if op ends in _not)."""
    ts = t.ts
    rng = np.random.default_rng(14)
    g = t.Graph()
    shape = [1, 3, 4, 8]
    tosa_type = getattr(ts.DType, _INT[dtype])
    info = np.iinfo(dtype)
    a = g.input(rng.integers(info.min if low is None else low, info.max if high is None else high, shape,
                             dtype=dtype), tosa_type)
    operands = [a]
    if op not in ("bitwise_not", "clz"):
        if shift_operand:
            b_values = rng.integers(0, info.bits, shape, dtype=dtype)
        elif op == "intdiv":
            b_values = (rng.integers(1, 300, shape) * rng.choice([-1, 1], shape)).astype(dtype)
        else:
            b_values = rng.integers(info.min if low is None else low, info.max if high is None else high, shape,
                                    dtype=dtype)
        operands.append(g.input(b_values, tosa_type))
    comparison = op in ("equal", "greater", "greater_equal")
    out = g.tensor(shape, ts.DType.BOOL if comparison else tosa_type, output=True)
    tosa_op = getattr(ts.Op, op.upper())
    name = "".join(part.capitalize() for part in op.split("_")) + "Attribute"
    if op == "arithmetic_right_shift":
        attr = _attr(ts, name, True)
    elif op == "intdiv":
        attr = _attr(ts, "IntDivAttribute")
    elif op == "mul":
        operands.append(g.const(np.array([9], np.int8), ts.DType.INT8))
        attr = _attr(ts, "MulAttribute")
    else:
        attr = _attr(ts, name)
    g.op(tosa_op, operands, [out], attr)
    return g


def _asr_floor(t: Any) -> Any:
    ts = t.ts
    rng = np.random.default_rng(15)
    g = t.Graph()
    shape = [1, 3, 4, 8]
    a = g.input(rng.integers(-(2**31), 2**31 - 1, shape, dtype=np.int32), ts.DType.INT32)
    b = g.input(rng.integers(0, 31, shape, dtype=np.int32), ts.DType.INT32)
    out = g.tensor(shape, ts.DType.INT32, output=True)
    g.op(ts.Op.ARITHMETIC_RIGHT_SHIFT, [a, b], [out], _attr(ts, "ArithmeticRightShiftAttribute", False))
    return g


def _gather(t: Any, batches: int) -> Any:
    ts = t.ts
    rng = np.random.default_rng(16)
    g = t.Graph()
    values = g.input(rng.integers(-128, 128, (batches, 10, 8), dtype=np.int8))
    indices = g.input(rng.integers(0, 10, (batches, 6), dtype=np.int32), ts.DType.INT32)
    out = g.tensor([batches, 6, 8], ts.DType.INT8, output=True)
    g.op(ts.Op.GATHER, [values, indices], [out], _attr(ts, "GatherAttribute"))
    return g


def _reverse(t: Any, axis: int) -> Any:
    ts = t.ts
    g = t.Graph()
    shape = [1, 3, 5, 8]
    x = g.input(np.random.default_rng(17).integers(-128, 128, shape, dtype=np.int8))
    out = g.tensor(shape, ts.DType.INT8, output=True)
    g.op(ts.Op.REVERSE, [x], [out], _attr(ts, "ReverseAttribute", axis))
    return g


def _matmul(t: Any, batches: int, m: int, k: int, n: int) -> Any:
    """MATMUL with two dynamic int8 operands and zero points, RESCALEd to int8."""
    ts = t.ts
    rng = np.random.default_rng(18)
    g = t.Graph()
    a = g.input(rng.integers(-128, 128, (batches, m, k), dtype=np.int8))
    b = g.input(rng.integers(-128, 128, (batches, k, n), dtype=np.int8))
    zps = [g.const(np.array([zp], np.int8), ts.DType.INT8) for zp in (3, -2)]
    acc = g.tensor([batches, m, n], ts.DType.INT32)
    g.op(ts.Op.MATMUL, [a, b, *zps], [acc], _attr(ts, "MatMulAttribute"))
    g.rescale(acc, [batches, m, n], ts.DType.INT32, ts.DType.INT8, [1 << 30], [44], 0, 0, output=True)
    return g


def _conv(t: Any, transpose: bool) -> Any:
    """CONV2D with stride 4 (decomposed into kept accumulators), or TRANSPOSE_CONV2D."""
    ts = t.ts
    rng = np.random.default_rng(19)
    g = t.Graph()
    zero = g.const(np.array([0], np.int8), ts.DType.INT8)
    if transpose:
        x = g.input(rng.integers(-128, 128, (1, 5, 5, 8), dtype=np.int8))
        weights, out_shape = rng.integers(-127, 128, (6, 3, 3, 8), dtype=np.int8), [1, 11, 11, 6]
        attr = _attr(ts, "TransposeConv2dAttribute", out_pad=[0, 0, 0, 0], stride=[2, 2], local_bound=False,
                     acc_type=ts.DType.INT32)
        tosa_op = ts.Op.TRANSPOSE_CONV2D
    else:
        x = g.input(rng.integers(-128, 128, (1, 16, 16, 3), dtype=np.int8))
        weights, out_shape = rng.integers(-127, 128, (8, 4, 4, 3), dtype=np.int8), [1, 4, 4, 8]
        attr = _attr(ts, "Conv2dAttribute", pad=[0, 0, 0, 0], stride=[4, 4], dilation=[1, 1], local_bound=False,
                     acc_type=ts.DType.INT32)
        tosa_op = ts.Op.CONV2D
    channels = out_shape[3]
    bias = g.const(rng.integers(-1000, 1000, channels, dtype=np.int32), ts.DType.INT32)
    acc = g.tensor(out_shape, ts.DType.INT32)
    g.op(tosa_op, [x, g.const(weights, ts.DType.INT8), bias, zero, zero], [acc], attr)
    g.rescale(acc, out_shape, ts.DType.INT32, ts.DType.INT8, [1 << 30] * channels, [42] * channels, 0, 0,
              output=True)
    return g


def _cast(t: Any, source: Any, target: Any) -> Any:
    ts = t.ts
    g = t.Graph()
    x = g.input(_random(np.random.default_rng(20), (1, 3, 4, 8), source), getattr(ts.DType, _INT[source]))
    out = g.tensor([1, 3, 4, 8], getattr(ts.DType, _INT[target]), output=True)
    g.op(ts.Op.CAST, [x], [out], _attr(ts, "CastAttribute"))
    return g


CASES: dict[str, Callable[[Any], Any]] = {
    "resize_bilinear_2x": lambda t: _resize(t, "bilinear", (4, 2, 4, 2), (-1, -1)),
    "resize_bilinear_align_corners": lambda t: _resize(t, "bilinear", (8, 7, 10, 5), (0, 0)),
    "resize_bilinear_int16": lambda t: _resize(t, "bilinear", (4, 2, 4, 2), (-1, -1), int16=True),
    "resize_nearest_2x": lambda t: _resize(t, "nearest", (4, 2, 4, 2), (-1, -1)),
    "resize_nearest_3x": lambda t: _resize(t, "nearest", (6, 2, 6, 2), (0, 0)),
    "table_int16": lambda t: _table16(t, rescale=True),
    "table_int16_to_int32": lambda t: _table16(t, rescale=False),
    "argmax_h": lambda t: _reduce(t, "argmax", 1),
    "argmax_w": lambda t: _reduce(t, "argmax", 2),
    "argmax_c": lambda t: _reduce(t, "argmax", 3),
    "reduce_max_c": lambda t: _reduce(t, "max", 3),
    "reduce_min_h": lambda t: _reduce(t, "min", 1),
    "reduce_min_w": lambda t: _reduce(t, "min", 2),
    "equal": lambda t: _binary(t, "equal", low=-4, high=4),
    "greater": lambda t: _binary(t, "greater", low=-4, high=4),
    "greater_equal": lambda t: _binary(t, "greater_equal", low=-4, high=4),
    "bitwise_and": lambda t: _binary(t, "bitwise_and"),
    "bitwise_or_int16": lambda t: _binary(t, "bitwise_or", np.int16),
    "bitwise_xor_int8": lambda t: _binary(t, "bitwise_xor", np.int8),
    "bitwise_not": lambda t: _binary(t, "bitwise_not"),
    "arithmetic_right_shift_round": lambda t: _binary(t, "arithmetic_right_shift", shift_operand=True),
    "arithmetic_right_shift_int8": lambda t: _binary(t, "arithmetic_right_shift", np.int8, shift_operand=True),
    "arithmetic_right_shift_floor": _asr_floor,
    "logical_left_shift": lambda t: _binary(t, "logical_left_shift", shift_operand=True),
    "logical_right_shift": lambda t: _binary(t, "logical_right_shift", shift_operand=True),
    "clz": lambda t: _binary(t, "clz"),
    "mul_int32_shift": lambda t: _binary(t, "mul", low=-(2**15), high=2**15),
    "intdiv": lambda t: _binary(t, "intdiv", low=-(2**20), high=2**20),
    "gather": lambda t: _gather(t, 1),
    "gather_batched": lambda t: _gather(t, 3),
    "reverse_h": lambda t: _reverse(t, 1),
    "reverse_w": lambda t: _reverse(t, 2),
    "reverse_c": lambda t: _reverse(t, 3),
    "matmul": lambda t: _matmul(t, 1, 5, 24, 7),
    "matmul_batched": lambda t: _matmul(t, 3, 5, 24, 7),
    "matmul_deep": lambda t: _matmul(t, 1, 3, 300, 40),
    "conv_stride4": lambda t: _conv(t, transpose=False),
    "transpose_conv": lambda t: _conv(t, transpose=True),
    "cast_int8_to_int32": lambda t: _cast(t, np.int8, np.int32),
    "cast_int32_to_int8": lambda t: _cast(t, np.int32, np.int8),
    "cast_int16_to_int8": lambda t: _cast(t, np.int16, np.int8),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_u85_operator(vnpu_tools: Any, u85_target: str, case: str) -> None:
    vnpu_tools.assert_bit_exact(CASES[case](vnpu_tools), u85_target)


def _control_flow(ts: Any, kind: str, value: int) -> tuple[bytes, list[np.ndarray]]:
    """COND_IF (then: a + b, else: a - b) or WHILE_LOOP (i < n: acc += x, x += x) on int32."""
    ser = ts.TosaSerializer("", targetMajor=1, targetMinor=0, targetPatch=0, targetDraft=False)
    rng = np.random.default_rng(21)

    def op(tosa_op: Any, inputs: list[str], outputs: list[str], name: str) -> None:
        ser.addOperator(tosa_op, inputs, outputs, _attr(ts, name))

    shape = [1, 2, 3, 4]
    int32 = ts.DType.INT32
    if kind == "if":
        for name, tensor_shape, dtype in (("c", [1], ts.DType.BOOL), ("a", shape, int32), ("b", shape, int32)):
            ser.addInputTensor(ts.TosaSerializerTensor(name, tensor_shape, dtype))
        out = ser.addOutput(shape, int32)
        ser.addOperator(ts.Op.COND_IF, ["c", "a", "b"], [out.name], _attr(ts, "CondIfAttribute", "then_r", "else_r"))
        for region, tosa_op, name in (("then_r", ts.Op.ADD, "AddAttribute"), ("else_r", ts.Op.SUB, "SubAttribute")):
            ser.startRegion(region)
            ser.addBasicBlock(region)
            for tensor in ("a", "b"):
                ser.addInputTensor(ts.TosaSerializerTensor(f"{region}_{tensor}", shape, int32))
            result = ser.addOutput(shape, int32)
            op(tosa_op, [f"{region}_a", f"{region}_b"], [result.name], name)
        inputs = [np.array([bool(value)]), rng.integers(-1000, 1000, shape).astype(np.int32),
                  rng.integers(-1000, 1000, shape).astype(np.int32)]
        return bytes(ser.serialize()), inputs
    names = (("i", [1]), ("acc", shape), ("x", shape))
    for name, tensor_shape in names:
        ser.addInputTensor(ts.TosaSerializerTensor(name, tensor_shape, int32))
    outs = [ser.addOutput(tensor_shape, int32).name for _, tensor_shape in names]
    ser.addOperator(ts.Op.WHILE_LOOP, ["i", "acc", "x"], outs, _attr(ts, "WhileLoopAttribute", "cond_r", "body_r"))
    for region in ("cond_r", "body_r"):
        ser.startRegion(region)
        ser.addBasicBlock(region)
        for name, tensor_shape in names:
            ser.addInputTensor(ts.TosaSerializerTensor(f"{region}_{name}", tensor_shape, int32))
        if region == "cond_r":
            limit = ser.addConst([1], int32, np.array([value], np.int32), name="limit")
            cond = ser.addOutput([1], ts.DType.BOOL)
            op(ts.Op.GREATER, [limit.name, "cond_r_i"], [cond.name], "GreaterAttribute")
        else:
            one = ser.addConst([1], int32, np.array([1], np.int32), name="one")
            results = [ser.addOutput(tensor_shape, int32).name for _, tensor_shape in names]
            op(ts.Op.ADD, ["body_r_i", one.name], [results[0]], "AddAttribute")
            op(ts.Op.ADD, ["body_r_acc", "body_r_x"], [results[1]], "AddAttribute")
            op(ts.Op.ADD, ["body_r_x", "body_r_x"], [results[2]], "AddAttribute")
    inputs = [np.array([0], np.int32), np.zeros(shape, np.int32), rng.integers(-9, 9, shape).astype(np.int32)]
    return bytes(ser.serialize()), inputs


@pytest.mark.parametrize("kind,value", [("if", 1), ("if", 0), ("while", 0), ("while", 1), ("while", 3)])
def test_control_flow_runs_as_branches(vnpu_tools: Any, kind: str, value: int) -> None:
    tosa, inputs = _control_flow(vnpu_tools.ts, kind, value)
    expected = vnpu_tools.reference(tosa, inputs)
    actual, counters = vnpu_tools.run_on_vnpu(tosa, inputs, "ethos-u85-256")
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected):
        np.testing.assert_array_equal(a.reshape(e.shape), e)
    assert counters["branches"] >= 1
    if kind == "while":
        assert int(expected[0][0]) == value  # the loop ran `value` times


def test_resize_with_double_rounding_is_what_vela_encodes(vnpu_tools: Any) -> None:
    """Vela 5.2 fuses a RESCALE into NPU_OP_RESIZE as a pure shift (OFM_SCALE 1 >> (16 +
    shift)). With TOSA's DOUBLE_ROUND the RESCALE also adds the extra rounding step at bit 30
    of a shift above 31, which a 20-bit shift cannot express: the stream rounds as SINGLE_ROUND
    does. The virtual NPU runs what Vela encoded: equal to the reference model on the same
    graph with single rounding, and 1 LSB away from it with double rounding at 53 of 792
    outputs. (Kiln and ExecuTorch lower with SINGLE_ROUND, so their programs are exact.)"""
    double = _resize(vnpu_tools, "bilinear", (4, 2, 4, 2), (-1, -1), double_round=True)
    single = _resize(vnpu_tools, "bilinear", (4, 2, 4, 2), (-1, -1))
    (actual,), _ = vnpu_tools.run_on_vnpu(double.serialize(), double.inputs, "ethos-u85-256")
    (single_reference,) = vnpu_tools.reference(single.serialize(), single.inputs)
    (double_reference,) = vnpu_tools.reference(double.serialize(), double.inputs)
    np.testing.assert_array_equal(actual.reshape(single_reference.shape), single_reference)
    differ = actual.reshape(double_reference.shape) != double_reference
    assert int(np.count_nonzero(differ)) == 53
    assert int(np.max(np.abs(actual.reshape(double_reference.shape).astype(int) - double_reference))) == 1


def test_select_of_int8_by_a_computed_condition(vnpu_tools: Any) -> None:
    """SELECT(x > 5, x, y) on int8: the condition from GREATER on the int32 rescaled x (what a
    lowering of ``torch.where(x > c, x, y)`` emits). Vela runs SELECT as (x & c) | (y & ~c),
    which takes a true boolean to be all ones: the NPU's comparisons write -1 for true, not 1
    (with 1, half of the elements differed from the reference; a boolean output reads true
    either way)."""
    ts = vnpu_tools.ts
    g = vnpu_tools.Graph()
    rng = np.random.default_rng(0)
    shape = [1, 4, 16]
    x = g.input(_random(rng, shape, np.int8))
    y = g.input(_random(rng, shape, np.int8))
    wide = g.rescale(x, shape, ts.DType.INT8, ts.DType.INT32, [1 << 30], [30], 0, 0)
    condition = g.tensor(shape, ts.DType.BOOL)
    g.op(ts.Op.GREATER, [wide, g.const(np.array([[[5]]], np.int32), ts.DType.INT32)], [condition])
    g.op(ts.Op.SELECT, [condition, x, y], [g.tensor(shape, ts.DType.INT8, output=True)])
    vnpu_tools.assert_bit_exact(g, "ethos-u85-256")
