"""The memory manifest: what a program needs in memory, written next to its ``.pte``.

``write_manifest("out/mv2.pte", "out")`` writes two files:

* ``mv2.manifest.json`` -- every pool the runner must provide, its exact size and its
  intended placement on the board (``SRAM`` or ``DDR``);
* ``mv2_memory.h`` -- the same as C macros, which the firmware build includes to size
  its pools (examples/arm/executor_runner/memory_pools.cpp). A program that does not fit
  the board fails the firmware build with both sizes in the message.

The sizes come from Kiln's runtime itself (``kiln.runtime``), never from a second
implementation of its rules:

* planned buffers: ``MethodMeta::memory_planned_buffer_size`` per memory id;
* method allocator: ``MethodMeta::method_allocator_size()``, computed by the runtime
  built for this host. The runtime's tables hold pointers and ``size_t``, which are 8
  bytes on the (LP64) host and 4 on a Cortex-M, so this is an upper bound for 32-bit
  firmware; the firmware computes its own figure at boot and logs both;
* temp allocator: the peak a run of the method on the host takes (kernel scratch
  depends on shapes, not values);
* NPU scratch: the ``scratch_size`` of every Ethos-U delegate payload. The delegate
  takes its scratch arena from the method allocator, so it is already counted there;
  it is listed for the reader.

Placement is greedy in order of access frequency: the method allocator, the temp
allocator, then the planned buffers go to SRAM while they fit the board's SRAM budget;
the rest go to DDR. The program itself is read-only data in DDR. The budgets come from the
board file (:mod:`kiln.boards`): the sizes of the regions it names for the pools placed in
"SRAM" and in "DDR" (``memory.sram_pools``, ``memory.ddr_pools``); the firmware build checks
that the pools, the program and its inputs fit those regions.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import struct
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from kiln.boards import DEFAULT_BOARD, BoardProfile, load_board

logger = logging.getLogger("kiln.memory.manifest")

MANIFEST_FORMAT = "kiln-memory-manifest"
MANIFEST_VERSION = 1
#: Every pool is aligned to this many bytes in firmware; totals count the padding.
POOL_ALIGNMENT = 16
#: Section names of the pools in examples/arm/platform/firmware.ld.in.
_SECTIONS = {"SRAM": ".bss.kiln_sram", "DDR": ".bss.kiln_ddr"}


@dataclass(frozen=True)
class PoolBudget:
    """The memory a board offers Kiln's pools: the sizes of the regions its board file
    names for the pools placed in "SRAM" and in "DDR"."""

    name: str
    sram_bytes: int
    ddr_bytes: int


def pool_budget(board: BoardProfile | str | Path | None = None) -> PoolBudget:
    """The pool budget of a board profile, a shipped board's name or a board file's path
    (default: the default board, corstone-300)."""
    profile = board if isinstance(board, BoardProfile) else load_board(board or DEFAULT_BOARD)
    return PoolBudget(profile.name, profile.sram_pool_region.size, profile.ddr_pool_region.size)


@dataclass
class Pool:
    """One block of memory the runner provides."""

    name: str
    bytes: int
    placement: str = "SRAM"
    #: memory id (1-based) for planned buffers, None otherwise.
    memory_id: int | None = None
    note: str = ""


@dataclass
class Manifest:
    program: str
    program_bytes: int
    program_sha256: str
    method: str
    board: PoolBudget
    pools: list[Pool] = field(default_factory=list)
    #: Bytes of NPU scratch inside the method allocator (0 without Ethos-U delegates).
    npu_scratch_bytes: int = 0
    num_delegates: int = 0
    #: The Ethos-U configuration the program's delegates were compiled for ("" without
    #: them, or when its .debug.json is not beside it).
    npu_target: str = ""
    #: Vela's cycle estimate of one run of the method's NPU work: the sum of its per-layer
    #: cycles, memory stalls included (0: unknown).
    vela_npu_cycles: int = 0

    def pool(self, name: str) -> Pool:
        return next(p for p in self.pools if p.name == name)

    @property
    def planned_buffers(self) -> list[Pool]:
        return [p for p in self.pools if p.memory_id is not None]

    def total(self, placement: str) -> int:
        """Bytes placed in ``placement``, each pool padded to POOL_ALIGNMENT."""
        return sum(_align(p.bytes) for p in self.pools if p.placement == placement)

    def to_json(self) -> dict:
        return {
            "format": MANIFEST_FORMAT,
            "version": MANIFEST_VERSION,
            "program": {"file": self.program, "bytes": self.program_bytes,
                        "sha256": self.program_sha256, "placement": "DDR"},
            "method": self.method,
            "board": asdict(self.board),
            "pools": [
                {k: v for k, v in asdict(p).items() if v is not None and v != ""} for p in self.pools
            ],
            "npu_scratch": {"bytes": self.npu_scratch_bytes, "delegates": self.num_delegates,
                            "included_in": "method_allocator"},
            "npu": {"target": self.npu_target, "vela_npu_cycles": self.vela_npu_cycles},
            "totals": {"SRAM": self.total("SRAM"), "DDR": self.total("DDR")},
        }


def _align(size: int) -> int:
    return (size + POOL_ALIGNMENT - 1) // POOL_ALIGNMENT * POOL_ALIGNMENT


def _place(pools: list[Pool], board: PoolBudget) -> None:
    """SRAM while it lasts, in the pools' order; DDR for the rest."""
    sram_left = board.sram_bytes
    for pool in pools:
        if _align(pool.bytes) <= sram_left:
            pool.placement = "SRAM"
            sram_left -= _align(pool.bytes)
        else:
            pool.placement = "DDR"


