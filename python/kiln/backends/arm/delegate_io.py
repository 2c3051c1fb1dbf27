"""The delegate boundary: how a program tensor maps onto the buffer the NPU reads or writes.

Two things live here, both checked when a subgraph is compiled (so that a program that
compiles also runs):

* :func:`with_tosa_io_shapes` - what Kiln promises about an NPU buffer. Vela places each
  graph input/output in a dense buffer holding the TOSA tensor's bytes, but the shape it
  reports may be that of a RESHAPE it folded into the input or output (a ``[1, 16, 32]``
  input viewed as ``[1, 16, 4, 8]`` comes back as ``(1, 1, 1, 16, 4, 8)``). The bytes are
  the same, the shape is not, and the runtime cannot map one onto the other. The payload
  therefore carries the TOSA graph's own IO shapes, once their element counts and element
  sizes are checked against Vela's.
* :func:`choose_boundary_copy` - the runtime's rule (``backends/arm/runtime/io_layout.cpp``,
  ``choose_boundary_copy``) written again in Python, and :func:`check_boundary`, which asks
  it for every input and output of a delegate and compares its answer with the copy the
  lowering means (a transpose where the TOSA graph is NHWC and the program NCHW, a plain
  copy otherwise). The two implementations are tested to agree
  (``tests/python/arm/vela/test_delegate_io.py``).
"""

from __future__ import annotations

import dataclasses
import enum
import math
from collections.abc import Sequence

from kiln import KilnError
from kiln.backends.arm.vela import VelaResult, VelaTensor

PAYLOAD_IO_DIMS = 6
_ELEMENT_SIZE = {"int8": 1, "uint8": 1, "bool": 1, "int16": 2, "int32": 4}
# The runtime's ScalarType names, so that both sides word their errors alike.
_SCALAR_TYPE = {"int8": "Char", "uint8": "Byte", "bool": "Bool", "int16": "Short", "int32": "Int"}
_NHWC = (0, 2, 3, 1)


class DelegateIoError(KilnError):
    """A delegate's input or output does not map onto its NPU buffer (names which and why)."""


class BoundaryCopy(enum.Enum):
    """How the runtime copies between a program tensor and an NPU buffer."""

    DIRECT = "direct"  # same element order: memcpy
    PROGRAM_NCHW_NPU_NHWC = "program NCHW, NPU NHWC"  # permute on the way in and out
    PROGRAM_NHWC_NPU_NCHW = "program NHWC (channels-last), NPU NCHW"


@dataclasses.dataclass(frozen=True)
class ProgramTensor:
    """A delegate argument as the runtime sees it: sizes, dim order and dtype."""

    shape: tuple[int, ...]
    dtype: str  # "int8", "int16", "int32" ...
    dim_order: tuple[int, ...] = ()  # () means contiguous (0, 1, ..., rank - 1)

    @property
    def order(self) -> tuple[int, ...]:
        return self.dim_order or tuple(range(len(self.shape)))


def _without_unit_dims(shape: Sequence[int]) -> tuple[int, ...]:
    """Size-1 dims never change a dense array's byte order (Vela pads IO shapes with them)."""
    return tuple(int(d) for d in shape if d != 1)


def choose_boundary_copy(tensor: ProgramTensor, io: VelaTensor, npu_is_nhwc: bool) -> BoundaryCopy:
    """The copy the runtime picks for ``tensor`` and NPU buffer ``io``, or DelegateIoError
    with the runtime's reason. Mirrors ``choose_boundary_copy`` in io_layout.cpp rule for rule:
    element size, element count, then shapes compared without their size-1 dims."""
    if _ELEMENT_SIZE.get(tensor.dtype) != io.element_size:
        dtype = _SCALAR_TYPE.get(tensor.dtype, tensor.dtype)
        raise DelegateIoError(f"tensor dtype {dtype}, NPU element size {io.element_size} bytes")
    numel = math.prod(tensor.shape)
    if numel != math.prod(io.shape):
        raise DelegateIoError(f"tensor has {numel} elements, NPU buffer {list(io.shape)} {math.prod(io.shape)}")
    npu = _without_unit_dims(io.shape)
    logical = _without_unit_dims(tensor.shape)
    four_d = len(tensor.shape) == 4
    nhwc = _without_unit_dims([tensor.shape[d] for d in _NHWC]) if four_d else None
    order = tensor.order
    if order == tuple(range(len(order))):
        if numel == 0:
            return BoundaryCopy.DIRECT
        if npu_is_nhwc and four_d and nhwc == npu:
            return BoundaryCopy.PROGRAM_NCHW_NPU_NHWC
        if logical == npu:
            return BoundaryCopy.DIRECT
        if four_d and nhwc == npu:
            return BoundaryCopy.PROGRAM_NCHW_NPU_NHWC
        memory = "contiguous"
    elif order == _NHWC:
        if nhwc == npu or numel == 0:
            return BoundaryCopy.DIRECT
        if logical == npu:
            return BoundaryCopy.PROGRAM_NHWC_NPU_NCHW
        memory = "channels-last"
    else:
        memory = "another"
    raise DelegateIoError(f"no layout maps the tensor {list(tensor.shape)} ({memory} memory order) onto the "
                          f"NPU buffer {list(io.shape)}")


