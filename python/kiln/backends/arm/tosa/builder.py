"""A thin layer over ``tosa_serializer`` that op lowerings write through.

It fixes the target (TOSA 1.0.0, not draft: Vela 5.2 rejects 1.1 drafts), gives
every tensor a unique readable name, counts the TOSA operators it emits and offers
the constant helpers every lowering needs (zero points, shapes, RESCALE operands).
"""

from __future__ import annotations

import collections
from collections.abc import Sequence

import numpy as np
import tosa_serializer as ts

# TOSA 1.0.0 final: the version Vela 5.2 accepts (it rejects 0.80 and the 1.1 draft).
TOSA_VERSION = (1, 0, 0)

_NUMPY_TO_TOSA: dict[np.dtype, ts.DType] = {
    np.dtype(np.int8): ts.DType.INT8,
    np.dtype(np.int16): ts.DType.INT16,
    np.dtype(np.int32): ts.DType.INT32,
    np.dtype(np.bool_): ts.DType.BOOL,
}
DTYPE_NAMES: dict[ts.DType, str] = {
    ts.DType.INT8: "int8", ts.DType.INT16: "int16", ts.DType.INT32: "int32",
    ts.DType.INT48: "int48", ts.DType.BOOL: "bool",
}


def tosa_dtype(dtype: np.dtype | type) -> ts.DType:
    """The TOSA dtype of a numpy integer dtype."""
    return _NUMPY_TO_TOSA[np.dtype(dtype)]


