"""What :func:`kiln.export` records so that runtime events can be traced back to the model.

A ``.pte`` file has no room for it (ExecuTorch keeps the same facts in a separate ETRecord),
so Kiln writes it beside the program: ``Program.save("mv2.pte")`` also writes
``mv2.debug.json``. For each instruction of each method it names the FX node it was lowered
from, the PyTorch module path and type of that node (``features.3.conv.0``, ``Conv2d``) and
where in the model's source it was called; for each delegate the NPU operations Vela made
(named after the TOSA tensor each computes, with Vela's cycle and MAC estimates) and the FX
node that produced each of those tensors.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterable, Optional, Union

from kiln.devtools.errors import DebugInfoError

FORMAT = "kiln-debug-info"
VERSION = 1


@dataclass(frozen=True)
class NodeInfo:
    """One FX node of the exported model."""

    node: str
    operator: str = ""
    module_path: str = ""  # e.g. "features.3.conv.0"; "" for nodes outside any submodule
    module_type: str = ""  # e.g. "Conv2d"
    source: str = ""  # "model.py:42" of the call in forward(), when torch recorded it

    @property
    def label(self) -> str:
        """The module path, or the node name when the node belongs to no submodule."""
        return self.module_path or self.node


@dataclass(frozen=True)
class NpuLayerInfo:
    """One NPU operation as Vela scheduled it (split into ``operations`` stripes)."""

    name: str  # the TOSA tensor it produces
    operator: str  # Vela's operator name, e.g. "Conv2D"
    cycles: int  # Vela's estimate
    macs: int
    operations: int  # NPU operations (stripes) of the command stream, in order
    ofm_shape: tuple[int, ...] = ()
    node: Optional[NodeInfo] = None


@dataclass(frozen=True)
class DelegateDebugInfo:
    index: int  # in the method's delegate table
    backend_id: str
    name: str  # the delegated subgraph's name
    target: str = ""
    npu_layers: tuple[NpuLayerInfo, ...] = ()

    def layer_of_operation(self) -> list[Optional[NpuLayerInfo]]:
        """Per non-DMA NPU operation of a delegate call, in stream order, its layer."""
        layers: list[Optional[NpuLayerInfo]] = []
        for layer in self.npu_layers:
            layers.extend([layer] * max(layer.operations, 0))
        return layers


@dataclass(frozen=True)
class InstructionInfo:
    index: int
    operator: str  # "aten::convolution.out", or "delegate:<backend id>"
    node: Optional[NodeInfo] = None
    delegate: Optional[int] = None  # index into MethodDebugInfo.delegates


@dataclass
class MethodDebugInfo:
    name: str
    instructions: list[InstructionInfo] = field(default_factory=list)
    delegates: list[DelegateDebugInfo] = field(default_factory=list)

    def instruction(self, index: int) -> Optional[InstructionInfo]:
        return self.instructions[index] if 0 <= index < len(self.instructions) else None


@dataclass
class DebugInfo:
    methods: list[MethodDebugInfo] = field(default_factory=list)

    def method(self, name: str) -> Optional[MethodDebugInfo]:
        return next((m for m in self.methods if m.name == name), None)

    # ------------------------------------------------------------------ files
    @staticmethod
    def path_for(program_path: Union[str, Path]) -> Path:
        """``mv2.debug.json`` for ``mv2.pte`` (and for ``mv2.bpte``)."""
        path = Path(program_path)
        return path.with_name(f"{path.stem}.debug.json")

    def to_json(self) -> str:
        return json.dumps({"format": FORMAT, "version": VERSION, "methods": [asdict(m) for m in self.methods]},
                          indent=1)

    def save(self, path: Union[str, Path]) -> Path:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(self.to_json())
        return path

    @classmethod
    def load(cls, path: Union[str, Path]) -> "DebugInfo":
        path = Path(path)
        try:
            data = json.loads(path.read_text())
        except OSError as error:
            raise DebugInfoError(f"cannot read {path}: {error.strerror or error}") from None
        except ValueError as error:
            raise DebugInfoError(f"{path} is not JSON: {error}") from None
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise DebugInfoError(f"{path} is not a Kiln debug-info file (no \"format\": \"{FORMAT}\")")
        try:
            return cls([_method(m) for m in data["methods"]])
        except (KeyError, TypeError, ValueError) as error:
            raise DebugInfoError(f"{path}: malformed debug info ({type(error).__name__}: {error})") from None


def _node(data: Optional[dict[str, Any]]) -> Optional[NodeInfo]:
    return None if data is None else NodeInfo(**data)


def _method(data: dict[str, Any]) -> MethodDebugInfo:
    instructions = [InstructionInfo(i["index"], i["operator"], _node(i.get("node")), i.get("delegate"))
                    for i in data["instructions"]]
    delegates = []
    for d in data["delegates"]:
        layers = tuple(NpuLayerInfo(l["name"], l["operator"], int(l["cycles"]), int(l["macs"]), int(l["operations"]),
                                    tuple(l.get("ofm_shape") or ()), _node(l.get("node")))
                       for l in d.get("npu_layers", []))
        delegates.append(DelegateDebugInfo(int(d["index"]), d["backend_id"], d["name"], d.get("target", ""), layers))
    return MethodDebugInfo(data["name"], instructions, delegates)


# ---------------------------------------------------------------------- recording at export
def node_info(node: Any) -> NodeInfo:
    """What an FX node says about where it came from."""
    stack = node.meta.get("nn_module_stack") or {}
    module_path, module_type = "", ""
    if stack:
        path, kind = list(stack.values())[-1]
        # The root module (path "") is the whole model, or torch.export's wrapper of it.
        if str(path):
            module_path = str(path)
            module_type = str(getattr(kind, "__name__", kind)).rsplit(".", 1)[-1]
    source = ""
    trace = node.meta.get("stack_trace") or ""
    for line in reversed(trace.strip().splitlines()):
        line = line.strip()
        if line.startswith("File "):
            parts = line.split('"')
            if len(parts) >= 3:
                number = parts[2].split(",")[1].strip().removeprefix("line ") if "," in parts[2] else ""
                source = f"{Path(parts[1]).name}:{number}"
            break
    target = node.target
    operator = getattr(target, "name", None)
    operator = operator() if callable(operator) else str(getattr(target, "__name__", target))
    return NodeInfo(node.name, operator, module_path, module_type, source)


def _has_module(node: Any) -> bool:
    stack = node.meta.get("nn_module_stack") or {}
    return bool(stack) and bool(str(list(stack.values())[-1][0]))


# Nodes that compute nothing of their own: outside any module they stand for their input's.
_PASS_THROUGH = ("quantize_per_tensor", "quantize_per_channel", "dequantize_per_tensor",
                 "dequantize_per_channel", "view", "_unsafe_view", "reshape", "squeeze", "unsqueeze",
                 "flatten", "clone", "alias")


def _passes_through(node: Any) -> bool:
    return getattr(node.target, "__name__", "").split(".")[0] in _PASS_THROUGH


def _layer_node(node: Any) -> Any:
    """The node that names a layer: a quantize node or a view (no module of its own) stands
    for the operator whose output it carries; a computing node outside any module (a mean in
    ``forward``) names itself."""
    seen = 0
    while node is not None and not _has_module(node) and _passes_through(node) and seen < 8:
        inputs = [a for a in node.args if hasattr(a, "meta")]
        node = inputs[0] if inputs else None
        seen += 1
    return node


def _npu_layers(delegate: Any, nodes: dict[str, Any]) -> tuple[NpuLayerInfo, ...]:
    preprocessed = getattr(delegate, "preprocessed", None)
    vela = getattr(preprocessed, "vela", None)
    tosa = getattr(preprocessed, "tosa", None)
    if vela is None:
        return ()
    tensor_nodes = getattr(tosa, "tensor_nodes", {}) or {}
    operator_nodes = getattr(tosa, "operator_nodes", ()) or ()
    layers = []
    for layer in vela.layers:
        # The TOSA operator Vela compiled names the layer best; the tensor Vela named the
        # operation after can belong to a later view (a 1-D convolution's reshapes).
        source = getattr(layer, "source_operator", -1)
        node_name = operator_nodes[source] if 0 <= source < len(operator_nodes) else ""
        node_name = node_name or tensor_nodes.get(layer.name)
        node = nodes.get(node_name) if node_name else None
        node = _layer_node(node) or node
        layers.append(NpuLayerInfo(layer.name, layer.operator, int(layer.cycles), int(layer.macs),
                                   int(getattr(layer, "operations", 0)), tuple(getattr(layer, "ofm_shape", ())),
                                   node_info(node) if node is not None else None))
    return tuple(layers)


def record_method(method: Any, graphs: Iterable[Any], report: Any = None) -> MethodDebugInfo:
    """Debug info of a lowered :class:`~kiln.ir.method_graph.MethodGraph`: ``graphs`` are
    the FX graphs whose nodes the calls name (the exported program's, and the graph with the
    delegate calls), ``report`` the :class:`~kiln.export.CompileReport` of its delegates."""
    from kiln.ir.method_graph import DelegateCall

    nodes: dict[str, Any] = {}
    for graph in graphs:
        for node in graph.nodes:
            nodes.setdefault(node.name, node)
    by_name = {d.name: d for d in (report.delegates if report is not None else [])}
    info = MethodDebugInfo(method.name)
    for index, call in enumerate(method.calls):
        node = nodes.get(call.source_node)
        if isinstance(call, DelegateCall):
            # The emitter writes one delegate table entry per call, in call order.
            compiled = by_name.get(call.delegate.name)
            target = dict(call.delegate.compile_specs).get("target", b"")
            info.delegates.append(DelegateDebugInfo(
                len(info.delegates), call.delegate.backend_id, call.delegate.name,
                target.decode(errors="replace") if isinstance(target, bytes) else str(target),
                _npu_layers(compiled, nodes) if compiled is not None else ()))
            info.instructions.append(InstructionInfo(index, f"delegate:{call.delegate.backend_id}",
                                                     node_info(node) if node is not None else None,
                                                     len(info.delegates) - 1))
        else:
            info.instructions.append(InstructionInfo(index, call.operator, node_info(node) if node is not None else None))
    return info
