"""Pictures (PNG, matplotlib, no display needed) of what the text reports say:

* :func:`plot_memory_plan` — every planned tensor as a box: instructions it lives across
  (x) against its bytes in the arena (y), one panel per planned buffer;
* :func:`plot_npu_cycles` — Vela's cycle estimate per NPU layer next to its MACs;
* :func:`plot_layer_error` — per-layer SNR of the int8 model, the TOSA reference and the
  virtual NPU against fp32 (from :func:`kiln.backends.arm.compare_layers`);
* :func:`plot_operator_profile` — where the time of an ETDump went, per operator.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence, Union

_ELEMENT_SIZES = {0: 1, 1: 1, 2: 2, 3: 4, 4: 8, 5: 2, 6: 4, 7: 8, 11: 1, 15: 2, 27: 2, 28: 4, 29: 8}


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")  # files only: works without a display
    import matplotlib.pyplot as plt

    return plt


def _save(figure: Any, path: Union[str, Path]) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    _pyplot().close(figure)
    return path


@dataclass(frozen=True)
class PlannedTensor:
    """A tensor in a planned buffer and the instructions it lives across."""

    value: int
    mem_id: int
    offset: int
    nbytes: int
    first: int  # first instruction that uses it (-1: a method input)
    last: int  # last instruction that uses it (the instruction count: a method output)


def planned_tensors(program: Any, method: str = "") -> list[PlannedTensor]:
    """The planned tensors of a method of a :class:`kiln.Program` (or a ``.pte`` path)."""
    from kiln.program import Program
    from kiln.serialize import program_generated as pte

    if isinstance(program, (str, Path)):
        program = Program.load(program)
    plans = program.flatbuffer.executionPlan or []
    plan = next((p for p in plans if not method or (p.name.decode() if isinstance(p.name, bytes) else p.name) == method),
                plans[0] if plans else None)
    if plan is None:
        return []
    values = plan.values or []
    uses: dict[int, list[int]] = {}

    def use(index: int, step: int) -> None:
        uses.setdefault(index, []).append(step)
        value = values[index] if 0 <= index < len(values) else None
        if value is not None and value.valType == pte.KernelTypes.TensorList:
            for item in value.val.items if value.val.items is not None else []:
                uses.setdefault(int(item), []).append(step)

    instructions = [i for chain in (plan.chains or []) for i in (chain.instructions or [])]
    for step, instruction in enumerate(instructions):
        for arg in (getattr(instruction.instrArgs, "args", None) if instruction.instrArgs is not None else None) or []:
            use(int(arg), step)
    for index in plan.inputs if plan.inputs is not None else []:
        use(int(index), -1)
    for index in plan.outputs if plan.outputs is not None else []:
        use(int(index), len(instructions))
    tensors = []
    for index, value in enumerate(values):
        if value.valType != pte.KernelTypes.Tensor or value.val.allocationInfo is None or index not in uses:
            continue
        tensor, info = value.val, value.val.allocationInfo
        sizes = [int(s) for s in (tensor.sizes if tensor.sizes is not None else [])]
        nbytes = math.prod(sizes) * _ELEMENT_SIZES.get(int(tensor.scalarType), 4)
        offset = int(info.memoryOffsetLow) | (int(info.memoryOffsetHigh) << 32)
        tensors.append(PlannedTensor(index, int(info.memoryId), offset, nbytes, min(uses[index]), max(uses[index])))
    return tensors


def plot_memory_plan(program: Any, path: Union[str, Path], method: str = "") -> Path:
    """Tensor lifetimes (instructions) against their offsets in each planned buffer."""
    plt = _pyplot()
    tensors = planned_tensors(program, method)
    buffers = sorted({t.mem_id for t in tensors}) or [1]
    figure, axes = plt.subplots(len(buffers), 1, figsize=(10, 3.2 * len(buffers)), squeeze=False)
    colors = plt.get_cmap("tab20")
    for axis, mem_id in zip(axes[:, 0], buffers):
        mine = [t for t in tensors if t.mem_id == mem_id]
        for number, t in enumerate(mine):
            axis.add_patch(plt.Rectangle((t.first - 0.4, t.offset / 1024), t.last - t.first + 0.8, t.nbytes / 1024,
                                         facecolor=colors(number % 20), edgecolor="black", linewidth=0.3))
        top = max((t.offset + t.nbytes for t in mine), default=1) / 1024
        axis.set_xlim(-1.5, max((t.last for t in mine), default=1) + 1.5)
        axis.set_ylim(0, top * 1.05)
        axis.set_xlabel("instruction")
        axis.set_ylabel("offset (KiB)")
        axis.set_title(f"planned buffer {mem_id}: {len(mine)} tensors, {top:,.1f} KiB")
    return _save(figure, path)


def plot_npu_cycles(layers: Sequence[Any], path: Union[str, Path], title: str = "") -> Path:
    """Vela's estimated cycles per NPU layer (bars) and the layer's MACs (line)."""
    plt = _pyplot()
    figure, axis = plt.subplots(figsize=(max(8, len(layers) * 0.12), 4))
    positions = range(len(layers))
    axis.bar(positions, [layer.cycles for layer in layers], color="#4575b4", label="Vela cycles")
    axis.set_xlabel("NPU layer (stream order)")
    axis.set_ylabel("cycles (Vela estimate)")
    twin = axis.twinx()
    twin.plot(list(positions), [layer.macs for layer in layers], color="#d73027", marker=".", linewidth=1, label="MACs")
    twin.set_ylabel("MACs")
    handles = axis.get_legend_handles_labels()[0] + twin.get_legend_handles_labels()[0]
    axis.legend(handles, ["Vela cycles", "MACs"], loc="upper right")
    total = sum(layer.cycles for layer in layers)
    axis.set_title(title or f"NPU cycles per layer ({total:,} in all) against MACs")
    return _save(figure, path)


def plot_layer_error(rows: Sequence[Any], path: Union[str, Path]) -> Path:
    """SNR against fp32 per layer: int8 PyTorch, TOSA reference, virtual NPU."""
    plt = _pyplot()
    figure, axis = plt.subplots(figsize=(max(8, len(rows) * 0.12), 4))

    def series(field: str) -> list[float]:
        values = []
        for row in rows:
            value = getattr(row, field)
            values.append(math.nan if value is None or not math.isfinite(value) else value)
        return values

    indices = [row.index for row in rows]
    axis.plot(indices, series("snr_int8"), label="int8 PyTorch", color="#4575b4", linewidth=2)
    axis.plot(indices, series("snr_tosa"), label="TOSA reference", color="#fdae61", linestyle="--")
    axis.plot(indices, series("snr_npu"), label="virtual NPU", color="#d73027", linestyle=":", marker=".")
    axis.set_xlabel("layer")
    axis.set_ylabel("SNR vs fp32 (dB)")
    axis.set_title("per-layer error: where the int8 program departs from fp32")
    axis.legend()
    axis.grid(alpha=0.3)
    return _save(figure, path)


def plot_operator_profile(inspector: Any, path: Union[str, Path], top: int = 20) -> Path:
    """Average time per run of each operator (and NPU operation kind), most time first."""
    plt = _pyplot()
    totals = inspector.operator_totals()[:top]
    figure, axis = plt.subplots(figsize=(9, 0.35 * len(totals) + 1.5))
    names = [f"{name} (x{calls})" for name, calls, _ in totals]
    axis.barh(range(len(totals)), [t for _, _, t in totals], color="#4575b4")
    axis.set_yticks(range(len(totals)), names, fontsize=8)
    axis.invert_yaxis()
    axis.set_xlabel(f"time per run ({inspector.time_unit})")
    axis.set_title("where the time goes (ETDump)")
    return _save(figure, path)