# ---- the Ethos-U delegate payload (block format: see backends/arm/runtime/payload_parser.h) ----

_BLOCK_HEADER = 32
_BLOCK_ALIGN = 16


def ethos_u_scratch_bytes(payload: bytes) -> int:
    """The ``scratch_size`` block of an Ethos-U delegate payload (0 if it has none)."""
    offset = 0
    while offset + _BLOCK_HEADER <= len(payload):
        name = payload[offset : offset + 16].split(b"\0", 1)[0].decode("ascii", "replace")
        (length,) = struct.unpack_from("<I", payload, offset + 16)
        data = offset + _BLOCK_HEADER
        if name == "scratch_size" and length >= 4:
            return struct.unpack_from("<I", payload, data)[0]
        if name == "vela_end_stream":
            break
        offset = data + (length + _BLOCK_ALIGN - 1) // _BLOCK_ALIGN * _BLOCK_ALIGN
    return 0


def _npu_scratch(program_bytes: bytes, method: str) -> tuple[int, int]:
    """(scratch bytes summed over the method's Ethos-U delegates, number of delegates)."""
    from kiln.serialize import read_pte
    from kiln.serialize import program_generated as pte

    program, segments = read_pte(program_bytes)
    total, count = 0, 0
    for plan in program.executionPlan or []:
        name = plan.name.decode() if isinstance(plan.name, bytes) else plan.name
        if name != method:
            continue
        for delegate in plan.delegates or []:
            count += 1
            backend = delegate.id.decode() if isinstance(delegate.id, bytes) else delegate.id
            if backend != "EthosUBackend" or delegate.processed is None:
                continue
            ref = delegate.processed
            if ref.location == pte.DataLocation.SEGMENT:
                blob = segments[ref.index]
            else:
                blob = bytes(bytearray(program.backendDelegateData[ref.index].data))
            total += ethos_u_scratch_bytes(blob)
    return total, count


# ---- measuring with the runtime ----


def _npu_facts(program_path: Path, method: str) -> tuple[str, int]:
    """(target, Vela's NPU cycles per run) of the method's Ethos-U delegates, from the
    ``<program>.debug.json`` kiln-aot writes beside the program; ("", 0) without one."""
    debug = program_path.with_suffix(".debug.json")
    if not debug.exists():
        return "", 0
    try:
        methods = json.loads(debug.read_text()).get("methods", [])
    except (OSError, ValueError) as error:
        logger.warning("%s: not read (%s): the firmware will not know Vela's estimate", debug, error)
        return "", 0
    targets, cycles = set(), 0
    for entry in methods:
        if entry.get("name") != method:
            continue
        for delegate in entry.get("delegates", []):
            if delegate.get("backend_id") != "EthosUBackend":
                continue
            targets.add(delegate.get("target", ""))
            cycles += sum(int(layer.get("cycles") or 0) for layer in delegate.get("npu_layers", []))
    targets.discard("")
    return (targets.pop() if len(targets) == 1 else ""), cycles