def padded(shape: Sequence[int]) -> tuple[int, ...]:
    """A shape as the payload stores it: six dims, size-1 dims in front."""
    if len(shape) > PAYLOAD_IO_DIMS:
        raise DelegateIoError(f"shape {list(shape)} has more than {PAYLOAD_IO_DIMS} dims")
    return (1,) * (PAYLOAD_IO_DIMS - len(shape)) + tuple(int(d) for d in shape)


def with_tosa_io_shapes(vela: VelaResult, tosa: object) -> VelaResult:
    """``vela`` with each input/output shape replaced by the TOSA graph's shape of it.

    ``tosa`` is the :class:`kiln.backends.arm.tosa.TosaSubgraph` Vela compiled (its
    ``inputs``/``outputs`` in graph order, which is Vela's order). Raises DelegateIoError
    when the counts, element sizes or element counts disagree: then the buffer is not the
    TOSA tensor and no shape would make it one.
    """
    replaced: dict[str, list[VelaTensor]] = {}
    for kind, placed, declared in (("input", vela.inputs, tosa.inputs), ("output", vela.outputs, tosa.outputs)):
        if len(placed) != len(declared):
            raise DelegateIoError(f"Vela placed {len(placed)} {kind}s, the TOSA graph has {len(declared)}")
        tensors = []
        for index, (buffer, io) in enumerate(zip(placed, declared)):
            if buffer.element_size != _ELEMENT_SIZE[io.dtype] or math.prod(buffer.shape) != math.prod(io.tosa_shape):
                raise DelegateIoError(
                    f"{kind} {index} '{io.name}': Vela's buffer {list(buffer.shape)} of {buffer.element_size}-byte "
                    f"elements does not hold the TOSA tensor {io.dtype}{list(io.tosa_shape)}")
            tensors.append(dataclasses.replace(buffer, shape=padded(io.tosa_shape)))
        replaced[kind] = tensors
    return dataclasses.replace(vela, inputs=replaced["input"], outputs=replaced["output"])


def program_tensor(io: object, nhwc_io: bool) -> ProgramTensor:
    """The tensor the program hands the delegate for TOSA boundary tensor ``io``: its
    PyTorch shape, or for ``nhwc_io`` programs a contiguous NHWC-shaped rank-4 tensor."""
    shape = tuple(io.shape)
    if nhwc_io and len(shape) == 4:
        shape = tuple(shape[d] for d in _NHWC)
    return ProgramTensor(shape, io.dtype)


def intended_copy(io: object, nhwc_io: bool) -> BoundaryCopy:
    """The copy the lowering means: TOSA keeps rank-4 tensors NHWC, the program NCHW."""
    return BoundaryCopy.PROGRAM_NCHW_NPU_NHWC if len(io.shape) == 4 and not nhwc_io else BoundaryCopy.DIRECT


def _same_bytes(first: BoundaryCopy, second: BoundaryCopy, tensor: ProgramTensor) -> bool:
    """Two copies agree when they are the same or the NHWC permutation moves no bytes
    (C == 1 or H * W == 1)."""
    if first == second:
        return True
    kept = [axis for axis in _NHWC if tensor.shape[axis] != 1] if len(tensor.shape) == 4 else []
    return kept == sorted(kept)


def check_boundary(tosa: object, vela: VelaResult, nhwc_io: bool, npu_is_nhwc: bool = True) -> None:
    """Raises DelegateIoError naming the input/output whose program tensor the runtime
    would not map onto its NPU buffer, or would map with another layout than the TOSA
    graph has (the delegate would then compute on scrambled data)."""
    for kind, declared, buffers in (("input", tosa.inputs, vela.inputs), ("output", tosa.outputs, vela.outputs)):
        for index, (io, buffer) in enumerate(zip(declared, buffers)):
            tensor = program_tensor(io, nhwc_io)
            try:
                chosen = choose_boundary_copy(tensor, buffer, npu_is_nhwc)
            except DelegateIoError as error:
                raise DelegateIoError(f"{kind} {index} '{io.name}': {error}") from None
            wanted = intended_copy(io, nhwc_io)
            if not _same_bytes(chosen, wanted, tensor):
                raise DelegateIoError(
                    f"{kind} {index} '{io.name}': the runtime would copy the tensor {list(tensor.shape)} as "
                    f"'{chosen.value}' onto the NPU buffer {list(buffer.shape)}, but the TOSA graph needs "
                    f"'{wanted.value}' (the shape reads both ways)")