class TosaBuilder:
    """Builds one TOSA 1.0 graph (a single ``main`` region and basic block)."""

    def __init__(self) -> None:
        major, minor, patch = TOSA_VERSION
        self._graph = ts.TosaSerializer(
            "", targetMajor=major, targetMinor=minor, targetPatch=patch, targetDraft=False
        )
        self.op_counts: collections.Counter[str] = collections.Counter()
        self._names: collections.Counter[str] = collections.Counter()
        # The FX node being lowered, and for each tensor an operator writes the node that was
        # being lowered then: Vela names an NPU operation after a tensor its fusions may have
        # moved (a 1-D convolution's output is a later reshape's), but its source operator
        # still says which TOSA operator, hence which FX node, it came from.
        self.owner = ""
        self.producers: dict[str, str] = {}
        # For each tensor an operator writes: that operator and its first input.
        self.writers: dict[str, tuple[ts.Op, str]] = {}

    # ------------------------------------------------------------------ naming
    def unique(self, stem: str) -> str:
        """A tensor name derived from ``stem`` (an FX node name) that is not used yet."""
        stem = stem.replace(".", "_") or "t"
        count = self._names[stem]
        self._names[stem] += 1
        return stem if count == 0 else f"{stem}_{count}"

    # ------------------------------------------------------------------ tensors
    def add_input(self, shape: Sequence[int], dtype: ts.DType) -> str:
        """A graph input (inputs are numbered in call order: that is the run order)."""
        return self._graph.addPlaceholder(list(shape), dtype).name

    def mark_output(self, name: str) -> None:
        """Makes an existing tensor a graph output (outputs are numbered in call order)."""
        tensor = self._graph.currRegion.currBasicBlock.getTensorByName(name)
        self._graph.addOutputTensor(tensor)

    def intermediate(self, shape: Sequence[int], dtype: ts.DType, stem: str = "t") -> str:
        tensor = self._graph.addIntermediate([int(d) for d in shape], dtype)
        return tensor.name

    def const(self, values: np.ndarray, stem: str, dtype: ts.DType | None = None) -> str:
        """A constant tensor holding ``values`` (dtype from the array unless given)."""
        array = np.ascontiguousarray(values)
        tosa_type = dtype if dtype is not None else tosa_dtype(array.dtype)
        # The serializer packs INT48 (6 bytes per value) from a list of Python ints only.
        data = array.reshape(-1).tolist() if tosa_type == ts.DType.INT48 else array
        tensor = self._graph.addConst(list(array.shape), tosa_type, data, name=self.unique(stem))
        self.producers.setdefault(tensor.name, self.owner)
        return tensor.name

    def zero_point(self, value: int, dtype: ts.DType, stem: str) -> str:
        """A one-element zero-point operand (TOSA 1.0 passes zero points as tensors)."""
        array = np.array([value], dtype={ts.DType.INT8: np.int8, ts.DType.INT16: np.int16,
                                         ts.DType.INT32: np.int32, ts.DType.INT48: np.int64}[dtype])
        return self.const(array, f"{stem}_zp", dtype)

    def shape_const(self, values: Sequence[int], stem: str) -> str:
        """A ``shape_t`` operand (RESHAPE's new shape, PAD's padding, RESIZE's scale ...)."""
        array = np.array([int(v) for v in values], dtype=np.int64)
        tensor = self._graph.addConst([len(values)], ts.DType.SHAPE, array, name=self.unique(stem))
        self.producers.setdefault(tensor.name, self.owner)
        return tensor.name

    # ------------------------------------------------------------------ operators
    def op(
        self,
        op: ts.Op,
        inputs: Sequence[str],
        output_shape: Sequence[int],
        output_dtype: ts.DType,
        attribute: ts.TosaSerializerAttribute | None = None,
        stem: str = "t",
    ) -> str:
        """Emits ``op`` writing a new intermediate tensor; returns that tensor's name."""
        output = self.intermediate(output_shape, output_dtype, stem)
        self.op_into(op, inputs, output, attribute)
        return output

    def op_into(
        self,
        op: ts.Op,
        inputs: Sequence[str],
        output: str,
        attribute: ts.TosaSerializerAttribute | None = None,
    ) -> None:
        """Emits ``op`` writing an existing tensor ``output``."""
        if attribute is None:
            attribute = default_attribute(op)
        self._graph.addOperator(op, list(inputs), [output], attribute)
        self.op_counts[op.name] += 1
        self.producers.setdefault(output, self.owner)
        self.writers[output] = (op, inputs[0] if inputs else "")

    def comes_from(self, tensor: str, op: ts.Op, through: Sequence[ts.Op]) -> bool:
        """True if ``tensor`` is written by ``op``, or by one of ``through`` (followed back
        along their first input) from a tensor that ``op`` writes."""
        while tensor in self.writers:
            writer, source = self.writers[tensor]
            if writer == op:
                return True
            if writer not in through:
                return False
            tensor = source
        return False

    def serialize(self) -> bytes:
        return bytes(self._graph.serialize())

    def operator_owners(self, flatbuffer: bytes) -> tuple[str, ...]:
        """Per operator of the serialized graph, in its order, the FX node that was being
        lowered when it was emitted ("" for none). Read back from the flatbuffer because the
        serializer also adds CONST operators of its own."""
        from tosa.TosaGraph import TosaGraph

        block = TosaGraph.GetRootAs(flatbuffer, 0).Regions(0).Blocks(0)
        owners = []
        for index in range(block.OperatorsLength()):
            operator = block.Operators(index)
            output = operator.Outputs(0).decode() if operator.OutputsLength() else ""
            owners.append(self.producers.get(output, ""))
        return tuple(owners)


# Operators whose attribute method name is not the CamelCase of the operator name.
_ATTRIBUTE_KIND = {"MATMUL": "MatMul"}


def default_attribute(op: ts.Op) -> ts.TosaSerializerAttribute:
    """The argument-free attribute of ``op`` (ADD, RESHAPE, TABLE ... have one each)."""
    kind = _ATTRIBUTE_KIND.get(op.name) or "".join(p.capitalize() for p in op.name.split("_"))
    return attribute(kind)


def attribute(kind: str, *args: object) -> ts.TosaSerializerAttribute:
    """``attribute("Conv2d", pad, stride, ...)`` == a TosaSerializerAttribute set up by
    its ``Conv2dAttribute(...)`` method (one line instead of three at every call site)."""
    attr = ts.TosaSerializerAttribute()
    getattr(attr, f"{kind}Attribute")(*args)
    return attr


def clamp_bytes(value: int, dtype: ts.DType) -> list[int]:
    """CLAMP's min/max attributes are the value's little-endian bytes in the input dtype."""
    np_type = {ts.DType.INT8: np.int8, ts.DType.INT16: np.int16, ts.DType.INT32: np.int32}[dtype]
    return list(np.array([value], dtype=np_type).tobytes())
