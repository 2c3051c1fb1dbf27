"""The Ethos-U delegate payload: Vela's output as ExecuTorch's ``EthosUBackend`` reads it.

Format (ExecuTorch 1.5.1, ``backends/arm/arm_vela.py`` writes it and the runtime's
``VelaBinStream`` parses it), all little endian:

* a sequence of blocks, each a 32-byte header - name (16 bytes, NUL padded, at most
  15 characters), uint32 data length (unpadded), uint8 "external" flag (0: data is
  inline), 11 reserved zero bytes - followed by the data zero-padded to 16 bytes;
* blocks in this order: ``vela_bin_stream`` (empty), ``cmd_data`` (the command
  stream, starts with ``COP1``), ``weight_data``, ``scratch_size`` (uint32 bytes of
  the tensor arena), ``inputs``, ``outputs``, ``vela_end_stream`` (empty, last);
* ``inputs``/``outputs``: int32 count, then per tensor nine int32: a 6-D shape,
  element size, byte offset, region.

The fast scratch size is not in the payload (ExecuTorch's runtime takes the fast
scratch from a global buffer); Kiln keeps the same format so one runtime runs both.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

from kiln import KilnError
from kiln.backends.arm.vela import COMMAND_STREAM_MAGIC, VelaResult, VelaTensor

ALIGNMENT = 16
NAME_LENGTH = 16
_HEADER = struct.Struct(f"<{NAME_LENGTH}sIB11s")  # 32 bytes
_IO = struct.Struct("<9i")
_COUNT = struct.Struct("<i")
VELA_IO_DIMS = 6
HEADER_BLOCK = "vela_bin_stream"
FOOTER_BLOCK = "vela_end_stream"
BLOCK_ORDER = (HEADER_BLOCK, "cmd_data", "weight_data", "scratch_size", "inputs", "outputs", FOOTER_BLOCK)


class PayloadError(KilnError):
    """A delegate payload is malformed (names the block and what is wrong)."""


@dataclass
class Payload:
    """A parsed delegate payload."""

    command_stream: bytes
    weights: bytes
    scratch_size: int
    inputs: list[VelaTensor]
    outputs: list[VelaTensor]
    blocks: dict[str, bytes] = field(default_factory=dict)  # raw data of every block, in order


def _padded(data: bytes) -> bytes:
    return data + b"\x00" * (-len(data) % ALIGNMENT)


def _block(name: str, data: bytes) -> bytes:
    encoded = name.encode("ascii")
    if len(encoded) >= NAME_LENGTH:
        raise PayloadError(f"block name {name!r} is longer than {NAME_LENGTH - 1} characters")
    return _HEADER.pack(encoded, len(data), 0, b"\x00" * 11) + _padded(data)


def _pack_tensors(tensors: list[VelaTensor], what: str) -> bytes:
    out = [_COUNT.pack(len(tensors))]
    for index, tensor in enumerate(tensors):
        shape = tuple(tensor.shape)
        if len(shape) > VELA_IO_DIMS:
            raise PayloadError(f"{what} {index}: shape {shape} has more than {VELA_IO_DIMS} dims")
        shape = (1,) * (VELA_IO_DIMS - len(shape)) + shape
        out.append(_IO.pack(*shape, tensor.element_size, tensor.offset, tensor.region))
    return b"".join(out)


def pack(vela: VelaResult) -> bytes:
    """The delegate blob for ``vela`` (byte-identical to ExecuTorch's packing of the same output)."""
    if not vela.command_stream.startswith(COMMAND_STREAM_MAGIC):
        raise PayloadError("cmd_data: the command stream does not start with COP1")
    data = {
        HEADER_BLOCK: b"",
        "cmd_data": vela.command_stream,
        "weight_data": vela.weights,
        "scratch_size": struct.pack("<I", vela.scratch_size),
        "inputs": _pack_tensors(vela.inputs, "input"),
        "outputs": _pack_tensors(vela.outputs, "output"),
        FOOTER_BLOCK: b"",
    }
    return b"".join(_block(name, data[name]) for name in BLOCK_ORDER)


def _unpack_tensors(data: bytes, what: str) -> list[VelaTensor]:
    if len(data) < _COUNT.size:
        raise PayloadError(f"{what}: block of {len(data)} bytes has no tensor count")
    (count,) = _COUNT.unpack_from(data)
    if count < 0 or len(data) != _COUNT.size + count * _IO.size:
        raise PayloadError(f"{what}: {count} tensors need {_COUNT.size + max(count, 0) * _IO.size} bytes, "
                           f"block has {len(data)}")
    tensors = []
    for index in range(count):
        values = _IO.unpack_from(data, _COUNT.size + index * _IO.size)
        tensors.append(VelaTensor(tuple(values[:VELA_IO_DIMS]), values[6], values[7], values[8]))
    return tensors


def unpack(blob: bytes) -> Payload:
    """Parses a delegate blob (Kiln's or ExecuTorch's); raises PayloadError if malformed."""
    if len(blob) % ALIGNMENT:
        raise PayloadError(f"payload size {len(blob)} is not a multiple of {ALIGNMENT}")
    blocks: dict[str, bytes] = {}
    position = 0
    while position < len(blob):
        if position + _HEADER.size > len(blob):
            raise PayloadError(f"truncated block header at byte {position}")
        raw_name, length, external, _ = _HEADER.unpack_from(blob, position)
        name = raw_name.split(b"\x00", 1)[0].decode("ascii", errors="replace")
        start = position + _HEADER.size
        end = start + length
        if end > len(blob):
            raise PayloadError(f"block {name!r} at byte {position} claims {length} bytes, {len(blob) - start} left")
        if external:
            raise PayloadError(f"block {name!r} is stored externally (named data); not supported")
        if name not in BLOCK_ORDER or name in blocks:
            raise PayloadError(f"unexpected block {name!r} at byte {position}")
        if not blocks and name != HEADER_BLOCK:
            raise PayloadError(f"payload starts with {name!r}, expected {HEADER_BLOCK!r}")
        blocks[name] = blob[start:end]
        position = start + length + (-length % ALIGNMENT)
        if name == FOOTER_BLOCK:
            break
    if FOOTER_BLOCK not in blocks or position != len(blob):
        raise PayloadError(f"payload does not end with the {FOOTER_BLOCK!r} block")
    missing = [name for name in BLOCK_ORDER if name not in blocks]
    if missing:
        raise PayloadError(f"payload lacks blocks {missing}")
    if not blocks["cmd_data"].startswith(COMMAND_STREAM_MAGIC):
        raise PayloadError("cmd_data: the command stream does not start with COP1")
    if len(blocks["scratch_size"]) != 4:
        raise PayloadError(f"scratch_size: block has {len(blocks['scratch_size'])} bytes, expected 4")
    return Payload(
        command_stream=blocks["cmd_data"], weights=blocks["weight_data"],
        scratch_size=struct.unpack("<I", blocks["scratch_size"])[0],
        inputs=_unpack_tensors(blocks["inputs"], "inputs"), outputs=_unpack_tensors(blocks["outputs"], "outputs"),
        blocks=blocks,
    )
