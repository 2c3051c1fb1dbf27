"""The result of lowering one delegated subgraph: TOSA bytes plus its boundary."""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass, field

import numpy as np

from kiln import KilnError
from kiln.backends.arm.tosa.values import canonical_perm, inverse

logger = logging.getLogger(__name__)

_ELEMENT_SIZE = {"int8": 1, "int16": 2, "int32": 4}
_NUMPY = {"int8": np.int8, "int16": np.int16, "int32": np.int32}


class TosaReferenceError(KilnError):
    """The TOSA reference model rejected a graph or its inputs."""


@dataclass(frozen=True)
class TosaIO:
    """One input or output of a TOSA subgraph, as the delegate boundary sees it.

    Attributes:
        name: the FX placeholder / output node name.
        shape: the PyTorch (logical, NCHW for rank 4) shape.
        tosa_shape: the TOSA graph's shape (NHWC for rank 4).
        dtype: "int8", "int16" or "int32".
        scale, zero_point: real value = scale * (q - zero_point).
        needs_transpose: the CPU must permute NCHW <-> NHWC at the boundary (rank 4,
            not ``nhwc_io``, and the permutation moves bytes: C > 1 and H*W > 1).
        transpose_bytes: bytes that permutation touches (0 when not needed).
    """

    name: str
    shape: tuple[int, ...]
    tosa_shape: tuple[int, ...]
    dtype: str
    scale: float
    zero_point: int
    needs_transpose: bool
    transpose_bytes: int

    @property
    def nbytes(self) -> int:
        return math.prod(self.shape) * _ELEMENT_SIZE[self.dtype]

    @property
    def numpy_dtype(self) -> type[np.integer]:
        """The numpy type of this tensor's values (``np.int8`` for "int8" ...)."""
        return _NUMPY[self.dtype]

    @property
    def permutation(self) -> tuple[int, ...]:
        """Logical -> TOSA dim order (apply with ``np.transpose``)."""
        return canonical_perm(len(self.shape))


@dataclass
class TosaSubgraph:
    """A delegated subgraph lowered to TOSA 1.0 (PRO-INT).

    Attributes:
        name: subgraph name (used in errors and file names).
        flatbuffer: the serialized TOSA 1.0.0 graph (what Vela compiles).
        inputs / outputs: boundary tensors in the graph's input / output order.
        op_counts: TOSA operator name -> how many the graph has.
        nhwc_io: the program's boundary tensors are channels-last (no CPU transposes).
        tensor_nodes: TOSA tensor name -> the FX node of the subgraph that produced it
            (for debugging tools: kiln.devtools names NPU operations by layer with it).
        operator_nodes: per TOSA operator, in graph order, the FX node whose lowering
            emitted it ("" for none); Vela's per-layer report points at these operators.
    """

    name: str
    flatbuffer: bytes
    inputs: list[TosaIO]
    outputs: list[TosaIO]
    op_counts: dict[str, int] = field(default_factory=dict)
    nhwc_io: bool = False
    tensor_nodes: dict[str, str] = field(default_factory=dict)
    operator_nodes: tuple[str, ...] = ()

    @property
    def transpose_bytes(self) -> int:
        """Bytes the CPU permutes at this subgraph's boundary per inference."""
        return sum(io.transpose_bytes for io in (*self.inputs, *self.outputs))

    def run_reference(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        """Runs the TOSA reference model on ``inputs`` given in the *PyTorch* layout
        (NCHW for rank 4, the program's view) and returns outputs in that layout.

        Raises TosaReferenceError when the reference model rejects the graph.
        """
        import tosa_reference_model

        if len(inputs) != len(self.inputs):
            raise TosaReferenceError(f"{self.name}: {len(inputs)} inputs given, the graph has {len(self.inputs)}")
        arrays = []
        for io, array in zip(self.inputs, inputs):
            array = np.asarray(array)
            if tuple(array.shape) != io.shape or array.dtype != io.numpy_dtype:
                raise TosaReferenceError(
                    f"{self.name}: input {io.name} must be {io.dtype} {io.shape}, got {array.dtype} {array.shape}")
            arrays.append(np.ascontiguousarray(array.transpose(io.permutation)))
        outputs, status = tosa_reference_model.run(self.flatbuffer, arrays)
        if status != tosa_reference_model.GraphStatus.TOSA_VALID:
            raise TosaReferenceError(f"{self.name}: TOSA reference model status {status.name}")
        results = []
        for io, array in zip(self.outputs, outputs):
            array = np.asarray(array).view(io.numpy_dtype).reshape(io.tosa_shape)
            results.append(np.ascontiguousarray(array.transpose(inverse(io.permutation))))
        return results

    def summary(self) -> str:
        ops = ", ".join(f"{name} x{count}" for name, count in sorted(self.op_counts.items()))
        return f"{self.name}: {sum(self.op_counts.values())} TOSA ops ({ops}); boundary transposes {self.transpose_bytes} B"
