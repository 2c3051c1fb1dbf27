"""Compile a TOSA 1.0 graph for an Ethos-U with Vela: ``compile_tosa(tosa, compile_spec)``.

Two ways in, one result (:class:`VelaResult`):

* in-process (default): ``ethosu.regor.compile(accelerator, tosa, "TOSA", system
  config, options)``, the compiled core that Vela's own CLI calls for TOSA input
  (about a millisecond for small graphs). It is not part of Vela's documented
  interface, so this module is the only place that touches it, and the CLI is the
  fallback when it is missing, the compile spec carries flags it cannot express, or
  it returns something unexpected.
* the ``vela`` CLI (``use_cli=True`` or fallback): ``--output-format=raw`` writes an
  ``.npz`` (command stream, weights, scratch sizes, IO layout) and
  ``--verbose-performance`` a per-layer CSV.

A graph Vela rejects raises :class:`VelaError` naming the subgraph and Vela's reason. So
does a graph Vela compiles while printing an ``Error:`` diagnostic: Vela 5.2 reports some
of its own mistakes that way and still returns a command stream (e.g. a lookup table
DMA-ed past the end of an ethos-u55-64's SHRAM, so the NPU's TABLE reads a slot that was
never loaded).
"""

from __future__ import annotations

import contextlib
import csv
import logging
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from kiln import KilnError

logger = logging.getLogger(__name__)

COMMAND_STREAM_MAGIC = b"COP1"

# Vela CLI flags the in-process path can pass on, as (regor section, key).
_OPTION_FLAGS: dict[str, tuple[str, str]] = {
    "--optimise": ("scheduler", "optimize"),
    "--arena-cache-size": ("scheduler", "arena_size_limit"),
    "--cpu-tensor-alignment": ("scheduler", "cpu_tensor_alignment"),
    "--tensor-allocator": ("scheduler", "tensor_allocator"),
}
_DEFAULT_OPTIONS: dict[str, dict[str, str]] = {
    "compiler": {"enable_db": "true", "output_format": "Raw", "cop_format": "COP1"},
    "scheduler": {"optimize": "Performance", "arena_size_limit": str(2**32), "disable_feature": "",
                  "cpu_tensor_alignment": "16", "tensor_allocator": "HillClimb"},
    "graph": {"softmax_int16_neg_exp_range": "10.0"},
}


class VelaError(KilnError):
    """Vela could not compile a subgraph (names the subgraph and Vela's reason)."""

    def __init__(self, subgraph: str, target: str, reason: str) -> None:
        super().__init__(f"Vela rejected subgraph {subgraph!r} for {target}: {reason}")
        self.subgraph = subgraph
        self.target = target
        self.reason = reason


class _UseCli(Exception):
    """The in-process path cannot serve this request (the CLI can)."""


@dataclass(frozen=True)
class VelaTensor:
    """An NPU input/output as Vela placed it: 6-D shape, element size, byte offset in its region."""

    shape: tuple[int, ...]
    element_size: int
    offset: int
    region: int

    @property
    def nbytes(self) -> int:
        return int(np.prod(self.shape)) * self.element_size


@dataclass(frozen=True)
class LayerPerformance:
    """Vela's estimate for one NPU operation.

    ``name`` is the TOSA tensor the operation produces; ``operations`` how many NPU
    operations (stripes) of the command stream compute it, in stream order (0 when not
    known: the CLI path); ``ofm_shape`` its output's (height, width, depth).
    """

    name: str
    operator: str
    cycles: int
    macs: int
    operations: int = 0
    ofm_shape: tuple[int, ...] = ()
    # Where the output lives while the stream runs: memory ("Sram", "Dram"), byte offset in
    # that memory's region and layout ("NHWC" or "NHCWB16"); offset -1 when not known.
    ofm_memory: str = ""
    ofm_offset: int = -1
    ofm_format: str = ""
    # Index of the TOSA operator this operation came from, in the graph's operator order
    # (-1 when not known: the CLI path).
    source_operator: int = -1


