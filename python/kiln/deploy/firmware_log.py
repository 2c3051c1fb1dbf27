"""Reading the runner firmware's UART log: its outputs (``KILN-OUTPUT``/``KILN-HEX``
lines, every byte) and its instruction counts."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from kiln.serialize.scalar_types import NUMPY_BY_CPP_NAME


@dataclass
class FirmwareLog:
    text: str
    #: Raw bytes and dtype name of each output, by index.
    output_bytes: dict[int, bytes] = field(default_factory=dict)
    output_dtypes: dict[int, str] = field(default_factory=dict)
    #: Ticks and ~instructions of the inference (None if the log has no such line).
    inference_ticks: int | None = None
    inference_instructions: int | None = None

    def output(self, index: int, shape: tuple[int, ...]) -> np.ndarray:
        """Output ``index`` as an array of ``shape``."""
        dtype = NUMPY_BY_CPP_NAME[self.output_dtypes[index]]
        return np.frombuffer(self.output_bytes[index], dtype=dtype).reshape(shape)


_OUTPUT = re.compile(r"^KILN-OUTPUT (\d+) (\w+) (\d+)$")
_HEX = re.compile(r"^KILN-HEX (\d+) ([0-9a-f]*)$")
_END = re.compile(r"^KILN-OUTPUT-END (\d+)$")
_INFERENCE = re.compile(r"inference: (\d+) ticks, ~(\d+) instructions")


def parse_firmware_log(text: str) -> FirmwareLog:
    """Collects every output the log carries. Raises ValueError for an output whose hex
    dump is cut short (e.g. the firmware faulted while printing it)."""
    log = FirmwareLog(text)
    sizes: dict[int, int] = {}
    chunks: dict[int, list[str]] = {}
    for raw in text.splitlines():
        line = raw.strip()
        if match := _OUTPUT.match(line):
            index = int(match.group(1))
            log.output_dtypes[index] = match.group(2)
            sizes[index] = int(match.group(3))
            chunks[index] = []
        elif match := _HEX.match(line):
            chunks.setdefault(int(match.group(1)), []).append(match.group(2))
        elif match := _END.match(line):
            index = int(match.group(1))
            data = bytes.fromhex("".join(chunks.get(index, [])))
            if len(data) != sizes.get(index, -1):
                raise ValueError(f"output {index}: the log carries {len(data)} bytes, "
                                 f"its header says {sizes.get(index)}")
            log.output_bytes[index] = data
        elif match := _INFERENCE.search(line):
            log.inference_ticks = int(match.group(1))
            log.inference_instructions = int(match.group(2))
    return log
