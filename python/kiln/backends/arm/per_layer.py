"""Per-layer numerics: where does the error of an int8 (NPU) program appear?

    rows = compare_layers(model, inputs, quantized, program)   # kiln.quantize / kiln.export results
    print(format_table(rows))

Every layer of the quantized model — an operator whose output is quantized (a convolution
with its folded batch norm and activation, an add, a pooling) — is compared four ways:

* **fp32**: eager PyTorch's value of the same module (the reference for SNR);
* **int8 PyTorch**: the quantized model (PT2E, fake-quantized) — the quantization error;
* **TOSA**: the TOSA reference model on the delegate's graph, every layer's tensor made an
  extra graph output — what the lowering to TOSA computes;
* **NPU**: the virtual Ethos-U running the program's own Vela command stream, each layer's
  output read from the NPU's scratch memory the moment its last NPU operation completes.

Each gets an SNR against fp32 (dB); TOSA is also compared with int8 PyTorch and the NPU
with TOSA in output steps (max LSB), so a layer where the NPU leaves the TOSA reference —
or where TOSA leaves the quantized model — stands out.
"""

from __future__ import annotations

import logging
import math
import operator
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

import numpy as np
import torch

logger = logging.getLogger(__name__)

_VNPU_DMA = 0x010


@dataclass
class LayerComparison:
    """One layer's output four ways (None where that path does not compute it)."""

    index: int
    name: str  # module path (or node name)
    module_type: str
    node: str  # the quantized graph's operator node
    operator: str
    shape: tuple[int, ...]
    scale: float
    zero_point: int
    snr_int8: Optional[float]  # int8 PyTorch vs fp32, dB (None: no fp32 value matched)
    snr_tosa: Optional[float] = None
    snr_npu: Optional[float] = None
    max_lsb_tosa: Optional[int] = None  # TOSA vs int8 PyTorch, output steps
    max_lsb_npu: Optional[int] = None  # NPU vs TOSA, output steps
    npu_layer: str = ""  # Vela's name for the NPU operation(s) that computed it
    fp32_matched: bool = True


def snr_db(reference: np.ndarray, value: np.ndarray) -> float:
    """10 log10(sum reference² / sum (value - reference)²); inf when equal."""
    reference = np.asarray(reference, dtype=np.float64)
    noise = float(np.sum((np.asarray(value, dtype=np.float64) - reference) ** 2))
    signal = float(np.sum(reference ** 2))
    if noise == 0.0:
        return math.inf
    return 10.0 * math.log10(signal / noise) if signal > 0 else -math.inf


# ---------------------------------------------------------------------------- graph values
def _module_of(node: torch.fx.Node) -> tuple[str, str]:
    from kiln.devtools.debug_info import node_info

    info = node_info(node)
    return info.module_path, info.module_type


def _target_name(node: torch.fx.Node) -> str:
    name = getattr(node.target, "name", None)
    return name() if callable(name) else str(node.target)


class _AllValues(torch.fx.Interpreter):
    """Runs a graph keeping every node's value."""

    def __init__(self, module: torch.fx.GraphModule) -> None:
        super().__init__(module, garbage_collect_values=False)
        self.values: dict[str, Any] = {}

    def run_node(self, node: torch.fx.Node) -> Any:
        value = super().run_node(node)
        self.values[node.name] = value
        return value


def _float_values(model: Any, inputs: tuple[torch.Tensor, ...]) -> tuple[torch.fx.Graph, dict[str, Any]]:
    from kiln.export import export_to_edge

    program = export_to_edge(model, inputs)
    module = program.module()
    runner = _AllValues(module)
    with torch.no_grad():
        runner.run(*inputs)
    return module.graph, runner.values


def _is_quantize(node: torch.fx.Node) -> bool:
    return node.op == "call_function" and _target_name(node).split("::")[-1].startswith("quantize_per_tensor")


def _batch_norm_output(node: torch.fx.Node) -> torch.fx.Node:
    """A float convolution's value after its batch norm (the quantized model folds it in)."""
    for user in node.users:
        if "batch_norm" in _target_name(user):
            items = [u for u in user.users if u.target is operator.getitem and u.args[1] == 0]
            return items[0] if items else user
    return node


def _match_float(node: torch.fx.Node, float_graph: torch.fx.Graph, used: set[str]) -> Optional[torch.fx.Node]:
    """The fp32 graph's node for a quantized layer: same module, same operator, unused."""
    path, _ = _module_of(node)
    if not path:
        return None
    target = _target_name(node)
    for candidate in float_graph.nodes:
        if candidate.op != "call_function" or candidate.name in used or _module_of(candidate)[0] != path:
            continue
        if _target_name(candidate) == target:
            used.add(candidate.name)
            return _batch_norm_output(candidate) if "convolution" in target else candidate
    return None