@dataclass
class VelaResult:
    """What Vela produced for one subgraph.

    Attributes:
        command_stream: the NPU command stream (starts with ``b"COP1"``).
        weights: encoded weights, biases/scales and LUTs (region 0, read-only).
        scratch_size / fast_scratch_size: bytes of the tensor arena (region 1) and
            the fast scratch (region 2) the runtime must provide.
        inputs / outputs: where the NPU reads inputs and writes outputs.
        layers: per-operation cycle estimates.
        npu_cycles / total_cycles: whole-subgraph estimates.
        sram_bytes: peak SRAM use (arena, plus anything Vela stages in SRAM).
        flash_bytes: read-only bytes: weights + command stream.
        via: "regor" (in-process) or "cli".
    """

    name: str
    target: str
    command_stream: bytes
    weights: bytes
    scratch_size: int
    fast_scratch_size: int
    inputs: list[VelaTensor]
    outputs: list[VelaTensor]
    layers: list[LayerPerformance] = field(default_factory=list)
    npu_cycles: int = 0
    total_cycles: int = 0
    sram_bytes: int = 0
    macs: int = 0
    via: str = "regor"

    @property
    def flash_bytes(self) -> int:
        return len(self.weights) + len(self.command_stream)

    def summary(self) -> str:
        return (f"{self.name} on {self.target}: {self.npu_cycles} NPU cycles, {len(self.layers)} NPU ops, "
                f"SRAM {self.sram_bytes} B, flash {self.flash_bytes} B (weights {len(self.weights)} B)")


# --------------------------------------------------------------------------- in-process
def _regor_options(compile_spec: Any) -> str:
    sections = {name: dict(values) for name, values in _DEFAULT_OPTIONS.items()}
    if getattr(compile_spec, "arena_cache_size", None):
        sections["scheduler"]["arena_size_limit"] = str(compile_spec.arena_cache_size)
    for flag in getattr(compile_spec, "extra_flags", ()):
        name, _, value = flag.partition("=")
        if name not in _OPTION_FLAGS or not value:
            raise _UseCli(f"flag {flag!r} has no in-process equivalent")
        section, key = _OPTION_FLAGS[name]
        sections[section][key] = value
    return "".join(f"\n[{name}]\n" + "".join(f"{k}={v}\n" for k, v in values.items())
                   for name, values in sections.items())


@contextlib.contextmanager
def _native_output(lines: list[str]) -> Iterator[None]:
    """Collects what native code writes to file descriptors 1 and 2 meanwhile into
    ``lines`` (regor prints its diagnostics with printf, not through Python)."""
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        saved = [os.dup(1), os.dup(2)]
    except OSError:  # no standard descriptors (a windowless interpreter): nothing to read back
        yield
        return
    try:
        with tempfile.TemporaryFile() as captured:
            os.dup2(captured.fileno(), 1)
            os.dup2(captured.fileno(), 2)
            try:
                yield
            finally:
                _flush_c_stdio()
                os.dup2(saved[0], 1)
                os.dup2(saved[1], 2)
                captured.seek(0)
                lines.extend(ln for ln in captured.read().decode("utf-8", "replace").splitlines() if ln.strip())
    finally:
        for fd in saved:
            os.close(fd)


def _flush_c_stdio() -> None:
    """fflush(NULL): printf output still in the C library's buffers goes to the capture."""
    try:
        import ctypes

        ctypes.CDLL(None).fflush(None)
    except (OSError, AttributeError):  # no C library handle on this platform: nothing buffered to lose
        pass


def _raise_on_diagnostics(lines: list[str], name: str, target: str) -> None:
    """VelaError if Vela printed ``Error:`` lines; other lines go to the debug log."""
    errors = [ln.strip() for ln in lines if ln.lstrip().startswith("Error:")]
    for line in lines:
        if line.strip() not in errors:
            logger.debug("vela (%s): %s", name, line)
    if errors:
        raise VelaError(name, target, "Vela reported an error and its command stream would be wrong: "
                        + " | ".join(errors[:3]))


def _rows(database: Any, name: str) -> list[dict[str, str]]:
    if name not in database.tables:
        return []
    table = database.tables[name]
    return [dict(zip(table.header, row)) for row in table.data]


def _layers_from_database(database: Any) -> list[LayerPerformance]:
    if "perf" not in database.tables:
        return []
    # The command queue lists each NPU operation (stripe) with the scheduled operation it
    # belongs to; the source table the TOSA operator's output shape.
    stripes: dict[str, int] = {}
    for row in _rows(database, "queue"):
        stripes[row.get("scheduled_id", "")] = stripes.get(row.get("scheduled_id", ""), 0) + 1
    shapes = {row["id"]: (int(row["ofm_h"]), int(row["ofm_w"]), int(row["ofm_d"]))
              for row in _rows(database, "source") if {"id", "ofm_h", "ofm_w", "ofm_d"} <= set(row)}
    # The source table's ext_key is the operator's index in the TOSA graph Vela read.
    source_operators = {row["id"]: int(row["ext_key"]) for row in _rows(database, "source")
                        if row.get("ext_key", "").isdigit()}
    places = {row["name"]: (row.get("memory", ""), int(row.get("start_address") or "-1", 0), row.get("format", ""))
              for row in _rows(database, "tensors") if "name" in row}
    layers = []
    for row in _rows(database, "perf"):
        memory, offset, layout = places.get(row["name"], ("", -1, ""))
        layers.append(LayerPerformance(row["name"], row["operator"], int(row["op_cycles"] or 0),
                                       int(row["mac_count"] or 0), stripes.get(row.get("id", ""), 0),
                                       shapes.get(row.get("source_id", ""), ()), memory, offset, layout,
                                       source_operators.get(row.get("source_id", ""), -1)))
    return layers


