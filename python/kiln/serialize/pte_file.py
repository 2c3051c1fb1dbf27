"""The ``.pte`` file layout around the flatbuffer.

::

    0   uint32 root table offset          (flatbuffer)
    4   "ET12"                            (file identifier)
    8   "eh00", uint32 header length 32,  (extended header, little endian)
        uint64 program_size, uint64 segment_base_offset, uint64 segment_data_size
    40  rest of the flatbuffer
    ... zero padding to a multiple of 128
    segment_base_offset: segments, each starting at a multiple of 128 relative to it

The header is inserted after the identifier of a finished flatbuffer. Offsets
inside a flatbuffer are relative, so only the root offset changes; the header is
32 bytes, a multiple of every alignment in the schema, so alignment is kept.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

import flatbuffers

from kiln import SerializationError
from kiln.ir.method_graph import align_up
from kiln.serialize import program_generated as pte

FILE_IDENTIFIER = b"ET12"
HEADER_MAGIC = b"eh00"
HEADER_LENGTH = 32
SEGMENT_ALIGNMENT = 128
_HEADER_OFFSET = 8  # right after the root offset and the file identifier
_MIN_HEADER_LENGTH = 24  # magic, length, program size, segment base offset


@dataclass(frozen=True)
class ExtendedHeader:
    """The ``eh00`` header that says where the flatbuffer ends and segments begin."""

    program_size: int
    segment_base_offset: int
    segment_data_size: int

    def to_bytes(self) -> bytes:
        return HEADER_MAGIC + struct.pack(
            "<IQQQ", HEADER_LENGTH, self.program_size, self.segment_base_offset, self.segment_data_size
        )

    @staticmethod
    def parse(data: bytes) -> "ExtendedHeader | None":
        """The header of a ``.pte`` file, or None if it has none (plain flatbuffer)."""
        start = _HEADER_OFFSET
        if len(data) < start + 8 or data[start : start + 4] != HEADER_MAGIC:
            return None
        (length,) = struct.unpack_from("<I", data, start + 4)
        if length < _MIN_HEADER_LENGTH or len(data) < start + length:
            raise SerializationError(
                f"extended header length {length} is invalid for a file of {len(data)} bytes"
            )
        program_size, segment_base = struct.unpack_from("<QQ", data, start + 8)
        segment_size = struct.unpack_from("<Q", data, start + 24)[0] if length >= 32 else 0
        return ExtendedHeader(program_size, segment_base, segment_size)


def _layout_segments(segments: list[bytes]) -> tuple[list[pte.DataSegmentT], bytes]:
    entries: list[pte.DataSegmentT] = []
    parts: list[bytes] = []
    cursor = 0
    for data in segments:
        start = align_up(cursor, SEGMENT_ALIGNMENT)
        parts.append(b"\x00" * (start - cursor))
        parts.append(data)
        entry = pte.DataSegmentT()
        entry.offset = start
        entry.size = len(data)
        entries.append(entry)
        cursor = start + len(data)
    return entries, b"".join(parts)


def write_pte(program: pte.ProgramT, segments: list[bytes]) -> bytes:
    """Serialize ``program`` with ``segments`` appended; sets ``program.segments``."""
    program.segments, segment_data = _layout_segments(segments)
    builder = flatbuffers.Builder(64 * 1024)
    builder.Finish(program.Pack(builder), file_identifier=FILE_IDENTIFIER)
    flatbuffer = bytes(builder.Output())
    if flatbuffer[4:8] != FILE_IDENTIFIER:
        raise SerializationError(f"flatbuffer identifier is {flatbuffer[4:8]!r}, expected ET12")

    program_size = len(flatbuffer) + HEADER_LENGTH
    segment_base_offset = align_up(program_size, SEGMENT_ALIGNMENT)
    header = ExtendedHeader(program_size, segment_base_offset, len(segment_data))
    (root_offset,) = struct.unpack_from("<I", flatbuffer, 0)
    return b"".join(
        [
            struct.pack("<I", root_offset + HEADER_LENGTH),
            flatbuffer[4:_HEADER_OFFSET],
            header.to_bytes(),
            flatbuffer[_HEADER_OFFSET:],
            b"\x00" * (segment_base_offset - program_size),
            segment_data,
        ]
    )


def read_pte(data: bytes) -> tuple[pte.ProgramT, list[bytes]]:
    """Parse a ``.pte`` file (Kiln's or ExecuTorch's) into (program, segment bytes).

    Raises:
        SerializationError: wrong identifier, bad header, or a segment outside the file.
    """
    data = bytes(data)
    if len(data) < _HEADER_OFFSET or data[4:8] != FILE_IDENTIFIER:
        raise SerializationError(
            f"not a .pte program: identifier {data[4:8]!r}, expected {FILE_IDENTIFIER!r}"
        )
    header = ExtendedHeader.parse(data)
    program_end = header.program_size if header else len(data)
    if program_end > len(data):
        raise SerializationError(f"program size {program_end} exceeds file size {len(data)}")
    try:
        program = pte.ProgramT.InitFromPackedBuf(data[:program_end], 0)
    except Exception as error:  # the generated reader raises struct/index errors
        raise SerializationError(f"flatbuffer could not be parsed: {error}") from error
    base = header.segment_base_offset if header else 0
    segments: list[bytes] = []
    for index, entry in enumerate(program.segments or []):
        start, end = base + entry.offset, base + entry.offset + entry.size
        if entry.size and end > len(data):
            raise SerializationError(
                f"segment {index} [{start}, {end}) lies outside the file of {len(data)} bytes"
            )
        segments.append(data[start:end])
    return program, segments
