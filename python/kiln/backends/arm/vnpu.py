"""Run a raw Vela output on the virtual Ethos-U (kiln._runtime.run_vela).

``run_raw(vela, inputs)`` places int8/int16 inputs at their offsets in their regions, the
weights in their region, runs the command stream and returns the outputs. ``vela`` can be
the path of a ``vela --output-format raw`` ``.npz``, a loaded npz, regor's CompiledRawModel
or any object with the same fields (kiln.backends.arm.vela's result).
"""

from __future__ import annotations

import logging
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from kiln.targets import family_of

logger = logging.getLogger(__name__)

#: The Ethos-U architectures whose command streams the virtual NPU runs. The one place
#: tools check a target against before they build anything for it (kiln-deploy).
VIRTUAL_NPU_ARCHITECTURES: tuple[str, ...] = ("ethos-u55", "ethos-u65", "ethos-u85")


def virtual_npu_refusal(target: str) -> str | None:
    """Why programs delegated to ``target`` (e.g. "ethos-u85-128") cannot run on the
    virtual NPU, or None when they can."""
    arch = family_of(target)
    if arch in VIRTUAL_NPU_ARCHITECTURES:
        return None
    names = [a.replace("ethos-", "").upper() for a in VIRTUAL_NPU_ARCHITECTURES]
    return (f"{target} programs cannot run: the virtual Ethos-U runs "
            f"{', '.join(names[:-1])} and {names[-1]} command streams only")


#: Index of the internal-memory (SHRAM) entry in the counters' byte lists.
INTERNAL_MEMORY = 8
_COP1 = b"COP1"


@dataclass(frozen=True)
class TensorPlacement:
    """Where Vela put an input or output: region, byte offset, shape and element size."""

    shape: tuple[int, ...]
    element_size: int
    region: int
    offset: int

    @property
    def nbytes(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) * self.element_size


@dataclass
class VelaRaw:
    """The parts of a Vela raw output the virtual NPU needs."""

    command_stream: bytes
    weights: bytes
    weight_region: int
    scratch_size: int
    scratch_region: int
    scratch_fast_size: int
    scratch_fast_region: int
    inputs: list[TensorPlacement] = field(default_factory=list)
    outputs: list[TensorPlacement] = field(default_factory=list)

    @property
    def target(self) -> tuple[str, int]:
        """(arch, macs) from the COP1 payload's config word, e.g. ("ethos-u55", 128)."""
        return target_from_command_stream(self.command_stream)


def target_from_command_stream(command_stream: bytes) -> tuple[str, int]:
    """Reads the NPU product and MACs/cycle that Vela wrote into the COP1 config action."""
    if command_stream[:4] != _COP1 or len(command_stream) < 16:
        raise ValueError("command stream has no COP1 driver header; pass arch/macs explicitly")
    tag, config = struct.unpack_from("<II", command_stream, 4)
    if tag & 0xFF != 1:
        raise ValueError(f"COP1 payload does not start with a config action (tag 0x{tag:08x})")
    product = config >> 28
    arch = {0: "ethos-u55", 1: "ethos-u65", 2: "ethos-u85"}.get(product)
    if arch is None:
        raise ValueError(f"COP1 config names product {product}, not an Ethos-U55/U65/U85")
    return arch, 1 << (config & 0xF)


def _fixed_bytes(value: Any) -> bytes:
    # np.savez stores byte strings as fixed-width |S arrays; .tobytes() keeps trailing zeros
    # that indexing a numpy bytes_ scalar would strip.
    if isinstance(value, np.ndarray):
        return value.tobytes()
    return bytes(value)


def _placements(shapes: Any, sizes: Any, regions: Any, offsets: Any) -> list[TensorPlacement]:
    return [
        TensorPlacement(tuple(int(d) for d in shape), int(size), int(region), int(offset))
        for shape, size, region, offset in zip(shapes, sizes, regions, offsets)
    ]