def _compile_regor(tosa: bytes, compile_spec: Any, name: str) -> VelaResult:
    try:
        from ethosu import regor
    except ImportError as error:
        raise _UseCli(f"ethosu.regor is not importable: {error}") from None
    options = _regor_options(compile_spec)
    printed: list[str] = []
    try:
        with _native_output(printed):
            model = regor.compile(compile_spec.regor_accelerator, tosa, "TOSA",
                                  compile_spec.regor_system_config(), options, False)
    except Exception as error:  # regor raises plain RuntimeErrors with Vela's message
        raise VelaError(name, compile_spec.target, str(error).strip() or type(error).__name__) from None
    _raise_on_diagnostics(printed, name, compile_spec.target)
    if not isinstance(model, regor.CompiledRawModel):
        raise _UseCli(f"regor returned {type(model).__name__}, expected CompiledRawModel")
    report = model.perf_report
    if report.cpuOps:
        raise VelaError(name, compile_spec.target, f"{report.cpuOps} operations were left for the CPU")
    memories = {str(k).lower(): v for k, v in report.memories.items()}
    sram = memories["sram"].peakUsage if "sram" in memories else 0
    return VelaResult(
        name=name, target=compile_spec.target,
        command_stream=bytes(model.command_stream), weights=bytes(model.read_only.data),
        scratch_size=int(model.scratch.size), fast_scratch_size=int(model.scratch_fast.size),
        inputs=[VelaTensor(tuple(t.shape), t.element_size, t.address, t.region) for t in model.inputs],
        outputs=[VelaTensor(tuple(t.shape), t.element_size, t.address, t.region) for t in model.outputs],
        layers=_layers_from_database(model.opt_database), npu_cycles=int(report.npuCycles),
        total_cycles=int(report.totalCycles), sram_bytes=int(sram), macs=int(report.macCount), via="regor",
    )


# --------------------------------------------------------------------------- CLI
def _tensors_from_npz(data: Any, prefix: str) -> list[VelaTensor]:
    return [VelaTensor(tuple(int(d) for d in shape), int(size), int(offset), int(region))
            for shape, size, offset, region in zip(data[f"{prefix}_shape"], data[f"{prefix}_elem_size"],
                                                   data[f"{prefix}_offset"], data[f"{prefix}_region"])]


def _npz_bytes(array: np.ndarray) -> bytes:
    """Vela saves bytes as a 0-d ``|S<n>`` array (``tobytes()`` is exact, trailing NULs
    included), but an empty one reads back as ``|S1`` whose ``tobytes()`` is one NUL
    byte (ExecuTorch's packer passes that byte on as the weights)."""
    if array.ndim == 0 and array.dtype.kind == "S" and array.dtype.itemsize == 1 and array.item() == b"":
        return b""
    return array.tobytes()