# ---------------------------------------------------------------------------- TOSA and NPU
def _tosa_layer_values(tosa: Any, names: list[str], inputs: list[np.ndarray]) -> dict[str, np.ndarray]:
    """Runs the TOSA reference model with every named tensor made a graph output (NHWC)."""
    import tosa_reference_model
    import tosa_serializer

    from kiln.export.evaluate import _native_output_silenced

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"{tosa.name}.tosa"
        path.write_bytes(tosa.flatbuffer)
        graph = tosa_serializer.TosaSerializer("", targetMajor=1, targetMinor=0, targetPatch=0, targetDraft=False)
        if not graph.loadTosaFlatbuffer(str(path)):
            logger.warning("%s: the TOSA serializer could not read the graph back; no TOSA column", tosa.name)
            return {}
    block = graph.regions[0].basicBlocks[0]
    existing = set(block.outputs)
    extra = [name for name in names if name not in existing]
    for name in extra:
        block.addOutput(name)
    arrays = [np.ascontiguousarray(np.asarray(x).transpose(io.permutation)) for io, x in zip(tosa.inputs, inputs)]
    with _native_output_silenced():
        outputs, status = tosa_reference_model.run(bytes(graph.serialize()), arrays)
    if status != tosa_reference_model.GraphStatus.TOSA_VALID:
        logger.warning("%s: TOSA reference model status %s; no TOSA column", tosa.name, status.name)
        return {}
    ordered = list(block.outputs)
    found = {}
    for name, value in zip(ordered, outputs):
        array = np.asarray(value)
        found[name] = array.view(np.int8) if array.dtype == np.uint8 else array
    return {name: value for name, value in found.items() if name in names}


