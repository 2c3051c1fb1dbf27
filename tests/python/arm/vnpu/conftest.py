"""Shared helpers for the virtual Ethos-U tests: build single-op TOSA 1.0 graphs, compile
them with Vela (regor, in process), run them on the TOSA reference model and on the
virtual NPU.

Targets: every Ethos-U55/U65 configuration the earlier work covered plus the two-core
Ethos-U65-512, and every Ethos-U85 configuration. The single-op suites run on all of them
(``target``); suites whose cases are heavier run on ``TARGETS`` (the large Ethos-U85
configurations differ from ethos-u85-512 only in core count and block shapes, which the
single-op suite covers)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pytest

import ethosu.regor as regor
import tosa_reference_model
import tosa_serializer as ts

U55_TARGETS = ["ethos-u55-128", "ethos-u55-64", "ethos-u65-256", "ethos-u65-512"]
U85_TARGETS = ["ethos-u85-128", "ethos-u85-256", "ethos-u85-512"]
#: The large Ethos-U85 configurations (4 cores), for the single-op suite.
U85_LARGE_TARGETS = ["ethos-u85-1024", "ethos-u85-2048"]
TARGETS = U55_TARGETS + U85_TARGETS

_SYSTEM_CONFIGS = {
    "ethos-u55": ("Ethos_U55_High_End_Embedded", "Shared_Sram"),
    "ethos-u65": ("Ethos_U65_Client_Server", "Dedicated_Sram_384KB"),
    "ethos-u85": ("Ethos_U85_SYS_DRAM_Mid", "Shared_Sram"),
}


def compile_with_vela(tosa: bytes, target: str) -> Any:
    """Vela (regor) in process, the way the vela CLI calls it: returns a CompiledRawModel."""
    from kiln.backends.arm import EthosUCompileSpec

    system, memory = _SYSTEM_CONFIGS[target.rsplit("-", 1)[0]]
    spec = EthosUCompileSpec(target, system_config=system, memory_mode=memory)
    options = "\n[compiler]\noutput_format=Raw\ncop_format=COP1\n[scheduler]\noptimize=Performance\n"
    return regor.compile(spec.regor_accelerator, tosa, "TOSA", spec.regor_system_config(), options=options)


@dataclass
class Graph:
    """A TOSA 1.0 graph under construction with its input arrays."""

    ser: Any = field(default_factory=lambda: ts.TosaSerializer("", targetMajor=1, targetMinor=0, targetPatch=0, targetDraft=False))
    inputs: list[np.ndarray] = field(default_factory=list)
    _count: int = 0

    def name(self, prefix: str) -> str:
        self._count += 1
        return f"{prefix}{self._count}"

    def input(self, array: np.ndarray, dtype: Any = None) -> str:
        name = self.name("in")
        dtype = dtype or (ts.DType.INT8 if array.dtype == np.int8 else ts.DType.INT16)
        self.ser.addInputTensor(ts.TosaSerializerTensor(name, list(array.shape), dtype))
        self.inputs.append(array)
        return name

    def const(self, values: Any, dtype: Any, shape: list[int] | None = None) -> str:
        values = np.asarray(values)
        shape = list(values.shape) if shape is None else shape
        return self.ser.addConst(shape, dtype, values.flatten().tolist() if dtype == ts.DType.INT48 else values, name=self.name("c")).name

    def tensor(self, shape: list[int], dtype: Any, output: bool = False) -> str:
        """An intermediate tensor, or (output=True) a graph output."""
        if output:
            return self.ser.addOutput(shape, dtype).name
        return self.ser.addIntermediate(shape, dtype).name

    def op(self, op: Any, inputs: list[str], outputs: list[str], attr: Any = None) -> None:
        if attr is None:
            # Operators without options still need their (empty) attribute set.
            attr = ts.TosaSerializerAttribute()
            name = "".join(part.capitalize() for part in op.name.split("_")) + "Attribute"
            if hasattr(attr, name):
                getattr(attr, name)()
        self.ser.addOperator(op, inputs, outputs, attr)

    def rescale(self, x: str, shape: list[int], in_dtype: Any, out_dtype: Any, multipliers: list[int],
                shifts: list[int], in_zp: int, out_zp: int, double_round: bool = True,
                output: bool = False) -> str:
        """TOSA RESCALE (per channel if more than one multiplier): 32-bit multipliers, or
        16-bit ones for an INT48 input (TOSA allows only those there)."""
        scale32 = in_dtype != ts.DType.INT48
        attr = ts.TosaSerializerAttribute()
        attr.RescaleAttribute(
            scale32=scale32,
            rounding_mode=ts.RoundingMode.DOUBLE_ROUND if double_round else ts.RoundingMode.SINGLE_ROUND,
            per_channel=len(multipliers) > 1, input_unsigned=False, output_unsigned=False)
        out = self.tensor(shape, out_dtype, output)
        self.op(ts.Op.RESCALE, [
            x,
            self.const(np.array(multipliers, np.int32 if scale32 else np.int16),
                       ts.DType.INT32 if scale32 else ts.DType.INT16),
            self.const(np.array(shifts, np.int8), ts.DType.INT8),
            self.const(np.array([in_zp], _np_dtype(in_dtype)), in_dtype),
            self.const(np.array([out_zp], _np_dtype(out_dtype)), out_dtype),
        ], [out], attr)
        return out

    def serialize(self) -> bytes:
        return bytes(self.ser.serialize())


def _np_dtype(dtype: Any) -> Any:
    return {ts.DType.INT8: np.int8, ts.DType.INT16: np.int16, ts.DType.INT32: np.int32, ts.DType.INT48: np.int64}[dtype]


def reference(tosa: bytes, inputs: list[np.ndarray]) -> list[np.ndarray]:
    outputs, status = tosa_reference_model.run(tosa, inputs)
    assert status == tosa_reference_model.GraphStatus.TOSA_VALID if hasattr(tosa_reference_model, "GraphStatus") else True, status
    return [np.asarray(o) for o in outputs]


def run_on_vnpu(tosa: bytes, inputs: list[np.ndarray], target: str) -> tuple[list[np.ndarray], dict[str, Any]]:
    from kiln.backends.arm.vnpu import run_raw_with_counters

    compiled = compile_with_vela(tosa, target)
    run = run_raw_with_counters(compiled, inputs)
    return run.outputs, run.counters


def assert_bit_exact(graph: Graph, target: str) -> dict[str, Any]:
    """Compiles the graph for `target`, runs it on the vNPU and the reference, compares."""
    tosa = graph.serialize()
    expected = reference(tosa, graph.inputs)
    actual, counters = run_on_vnpu(tosa, graph.inputs, target)
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected):
        a = a.reshape(e.shape)
        mismatch = np.count_nonzero(a != e)
        assert mismatch == 0, (
            f"{mismatch}/{e.size} elements differ on {target}; max |diff| "
            f"{np.max(np.abs(a.astype(np.int64) - e.astype(np.int64)))}\nexpected {e.flatten()[:16]}\n"
            f"actual   {a.flatten()[:16]}")
    return counters


@pytest.fixture(params=TARGETS + U85_LARGE_TARGETS)
def target(request: pytest.FixtureRequest) -> str:
    """Every configuration (the single-op suites)."""
    return request.param


@pytest.fixture(params=TARGETS)
def model_target(request: pytest.FixtureRequest) -> str:
    """The configurations of the suites with heavier cases (lowered operators)."""
    return request.param


@pytest.fixture(scope="session")
def vnpu_tools() -> Any:
    """The helpers above, for test modules (importlib mode cannot import conftest)."""
    import types

    return types.SimpleNamespace(Graph=Graph, ts=ts, assert_bit_exact=assert_bit_exact,
                                 compile_with_vela=compile_with_vela, reference=reference,
                                 run_on_vnpu=run_on_vnpu)