def _compile_cli(tosa: bytes, compile_spec: Any, name: str, directory: Path) -> VelaResult:
    tosa_path = directory / f"{name}.tosa"
    tosa_path.write_bytes(tosa)
    command = [sys.executable, "-m", "ethosu.vela", *compile_spec.vela_args(), "--output-format=raw",
               "--verbose-performance", f"--output-dir={directory}", str(tosa_path)]
    logger.debug("running %s", " ".join(command))
    process = subprocess.run(command, capture_output=True, text=True, check=False)
    lines = [ln for ln in (process.stderr + process.stdout).splitlines() if ln.strip()]
    if process.returncode != 0:
        raise VelaError(name, compile_spec.target, " | ".join(lines[-5:]) or f"vela exit code {process.returncode}")
    _raise_on_diagnostics(lines, name, compile_spec.target)
    with np.load(directory / f"{name}_vela.npz", allow_pickle=False) as data:
        command_stream = _npz_bytes(data["cmd_data"])
        weights = _npz_bytes(data["weight_data"])
        scratch, fast = int(data["scratch_size"]), int(data["scratch_fast_size"])
        inputs, outputs = _tensors_from_npz(data, "input"), _tensors_from_npz(data, "output")
    layers = []
    per_layer = directory / f"{name}_per-layer.csv"
    if per_layer.is_file():
        with per_layer.open() as handle:
            for row in csv.DictReader(handle):
                layers.append(LayerPerformance(row["Name"], row["NNG Operator"], int(float(row["Op Cycles"])),
                                               int(float(row["MAC Count"]))))
    summary = next(directory.glob(f"{name}_summary_*.csv"))
    with summary.open() as handle:
        row = next(csv.DictReader(handle))
    return VelaResult(
        name=name, target=compile_spec.target, command_stream=command_stream, weights=weights,
        scratch_size=scratch, fast_scratch_size=fast, inputs=inputs, outputs=outputs, layers=layers,
        npu_cycles=int(float(row["cycles_npu"])), total_cycles=int(float(row["cycles_total"])),
        sram_bytes=int(round(float(row["sram_memory_used"]) * 1024)), macs=int(float(row["nn_macs"])), via="cli",
    )


# --------------------------------------------------------------------------- outputs
def write_outputs(result: VelaResult, tosa: bytes, directory: Path) -> None:
    """Writes the TOSA graph, Vela's raw output (.npz, Vela's key names) and a per-layer CSV."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / f"{result.name}.tosa").write_bytes(tosa)

    def io_arrays(prefix: str, tensors: list[VelaTensor]) -> dict[str, np.ndarray]:
        return {f"{prefix}_shape": np.array([t.shape for t in tensors], np.int64).reshape(len(tensors), -1),
                f"{prefix}_elem_size": np.array([t.element_size for t in tensors], np.int64),
                f"{prefix}_offset": np.array([t.offset for t in tensors], np.int64),
                f"{prefix}_region": np.array([t.region for t in tensors], np.int64)}

    np.savez(directory / f"{result.name}_vela.npz",
             cmd_data=np.frombuffer(result.command_stream, np.uint8), weight_data=np.frombuffer(result.weights, np.uint8),
             scratch_shape=np.array([result.scratch_size], np.int64), scratch_size=np.int64(result.scratch_size),
             scratch_fast_shape=np.array([result.fast_scratch_size], np.int64),
             scratch_fast_size=np.int64(result.fast_scratch_size),
             **io_arrays("input", result.inputs), **io_arrays("output", result.outputs))
    with (directory / f"{result.name}_per-layer.csv").open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["name", "operator", "cycles", "macs"])
        writer.writerows([layer.name, layer.operator, layer.cycles, layer.macs] for layer in result.layers)


def compile_tosa(
    tosa: bytes,
    compile_spec: Any,
    *,
    output_dir: Path | None = None,
    use_cli: bool = False,
    name: str = "subgraph",
) -> VelaResult:
    """Compiles a TOSA 1.0 flatbuffer for ``compile_spec``'s Ethos-U target.

    Args:
        tosa: the serialized TOSA graph (``TosaSubgraph.flatbuffer``).
        compile_spec: an ``EthosUCompileSpec`` (target, system config, memory mode, flags).
        output_dir: if given, the TOSA file, Vela's raw ``.npz`` and a per-layer CSV
            are written there (``<name>.tosa``, ``<name>_vela.npz``, ``<name>_per-layer.csv``).
        use_cli: force the ``vela`` command line instead of the in-process compiler.
        name: subgraph name (file names, errors).

    Raises:
        VelaError: Vela rejected the graph (the message has Vela's reason).
    """
    result: VelaResult | None = None
    if not use_cli:
        try:
            result = _compile_regor(tosa, compile_spec, name)
        except _UseCli as why:
            logger.info("Vela in-process compile not used for %s (%s); running the vela CLI", name, why)
    if result is None:
        if output_dir is not None:
            output_dir.mkdir(parents=True, exist_ok=True)
            result = _compile_cli(tosa, compile_spec, name, output_dir)
        else:
            with tempfile.TemporaryDirectory(prefix="kiln-vela-") as temporary:
                result = _compile_cli(tosa, compile_spec, name, Path(temporary))
    if not result.command_stream.startswith(COMMAND_STREAM_MAGIC):
        raise VelaError(name, compile_spec.target, "the command stream does not start with COP1")
    if output_dir is not None and result.via == "regor":
        write_outputs(result, tosa, output_dir)
    logger.debug("%s", result.summary())
    return result