def _read_feature_map(region: bytearray, layer: Any, dtype: np.dtype) -> Optional[np.ndarray]:
    """A layer's output (H, W, C) in the scratch region, NHWC or NHCWB16 (16-channel bricks)."""
    if layer.ofm_offset < 0 or len(layer.ofm_shape) != 3:
        return None
    height, width, depth = layer.ofm_shape
    itemsize = np.dtype(dtype).itemsize
    if layer.ofm_format == "NHCWB16":
        bricks = -(-depth // 16)
        count = height * bricks * width * 16
        data = np.frombuffer(bytes(region[layer.ofm_offset:layer.ofm_offset + count * itemsize]), dtype=dtype)
        if data.size != count:
            return None
        return data.reshape(height, bricks, width, 16).transpose(0, 2, 1, 3).reshape(height, width, bricks * 16)[..., :depth]
    count = height * width * depth
    data = np.frombuffer(bytes(region[layer.ofm_offset:layer.ofm_offset + count * itemsize]), dtype=dtype)
    return data.reshape(height, width, depth) if data.size == count else None


def _npu_layer_values(vela: Any, layers: list[Any], inputs: list[np.ndarray], dtype: np.dtype) -> dict[str, np.ndarray]:
    """Runs the delegate's command stream on the virtual NPU; each layer's output is read
    from the scratch region right after its last NPU operation (stripe)."""
    from kiln.backends.arm.vnpu import load_vela_raw, run_raw_with_counters

    raw = load_vela_raw(vela)
    owners: list[Any] = []
    for layer in layers:
        owners.extend([layer] * max(layer.operations, 0))
    values: dict[str, np.ndarray] = {}
    seen = [0]

    def observe(index: int, op: dict[str, Any], ofm: Any, regions: list[Any]) -> None:
        if int(op["kind"]) == _VNPU_DMA:
            return
        ordinal = seen[0]
        seen[0] += 1
        if ordinal >= len(owners):
            return
        layer = owners[ordinal]
        last = ordinal + 1 == len(owners) or owners[ordinal + 1] is not layer
        if last and layer.ofm_memory in ("Sram", "Dram", "") and regions[raw.scratch_region] is not None:
            value = _read_feature_map(regions[raw.scratch_region], layer, dtype)
            if value is not None:
                values[layer.name] = value

    shaped = [np.asarray(x).reshape(p.shape) for x, p in zip(inputs, raw.inputs)]
    run_raw_with_counters(raw, shaped, observer=observe)
    if seen[0] != len(owners):
        # Stripes are matched to layers by position (e.g. Vela lists a U55 transpose as one
        # operation that runs as many): a wrong match would report differences that are not there.
        logger.warning("the NPU ran %d operations; Vela's schedule lists %d: the NPU column is left empty",
                       seen[0], len(owners))
        return {}
    return values


# ---------------------------------------------------------------------------- comparison
def _quantized_layers(graph: torch.fx.Graph) -> list[tuple[torch.fx.Node, torch.fx.Node]]:
    """(quantize node, operator node) for every operator output the model quantizes."""
    from kiln.passes.delegation import is_dequantize

    layers = []
    for node in graph.nodes:
        if not _is_quantize(node):
            continue
        source = node.args[0]
        if isinstance(source, torch.fx.Node) and source.op == "call_function" and not is_dequantize(source):
            layers.append((node, source))
    return layers


def compare_layers(model: Any, inputs: tuple[torch.Tensor, ...], quantized: Any, program: Any) -> list[LayerComparison]:
    """Compares every quantized layer across fp32, int8 PyTorch, TOSA and the virtual NPU.

    Args:
        model: the fp32 model (eval mode) the program was made from.
        inputs: one example input tuple (the values compared are this input's).
        quantized: :func:`kiln.quantize`'s ExportedProgram.
        program: :func:`kiln.export`'s program of ``quantized``; its ``compile_report``
            supplies the delegates (without one only the fp32 and int8 columns are filled).
    """
    from kiln.export.evaluate import _placeholder_arguments
    from kiln.passes.delegation import copy_graph_module, duplicate_shared_dequantize

    float_graph, float_values = _float_values(model, inputs)
    reference = copy_graph_module(quantized)
    duplicate_shared_dequantize(reference.graph)  # the node names the delegated graph has
    runner = _AllValues(reference)
    with torch.no_grad():
        runner.run(*_placeholder_arguments(quantized, inputs))
    values = runner.values

    tosa_by_node: dict[str, np.ndarray] = {}
    npu_by_node: dict[str, np.ndarray] = {}
    vela_name: dict[str, str] = {}
    report = getattr(program, "compile_report", None)
    for delegate in (report.delegates if report is not None else []):
        pre = delegate.preprocessed
        delegate_inputs = [values[name].detach().numpy() for name in delegate.input_nodes]
        tensor_nodes = pre.tosa.tensor_nodes
        wanted = [name for name in tensor_nodes if name not in {io.name for io in pre.tosa.inputs}]
        tosa_values = _tosa_layer_values(pre.tosa, wanted, delegate_inputs)
        layers = [layer for layer in pre.vela.layers if layer.operations > 0]
        npu_values = _npu_layer_values(pre.vela, layers, [np.ascontiguousarray(x.transpose(io.permutation))
                                                          for io, x in zip(pre.tosa.inputs, delegate_inputs)], np.int8)
        for tensor, node_name in tensor_nodes.items():
            if tensor in tosa_values:
                tosa_by_node.setdefault(node_name, tosa_values[tensor])
            if tensor in npu_values:
                npu_by_node.setdefault(node_name, npu_values[tensor])
                vela_name.setdefault(node_name, tensor)

    rows = []
    used: set[str] = set()
    for index, (q, source) in enumerate(_quantized_layers(reference.graph)):
        scale, zero_point = float(q.args[1]), int(q.args[2])
        q_int = values[q.name].detach().numpy().astype(np.int64)
        int8 = (q_int - zero_point) * scale
        path, module_type = _module_of(source)
        match = _match_float(source, float_graph, used)
        fp32 = float_values.get(match.name) if match is not None else None
        # The same values in another shape (e.g. a mean that keeps its reduced dimensions)
        # still compare; without fp32 values the SNR columns stay empty.
        matched = isinstance(fp32, torch.Tensor) and fp32.numel() == q_int.size
        reference_value = fp32.detach().numpy().reshape(q_int.shape) if matched else None

        def snr(value: np.ndarray) -> Optional[float]:
            return snr_db(reference_value, value) if reference_value is not None else None

        row = LayerComparison(index, path or source.name, module_type, source.name, _target_name(source),
                              tuple(q_int.shape), scale, zero_point, snr(int8), fp32_matched=matched)
        tosa = _logical(tosa_by_node.get(q.name, tosa_by_node.get(source.name)), q_int.shape)
        npu = _logical(npu_by_node.get(q.name, npu_by_node.get(source.name)), q_int.shape)
        row.npu_layer = vela_name.get(q.name, vela_name.get(source.name, ""))
        if tosa is not None:
            row.snr_tosa = snr((tosa - zero_point) * scale)
            row.max_lsb_tosa = int(np.abs(tosa - q_int).max())
        if npu is not None:
            row.snr_npu = snr((npu - zero_point) * scale)
            if tosa is not None:
                row.max_lsb_npu = int(np.abs(npu - tosa).max())
        rows.append(row)
    return rows


def _logical(value: Optional[np.ndarray], shape: tuple[int, ...]) -> Optional[np.ndarray]:
    """An NHWC (or H, W, C) NPU/TOSA tensor in the model's NCHW layout, as int64."""
    if value is None:
        return None
    array = np.asarray(value).astype(np.int64)
    if len(shape) == 4:
        n, c, h, w = shape
        if array.size != n * c * h * w:
            return None
        return array.reshape(n, h, w, c).transpose(0, 3, 1, 2)
    return array.reshape(shape) if array.size == int(np.prod(shape)) else None


def _db(value: Optional[float]) -> str:
    if value is None:
        return "-"
    return "inf" if math.isinf(value) and value > 0 else f"{value:.1f}"


def format_table(rows: list[LayerComparison]) -> str:
    """The comparison as text; ``<`` marks the layer whose NPU output first leaves TOSA's,
    ``!`` the layer where the int8 model loses the most SNR."""
    header = (f"{'#':>3}  {'layer':<30} {'operator':<26} {'shape':<18} {'SNR dB: int8':>12} {'TOSA':>6} {'NPU':>6}"
              f"  {'LSB TOSA-int8':>13} {'NPU-TOSA':>8}")
    lines = [header, "-" * len(header)]
    def finite(value: Optional[float]) -> bool:
        return value is not None and math.isfinite(value)

    drops = [rows[i - 1].snr_int8 - rows[i].snr_int8 if i and finite(rows[i].snr_int8) and
             finite(rows[i - 1].snr_int8) else 0.0 for i in range(len(rows))]
    worst = int(np.argmax(drops)) if rows else -1
    first_npu = next((r.index for r in rows if r.max_lsb_npu), None)
    for i, row in enumerate(rows):
        name = f"{row.name} ({row.module_type})" if row.module_type else row.name
        mark = ("<" if row.index == first_npu else "") + ("!" if i == worst and drops[i] > 0 else "")
        lines.append(f"{row.index:>3}  {name[:30]:<30} {row.operator[:26]:<26} {str(list(row.shape))[:18]:<18} "
                     f"{_db(row.snr_int8):>12} {_db(row.snr_tosa):>6} {_db(row.snr_npu):>6}  "
                     f"{'-' if row.max_lsb_tosa is None else row.max_lsb_tosa:>13} "
                     f"{'-' if row.max_lsb_npu is None else row.max_lsb_npu:>8} {mark}")
    if first_npu is None and any(r.max_lsb_npu is not None for r in rows):
        lines.append("NPU == TOSA reference on every layer compared")
    elif first_npu is not None:
        lines.append(f"<: the NPU's output first differs from the TOSA reference at layer {first_npu}")
    if worst >= 0 and drops[worst] > 0:
        lines.append(f"!: the largest SNR drop of the int8 model ({drops[worst]:.1f} dB) is at layer {worst}")
    return "\n".join(lines)


def write_per_layer_report(model: Any, inputs: tuple[torch.Tensor, ...], quantized: Any, program: Any,
                           folder: Path) -> tuple[str, list[Path]]:
    """Runs :func:`compare_layers` and writes ``per_layer.txt``, ``per_layer_error.png``,
    ``memory_plan.png`` and, per delegate, ``<delegate>_npu_cycles.png`` into ``folder``.
    Returns the table and the files written."""
    from kiln.devtools import plots

    folder.mkdir(parents=True, exist_ok=True)
    rows = compare_layers(model, inputs, quantized, program)
    table = format_table(rows)
    (folder / "per_layer.txt").write_text(table + "\n")
    files = [folder / "per_layer.txt", plots.plot_layer_error(rows, folder / "per_layer_error.png"),
             plots.plot_memory_plan(program, folder / "memory_plan.png")]
    report = getattr(program, "compile_report", None)
    for delegate in (report.delegates if report is not None else []):
        layers = delegate.preprocessed.vela.layers
        if layers:
            files.append(plots.plot_npu_cycles(layers, folder / f"{delegate.name}_npu_cycles.png",
                                               f"{delegate.name} on {delegate.preprocessed.vela.target}: "
                                               f"Vela cycles per layer against MACs"))
    return table, files