def _example_inputs(meta, inputs: Sequence[np.ndarray] | None) -> list[np.ndarray]:
    if inputs is not None:
        return list(inputs)
    arrays = []
    for spec in meta.inputs:
        if not spec.is_tensor or spec.dtype is None:
            raise ValueError(f"method {meta.name} has a {spec.tag} input; give inputs explicitly")
        arrays.append(np.zeros(spec.shape, dtype=spec.dtype))
    return arrays


def build_manifest(program_path: str | Path, method: str = "forward",
                   inputs: Sequence[np.ndarray] | None = None, board: PoolBudget | None = None) -> Manifest:
    """Measures the program with Kiln's runtime and places its pools on ``board`` (default:
    the default board's budget)."""
    from kiln.runtime import Runtime

    board = board if board is not None else pool_budget()
    path = Path(program_path)
    data = path.read_bytes()
    program = Runtime.get().load_program(data)
    meta = program.method_meta(method)
    loaded = program.load_method(method)
    loaded.execute(_example_inputs(meta, inputs))
    temp_peak = int(loaded.meta.temp_allocator_peak or 0)
    scratch, delegates = _npu_scratch(data, method)

    manifest = Manifest(program=path.name, program_bytes=len(data),
                        program_sha256=hashlib.sha256(data).hexdigest(), method=method, board=board,
                        npu_scratch_bytes=scratch, num_delegates=delegates)
    manifest.npu_target, manifest.vela_npu_cycles = _npu_facts(path, method)
    manifest.pools.append(Pool(
        "method_allocator", meta.method_allocator_size,
        note="MethodMeta::method_allocator_size() on the host (LP64): an upper bound for 32-bit targets"
             + (f"; includes {scratch} bytes of NPU scratch" if scratch else "")))
    manifest.pools.append(Pool("temp_allocator", temp_peak, note="peak of one run on the host"))
    for i, size in enumerate(meta.planned_buffer_sizes):
        manifest.pools.append(Pool(f"planned_buffer_{i}", int(size), memory_id=i + 1))
    _place(manifest.pools, board)
    return manifest


# ---- writing ----


def _memory_header(manifest: Manifest, stem: str) -> str:
    def section(pool: Pool) -> str:
        return f'"{_SECTIONS[pool.placement]}.{pool.name}"'

    lines = [
        f"// Generated by kiln.memory.manifest from {manifest.program} (method \"{manifest.method}\"):",
        "// the memory the program needs, sized by Kiln's runtime. Do not edit; regenerate with",
        f"//   python -m kiln.memory.manifest {manifest.program}",
        "#pragma once",
        "",
        f'#define KILN_MANIFEST_PROGRAM "{manifest.program}"',
        f'#define KILN_MANIFEST_METHOD "{manifest.method}"',
        f"#define KILN_MANIFEST_PROGRAM_BYTES {manifest.program_bytes}",
        f'#define KILN_MANIFEST_BOARD "{manifest.board.name}"',
    ]
    for name in ("method_allocator", "temp_allocator"):
        pool = manifest.pool(name)
        macro = f"KILN_MANIFEST_{name.upper()}"
        lines += [f"#define {macro}_BYTES {pool.bytes}", f"#define {macro}_SECTION {section(pool)}"]
    planned = manifest.planned_buffers
    lines.append(f"#define KILN_MANIFEST_NUM_PLANNED_BUFFERS {len(planned)}")
    for i, pool in enumerate(planned):
        lines += [f"#define KILN_MANIFEST_PLANNED_BUFFER_{i}_BYTES {pool.bytes}",
                  f"#define KILN_MANIFEST_PLANNED_BUFFER_{i}_SECTION {section(pool)}"]
    lines += [
        "// NPU scratch is part of the method allocator (the Ethos-U delegate takes it there).",
        f"#define KILN_MANIFEST_NPU_SCRATCH_BYTES {manifest.npu_scratch_bytes}",
        "// The NPU the delegates were compiled for and Vela's cycle estimate of one run (the",
        "// firmware prints it next to the NPU's PMU counters; 0 when unknown).",
        f'#define KILN_MANIFEST_NPU_TARGET "{manifest.npu_target}"',
        f"#define KILN_MANIFEST_VELA_NPU_CYCLES {manifest.vela_npu_cycles}ull",
        f"// Totals per placement, each pool padded to {POOL_ALIGNMENT} bytes.",
        f"#define KILN_MANIFEST_SRAM_BYTES {manifest.total('SRAM')}",
        f"#define KILN_MANIFEST_DDR_BYTES {manifest.total('DDR')}",
        "",
    ]
    return "\n".join(lines)