def load_vela_raw(vela: Any) -> VelaRaw:
    """Normalises an .npz path, a loaded npz or a regor CompiledRawModel to VelaRaw."""
    if isinstance(vela, VelaRaw):
        return vela
    if isinstance(vela, (str, Path)):
        with np.load(Path(vela)) as npz:
            return load_vela_raw({key: npz[key] for key in npz.files})
    if isinstance(vela, dict) or hasattr(vela, "files"):
        d = vela
        return VelaRaw(
            command_stream=_fixed_bytes(d["cmd_data"]),
            weights=_fixed_bytes(d["weight_data"]),
            weight_region=int(d["weight_region"]),
            scratch_size=int(d["scratch_size"]),
            scratch_region=int(d["scratch_region"]),
            scratch_fast_size=int(d["scratch_fast_size"]),
            scratch_fast_region=int(d["scratch_fast_region"]),
            inputs=_placements(d["input_shape"], d["input_elem_size"], d["input_region"], d["input_offset"]),
            outputs=_placements(
                d["output_shape"], d["output_elem_size"], d["output_region"], d["output_offset"]
            ),
        )
    if hasattr(vela, "read_only") and hasattr(vela, "command_stream"):  # regor.CompiledRawModel
        def placements(tensors: Any) -> list[TensorPlacement]:
            return [
                TensorPlacement(tuple(int(d) for d in t.shape), int(t.element_size), int(t.region), int(t.address))
                for t in tensors
            ]

        return VelaRaw(
            command_stream=bytes(vela.command_stream),
            weights=bytes(vela.read_only.data),
            weight_region=int(vela.read_only.region),
            scratch_size=int(vela.scratch.size),
            scratch_region=int(vela.scratch.region),
            scratch_fast_size=int(vela.scratch_fast.size),
            scratch_fast_region=int(vela.scratch_fast.region),
            inputs=placements(vela.inputs),
            outputs=placements(vela.outputs),
        )
    fields = ("command_stream", "weights", "scratch_size")
    if all(hasattr(vela, name) for name in fields):
        # kiln.backends.arm.vela.VelaResult (weights in region 0, arena in 1, fast scratch
        # in 2, its `fast_scratch_size`) or a dataclass naming the regions explicitly.
        fast_size = getattr(vela, "scratch_fast_size", getattr(vela, "fast_scratch_size", 0))
        return VelaRaw(
            command_stream=bytes(vela.command_stream),
            weights=bytes(vela.weights),
            weight_region=int(getattr(vela, "weight_region", 0)),
            scratch_size=int(vela.scratch_size),
            scratch_region=int(getattr(vela, "scratch_region", 1)),
            scratch_fast_size=int(fast_size),
            scratch_fast_region=int(getattr(vela, "scratch_fast_region", 2)),
            inputs=[TensorPlacement(tuple(t.shape), t.element_size, t.region, t.offset) for t in vela.inputs],
            outputs=[TensorPlacement(tuple(t.shape), t.element_size, t.region, t.offset) for t in vela.outputs],
        )
    raise TypeError(f"cannot read a Vela raw output from {type(vela).__name__}")


_DTYPES = {1: np.int8, 2: np.int16, 4: np.int32}


@dataclass
class VnpuRun:
    """Outputs and PMU-style counters of one run."""

    outputs: list[np.ndarray]
    counters: dict[str, Any]


def work_memory_bytes(command_stream: bytes, target: str) -> int:
    """Bytes of work memory the virtual NPU needs for ``command_stream`` (a COP1 payload) on
    ``target`` ("ethos-u85-256"): its internal memory and the largest operation's decode
    scratch, from the registers alone. Raises ImportError without Kiln's runtime extension
    and KilnRuntimeError for a stream the NPU refuses."""
    from kiln import _runtime

    return int(_runtime.vnpu_work_memory_bytes(command_stream, target))


