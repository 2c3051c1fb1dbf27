"""``EthosUBackend.preprocess``: one delegated subgraph -> TOSA -> Vela -> delegate blob.

The blob is what ExecuTorch's ``EthosUBackend`` reads (Vela's raw output repacked,
see :mod:`kiln.backends.arm.payload`); the compile specs are the ones ExecuTorch
stores on Ethos-U delegates (``EthosUCompileSpec.to_compile_specs``). The
:class:`DelegateReport` says what the subgraph costs on the NPU.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Any, Optional

import torch

from kiln import KilnError

logger = logging.getLogger(__name__)

BACKEND_ID = "EthosUBackend"


class DelegationError(KilnError):
    """A subgraph could not be compiled for the NPU (TOSA lowering, Vela or the IO check failed).

    ``kiln.export`` catches it and leaves the subgraph on the CPU, with this
    message as the reason in the partition report.
    """

    def __init__(self, subgraph: str, stage: str, reason: str) -> None:
        super().__init__(f"{stage} rejected subgraph {subgraph}: {reason}")
        self.subgraph = subgraph
        self.stage = stage
        self.reason = reason


@dataclass
class DelegateReport:
    """Cost of one delegate on the NPU (Vela's estimates)."""

    name: str
    target: str
    backend_id: str = BACKEND_ID
    tosa_ops: dict[str, int] = field(default_factory=dict)
    npu_cycles: Optional[int] = None  # Vela's estimate per inference (NPU busy)
    total_cycles: Optional[int] = None  # Vela's estimate including memory-bound stalls
    sram_bytes: Optional[int] = None  # SRAM the NPU uses (tensor arena)
    scratch_bytes: Optional[int] = None  # scratch region the runtime must provide
    flash_bytes: Optional[int] = None  # read-only data: weights + command stream
    command_stream_bytes: Optional[int] = None
    weight_bytes: Optional[int] = None
    # Kiln's virtual NPU work memory for the stream (internal memory + the largest
    # operation's decode scratch); None when Kiln's runtime extension is not built
    npu_work_memory_bytes: Optional[int] = None
    blob_bytes: int = 0
    transpose_bytes: int = 0  # NCHW <-> NHWC bytes the CPU permutes at the boundary
    boundary: list[str] = field(default_factory=list)  # one line per boundary tensor
    seconds: dict[str, float] = field(default_factory=dict)  # time per stage

    @property
    def num_tosa_ops(self) -> int:
        return sum(self.tosa_ops.values())


@dataclass
class PreprocessResult:
    """What preprocessing one subgraph produced."""

    blob: bytes
    compile_specs: list[tuple[str, bytes]]
    tosa: Any  # kiln.backends.arm.tosa.TosaSubgraph
    vela: Any  # kiln.backends.arm.vela.VelaResult
    report: DelegateReport


def _fill_vela_figures(report: DelegateReport, vela: Any) -> None:
    report.npu_cycles = int(vela.npu_cycles)
    report.total_cycles = int(vela.total_cycles)
    report.sram_bytes = int(vela.sram_bytes)
    report.scratch_bytes = int(vela.scratch_size) + int(vela.fast_scratch_size)
    report.command_stream_bytes = len(vela.command_stream)
    report.weight_bytes = len(vela.weights)
    report.flash_bytes = int(vela.flash_bytes)
    report.npu_work_memory_bytes = _work_memory_bytes(vela.command_stream, report.target)


def _work_memory_bytes(command_stream: bytes, target: str) -> Optional[int]:
    """What the virtual NPU needs to run the stream (known now, not at the first inference:
    the runtime sizes the NPU's memory with the same number when the program loads)."""
    from kiln.backends.arm.vnpu import work_memory_bytes

    try:
        return work_memory_bytes(command_stream, target)
    except ImportError:
        return None
    except KilnError as error:  # the program may still run on an NPU; Kiln's cannot run it
        logger.warning("the virtual NPU refuses the %s stream: %s", target, error)
        return None


def _boundary_lines(tosa: Any) -> list[str]:
    lines = []
    for kind, tensors in (("in", tosa.inputs), ("out", tosa.outputs)):
        for io in tensors:
            move = f", transpose {io.transpose_bytes} B" if io.needs_transpose else ""
            lines.append(f"{kind} {io.name}: {io.dtype}{list(io.shape)} scale {io.scale:.6g} zp {io.zero_point}{move}")
    return lines


class EthosUBackend:
    """Compiles delegated subgraphs for an Ethos-U target."""

    id = BACKEND_ID

    @staticmethod
    def preprocess(
        subgraph: torch.fx.GraphModule, compile_spec: Any, *, name: str = "subgraph", nhwc_io: bool = False
    ) -> PreprocessResult:
        """Lowers ``subgraph`` to TOSA, compiles it with Vela and packs the payload.

        Args:
            subgraph: a standalone quantized GraphModule (int8 placeholders, get_attr
                constants, quantize nodes before each output), as
                :func:`kiln.passes.delegation.extract_subgraph` cuts it.
            compile_spec: the :class:`kiln.backends.arm.EthosUCompileSpec`.
            name: subgraph name, used in messages and file names.
            nhwc_io: the subgraph's rank-4 inputs/outputs are channels-last already.

        Raises:
            DelegationError: the TOSA lowering or Vela rejected the subgraph, or an
                input/output would not map onto its NPU buffer at run time (the message
                names the subgraph, the stage and the reason).
        """
        from kiln.backends.arm import delegate_io, payload, vela
        from kiln.backends.arm.tosa import lower_to_tosa

        seconds: dict[str, float] = {}
        started = time.perf_counter()
        try:
            tosa = lower_to_tosa(subgraph, compile_spec, nhwc_io=nhwc_io, name=name)
        except KilnError as error:
            raise DelegationError(name, "TOSA lowering", str(error)) from error
        seconds["tosa"] = time.perf_counter() - started
        started = time.perf_counter()
        try:
            compiled = vela.compile_tosa(tosa.flatbuffer, compile_spec, name=name)
        except KilnError as error:  # a VelaError's reason is Vela's own words, without the framing
            raise DelegationError(name, "Vela", getattr(error, "reason", None) or str(error)) from error
        seconds["vela"] = time.perf_counter() - started
        started = time.perf_counter()
        try:
            compiled = delegate_io.with_tosa_io_shapes(compiled, tosa)
            delegate_io.check_boundary(tosa, compiled, nhwc_io)
        except KilnError as error:
            raise DelegationError(name, "delegate IO check", str(error)) from error
        blob = payload.pack(compiled)
        seconds["pack"] = time.perf_counter() - started

        report = DelegateReport(name=name, target=str(compile_spec.target), tosa_ops=dict(tosa.op_counts))
        _fill_vela_figures(report, compiled)
        report.blob_bytes = len(blob)
        report.transpose_bytes = int(tosa.transpose_bytes)
        report.boundary = _boundary_lines(tosa)
        report.seconds = seconds
        logger.info(
            "%s: %d TOSA ops, %s NPU cycles, blob %d bytes (tosa %.3f s, vela %.3f s)",
            name, report.num_tosa_ops, report.npu_cycles, len(blob), seconds["tosa"], seconds["vela"],
        )
        # Kiln's TOSA graphs take/return rank-4 tensors as NHWC (the CPU transposes at the
        # boundary); this tells the runtime, for shapes that read the same both ways (C == H == W).
        specs = [*compile_spec.to_compile_specs(), ("io_layout", b"nhwc")]
        return PreprocessResult(blob, specs, tosa, compiled, report)