def manifest_paths(program_path: str | Path, out_dir: str | Path | None = None) -> tuple[Path, Path]:
    """(``<name>.manifest.json``, ``<name>_memory.h``) for a program."""
    program_path = Path(program_path)
    out = Path(out_dir) if out_dir is not None else program_path.parent
    stem = program_path.stem
    return out / f"{stem}.manifest.json", out / f"{stem}_memory.h"


def write_manifest(program_path: str | Path, out_dir: str | Path | None = None, method: str = "forward",
                   inputs: Sequence[np.ndarray] | None = None, board: PoolBudget | None = None) -> Manifest:
    """Writes ``<name>.manifest.json`` and ``<name>_memory.h`` for ``program_path`` into
    ``out_dir`` (default: next to the program) and returns the manifest."""
    manifest = build_manifest(program_path, method, inputs, board)
    json_path, header_path = manifest_paths(program_path, out_dir)
    json_path.parent.mkdir(parents=True, exist_ok=True)
    json_path.write_text(json.dumps(manifest.to_json(), indent=2) + "\n")
    header_path.write_text(_memory_header(manifest, Path(program_path).stem))
    logger.info("wrote %s and %s", json_path, header_path)
    return manifest


def describe(manifest: Manifest) -> str:
    """A table of the pools, for people."""
    rows = [f"memory manifest for {manifest.program} ({manifest.program_bytes:,} bytes, in DDR), "
            f"method {manifest.method}, board {manifest.board.name}:"]
    for pool in manifest.pools:
        rows.append(f"  {pool.name:<18} {pool.bytes:>12,} bytes  {pool.placement}")
    if manifest.num_delegates:
        rows.append(f"  (NPU scratch {manifest.npu_scratch_bytes:,} bytes inside the method allocator, "
                    f"{manifest.num_delegates} delegate(s))")
    rows.append(f"  total: SRAM {manifest.total('SRAM'):,} of {manifest.board.sram_bytes:,} bytes, "
                f"DDR {manifest.total('DDR'):,} bytes")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m kiln.memory.manifest", description=__doc__.split("\n")[0])
    parser.add_argument("program", type=Path, help="the .pte program")
    parser.add_argument("--out-dir", type=Path, help="where to write (default: next to the program)")
    parser.add_argument("--method", default="forward")
    parser.add_argument("--inputs", type=Path, nargs="*", help=".npy inputs for the temp-allocator run "
                        "(default: zeros of the declared shapes)")
    parser.add_argument("--board", default=None, metavar="NAME_OR_FILE",
                        help="the board whose memory the pools are placed in: a shipped board's name or a board "
                             "file (default: corstone-300)")
    parser.add_argument("--sram-bytes", type=int,
                        help="SRAM budget for the pools (default: the size of the board's memory.sram_pools region)")
    args = parser.parse_args(argv)
    board = pool_budget(args.board)
    if args.sram_bytes is not None:
        board = PoolBudget(board.name, args.sram_bytes, board.ddr_bytes)
    inputs = [np.load(p) for p in args.inputs] if args.inputs else None
    manifest = write_manifest(args.program, args.out_dir, args.method, inputs, board)
    print(describe(manifest))
    return 0


if __name__ == "__main__":
    sys.exit(main())