def run_raw_with_counters(
    vela: Any, inputs: list[np.ndarray], arch: str | None = None, macs: int | None = None,
    observer: Any = None,
) -> VnpuRun:
    """Runs the command stream on the given inputs; returns the outputs and the counters.

    ``observer(index, op, ofm, regions)``, if given, is called after every NPU operation:
    ``op`` its record, ``ofm`` (dense NHWC bytes, height, width, depth, element size,
    signed) or None, ``regions`` the region bytearrays as they are at that moment."""
    from kiln import _runtime

    raw = load_vela_raw(vela)
    if arch is None or macs is None:
        arch, macs = raw.target
    if len(inputs) != len(raw.inputs):
        raise ValueError(f"{len(raw.inputs)} inputs expected, {len(inputs)} given")
    sizes: dict[int, int] = {raw.weight_region: len(raw.weights)}
    sizes[raw.scratch_region] = max(sizes.get(raw.scratch_region, 0), raw.scratch_size)
    if raw.scratch_fast_size > 0:
        sizes[raw.scratch_fast_region] = max(sizes.get(raw.scratch_fast_region, 0), raw.scratch_fast_size)
    for t in raw.inputs + raw.outputs:
        sizes[t.region] = max(sizes.get(t.region, 0), t.offset + t.nbytes)
    regions: list[bytearray | None] = [None] * (max(sizes) + 1)
    for index, size in sizes.items():
        regions[index] = bytearray(size)
    regions[raw.weight_region][: len(raw.weights)] = raw.weights
    for array, t in zip(inputs, raw.inputs):
        data = np.ascontiguousarray(array).astype(_DTYPES[t.element_size], copy=False).tobytes()
        if len(data) != t.nbytes:
            raise ValueError(f"input of {len(data)} bytes, Vela expects {t.nbytes} ({t.shape})")
        regions[t.region][t.offset : t.offset + t.nbytes] = data
    callback = None if observer is None else (lambda index, op, ofm: observer(index, op, ofm, regions))
    counters = _runtime.run_vela(raw.command_stream, regions, arch, macs, observer=callback)
    outputs = []
    for t in raw.outputs:
        buffer = bytes(regions[t.region][t.offset : t.offset + t.nbytes])
        outputs.append(np.frombuffer(buffer, dtype=_DTYPES[t.element_size]).reshape(t.shape).copy())
    logger.debug("virtual %s-%d: %s", arch, macs, {k: v for k, v in counters.items() if k != "ops"})
    return VnpuRun(outputs, counters)


def run_raw(vela: Any, inputs: list[np.ndarray], arch: str | None = None, macs: int | None = None) -> list[np.ndarray]:
    """Runs a Vela raw output on int8/int16 inputs on the virtual Ethos-U; returns the outputs."""
    return run_raw_with_counters(vela, inputs, arch, macs).outputs


def reference_mismatches(delegates: Any, seeds: tuple[int, ...] = (0, 1)) -> list[str]:
    """Each Ethos-U delegate of a compile report (``report.delegates``) run on the virtual NPU
    (its payload, as the runtime's backend runs it) and its TOSA graph on the TOSA reference
    model, on the same random inputs over the whole range of their dtypes: one line per
    delegate and seed whose outputs differ (``"<delegate> seed S: N values differ"``), none
    when they agree bit for bit."""
    from kiln import _runtime

    differ = []
    for delegate in delegates:
        tosa = delegate.preprocessed.tosa
        specs = [(key, bytes(value)) for key, value in delegate.preprocessed.compile_specs]
        for seed in seeds:
            rng = np.random.default_rng(seed)
            inputs = [rng.integers(np.iinfo(io.numpy_dtype).min, np.iinfo(io.numpy_dtype).max + 1,
                                   size=io.shape).astype(io.numpy_dtype) for io in tosa.inputs]
            outputs = [np.zeros(io.shape, dtype=io.numpy_dtype) for io in tosa.outputs]
            _runtime.ethos_u_run_payload(delegate.preprocessed.blob, specs, inputs, outputs)
            count = sum(int(np.count_nonzero(got != expected))
                        for got, expected in zip(outputs, tosa.run_reference(inputs)))
            if count:
                differ.append(f"{delegate.name} seed {seed}: {count} values differ")
    return differ
