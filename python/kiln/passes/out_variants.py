"""Lower a core-ATen ExportedProgram to a :class:`MethodGraph` of out-variant calls.

Every ``call_function`` node becomes one :class:`KernelCall` whose operator comes
from :mod:`kiln.passes.aten_out_variants`; ``getitem`` nodes select one output of a
multi-output call; parameters, buffers and lifted constants become constant
tensors; identity operations (a clone without a layout change, a view to the same
shape) reuse their input tensor instead of copying it.
"""

from __future__ import annotations

import logging
import operator
from collections.abc import Sequence
from typing import Any, Optional

import torch
from torch.export import ExportedProgram
from torch.export.graph_signature import InputKind, OutputKind
from torch.utils._pytree import treespec_dumps

from kiln import ExportError, UnsupportedOperatorError
from kiln.passes.delegation import DELEGATE_META_KEY, is_delegate_call
from kiln.passes.method_graph import (
    Argument,
    Call,
    DelegateCall,
    KernelCall,
    MethodGraph,
    TensorList,
    TensorRole,
    TensorValue,
)
from kiln.passes.kernel_availability import KERNEL_LIBRARIES, check_kernels, kernel_operators
from kiln.passes.aten_out_variants import COMPILE_TIME_CHECKS, OUT_VARIANTS
from kiln.passes.out_schema import (
    ArgKind,
    ArgumentConverter,
    SchemaArgument,
    bound_arguments,
    out_schema_for,
)
from kiln.serialize.scalar_types import is_supported_dtype, scalar_type_code

logger = logging.getLogger(__name__)

_CONSTANT_INPUT_KINDS = (InputKind.PARAMETER, InputKind.BUFFER, InputKind.CONSTANT_TENSOR)


def _tensor_from_fake(name: str, fake: Any, role: TensorRole, node: torch.fx.Node) -> TensorValue:
    if not isinstance(fake, torch.Tensor):
        raise ExportError(
            f"node '{node.name}' produces {type(fake).__name__}, not a tensor; Kiln programs "
            "take and return tensors only"
        )
    if not is_supported_dtype(fake.dtype):
        raise ExportError(f"node '{node.name}' has dtype {fake.dtype}, which Kiln does not support")
    shape = tuple(fake.shape)
    if not all(type(size) is int for size in shape):
        raise ExportError(
            f"node '{node.name}' has a dynamic shape {list(fake.shape)}; Kiln needs static shapes "
            "(export without dynamic_shapes)"
        )
    return TensorValue(
        name=name,
        dtype_code=scalar_type_code(fake.dtype),
        element_size=fake.element_size(),
        shape=shape,
        role=role,
    )


def _constant_bytes(tensor: torch.Tensor) -> bytes:
    flat = tensor.detach().cpu().contiguous().reshape(-1)
    if flat.numel() == 0:
        return b""
    return flat.view(torch.uint8).numpy().tobytes()


def _operator_name(target: Any) -> str:
    if isinstance(target, torch._ops.OpOverload):
        return target.name()
    return getattr(target, "__name__", str(target))


def _is_compile_time_check(node: torch.fx.Node) -> bool:
    return not node.users and _operator_name(node.target) in COMPILE_TIME_CHECKS


def _is_identity(node: torch.fx.Node) -> bool:
    """True for calls whose output equals their input bit for bit."""
    target = node.target
    if target is torch.ops.aten.alias.default:
        return True
    if target is torch.ops.aten.clone.default:
        memory_format = node.kwargs.get("memory_format")
        return memory_format in (None, torch.preserve_format, torch.contiguous_format)
    if target is torch.ops.aten.view.default:
        source = node.args[0]
        return (
            isinstance(source, torch.fx.Node)
            and isinstance(source.meta.get("val"), torch.Tensor)
            and tuple(source.meta["val"].shape) == tuple(node.meta["val"].shape)
        )
    return False


class _Lowering:
    """State of one lowering: FX node -> tensor value(s)."""

    def __init__(
        self,
        program: ExportedProgram,
        method_name: str,
        graph_module: Optional[torch.fx.GraphModule] = None,
        kernel_libraries: tuple[str, ...] = KERNEL_LIBRARIES,
    ) -> None:
        self.program = program
        self.kernel_libraries = kernel_libraries
        self.graph_module = graph_module if graph_module is not None else program.graph_module
        self.method_name = method_name
        self.values: dict[torch.fx.Node, Any] = {}  # TensorValue or list of them
        self.inputs: list[TensorValue] = []
        self.calls: list[Call] = []
        self.output_nodes: set[torch.fx.Node] = set()
        self.scalar_constants = 0
        self.current_node: Optional[torch.fx.Node] = None

    def tensor(self, node: torch.fx.Node) -> TensorValue:
        value = self.values.get(node)
        if not isinstance(value, TensorValue):
            raise ExportError(f"node '{node.name}' is used as a tensor but was not lowered to one")
        return value

    def run(self) -> MethodGraph:
        graph = self.graph_module.graph
        self._check_signature()
        self._check_operators(graph)
        output_node = next(n for n in graph.nodes if n.op == "output")
        self.output_nodes = {a for a in output_node.args[0] if isinstance(a, torch.fx.Node)}
        input_kinds = {spec.arg.name: spec for spec in self.program.graph_signature.input_specs}
        for node in graph.nodes:
            if node.op == "placeholder":
                self._lower_placeholder(node, input_kinds[node.name])
            elif node.op == "call_function":
                self.current_node = node
                self._lower_call(node)
            elif node.op == "output":
                outputs = self._lower_outputs(node)
            else:
                raise UnsupportedOperatorError(
                    f"node '{node.name}' is a '{node.op}' node, which Kiln cannot lower",
                    node=node.name,
                    operator=str(node.target),
                )
        in_spec = self.program.call_spec.in_spec
        out_spec = self.program.call_spec.out_spec
        return MethodGraph(
            name=self.method_name,
            inputs=self.inputs,
            outputs=outputs,
            calls=self.calls,
            encoded_input_spec=treespec_dumps(in_spec) if in_spec is not None else "",
            encoded_output_spec=treespec_dumps(out_spec) if out_spec is not None else "",
        )

    def _check_signature(self) -> None:
        signature = self.program.graph_signature
        for spec in signature.output_specs:
            if spec.kind in (OutputKind.BUFFER_MUTATION, OutputKind.USER_INPUT_MUTATION):
                raise ExportError(
                    f"the model mutates '{spec.target}' in place ({spec.kind.name}); Kiln "
                    "programs are stateless: return the new value instead"
                )
            if spec.kind is not OutputKind.USER_OUTPUT:
                raise ExportError(f"output '{spec.arg}' has kind {spec.kind.name}, which Kiln cannot emit")
        for spec in signature.input_specs:
            if spec.kind not in (InputKind.USER_INPUT, *_CONSTANT_INPUT_KINDS):
                raise ExportError(f"input '{spec.arg}' has kind {spec.kind.name}, which Kiln cannot emit")

    def _check_operators(self, graph: torch.fx.Graph) -> None:
        """Report every unsupported operator at once, not just the first: operators
        without an out variant, and those whose out variant no runtime kernel implements
        (which would otherwise fail at load time with OperatorMissing)."""
        kernels = kernel_operators(self.kernel_libraries)  # None: no op table found, not checked
        nodes_by_operator: dict[str, list[str]] = {}
        no_kernel: dict[str, str] = {}  # operator -> its out variant without a kernel
        for node in graph.nodes:
            if node.op != "call_function" or node.target is operator.getitem or _is_compile_time_check(node):
                continue
            if is_delegate_call(node):
                continue
            name = _operator_name(node.target)
            if not isinstance(node.target, torch._ops.OpOverload) or name not in OUT_VARIANTS:
                nodes_by_operator.setdefault(name, []).append(node.name)
            elif kernels is not None and OUT_VARIANTS[name] not in kernels:
                nodes_by_operator.setdefault(name, []).append(node.name)
                no_kernel[name] = OUT_VARIANTS[name]
        if nodes_by_operator:
            count = sum(len(nodes) for nodes in nodes_by_operator.values())
            listing = "; ".join(
                f"{op} (node {', '.join(repr(n) for n in nodes[:5])}{', ...' if len(nodes) > 5 else ''})"
                + (f": no kernel for {no_kernel[op]}" if op in no_kernel else "")
                for op, nodes in nodes_by_operator.items()
            )
            first_operator, first_nodes = next(iter(nodes_by_operator.items()))
            raise UnsupportedOperatorError(
                f"{count} node(s) use operators Kiln cannot lower: {listing} "
                "(supported operators are listed in kiln.passes.aten_out_variants.OUT_VARIANTS, "
                "kernels in kernels/<library>/op_table.yaml)",
                node=first_nodes[0],
                operator=first_operator,
            )

    def _lower_placeholder(self, node: torch.fx.Node, spec: Any) -> None:
        if spec.kind is InputKind.USER_INPUT:
            tensor = _tensor_from_fake(node.name, node.meta.get("val"), TensorRole.INPUT, node)
            self.inputs.append(tensor)
            self.values[node] = tensor
            return
        if not node.users:
            return  # e.g. BatchNorm's num_batches_tracked
        target = spec.target
        data = self.program.state_dict.get(target)
        if data is None:
            data = self.program.constants.get(target)
        if not isinstance(data, torch.Tensor):
            raise ExportError(f"constant '{target}' of node '{node.name}' has no tensor data")
        tensor = _tensor_from_fake(node.name, data, TensorRole.CONSTANT, node)
        tensor.data = _constant_bytes(data)
        self.values[node] = tensor

    def _lower_call(self, node: torch.fx.Node) -> None:
        if _is_compile_time_check(node):
            return
        if node.target is operator.getitem:
            source, index = node.args
            self.values[node] = self.values[source][index]
            return
        if is_delegate_call(node):
            self._lower_delegate(node)
            return
        if _is_identity(node) and not (node in self.output_nodes and node.args[0].op == "placeholder"):
            self.values[node] = self.tensor(node.args[0])
            return
        functional = node.target
        out_operator = OUT_VARIANTS[_operator_name(functional)]
        schema = out_schema_for(out_operator, functional)
        converter = ArgumentConverter(node, self.tensor, self._scalar_tensor)
        bound = bound_arguments(node)
        args: list[Argument] = []
        for argument in schema.inputs:
            if argument.name in bound:
                value = bound[argument.name]
            elif argument.has_default:
                value = argument.default
            elif argument.optional:
                value = None
            else:
                raise ExportError(
                    f"node '{node.name}' ({_operator_name(functional)}): {out_operator} needs "
                    f"argument '{argument.name}', which the node does not have"
                )
            args.append(converter.convert(argument, value))
        outputs = self._make_outputs(node)
        multiple = isinstance(node.meta["val"], (list, tuple))
        self.values[node] = outputs if multiple else outputs[0]
        args.extend(self._out_arguments(node, schema.outs, outputs))
        if schema.num_returns == 1:
            args.append(outputs[0])
        elif schema.num_returns > 1:
            args.append(TensorList(tuple(outputs)))
        self.calls.append(KernelCall(out_operator, args, outputs, source_node=node.name))

    def _lower_delegate(self, node: torch.fx.Node) -> None:
        inputs = [self.tensor(source) for source in node.args]
        fakes = node.meta["val"]
        names = [f"{node.name}.{i}" for i in range(len(fakes))]
        outputs = [_tensor_from_fake(n, f, TensorRole.ACTIVATION, node) for n, f in zip(names, fakes)]
        self.values[node] = outputs
        self.calls.append(DelegateCall(node.meta[DELEGATE_META_KEY], inputs, outputs, source_node=node.name))

    def _scalar_tensor(self, value: Any, dtype: torch.dtype) -> TensorValue:
        """A 0-dim constant for a number given where a tensor is expected (x * 2)."""
        data = torch.tensor(value, dtype=dtype)
        self.scalar_constants += 1
        name = f"_scalar_constant{self.scalar_constants}"
        tensor = _tensor_from_fake(name, data, TensorRole.CONSTANT, self.current_node)
        tensor.data = _constant_bytes(data)
        return tensor

    def _make_outputs(self, node: torch.fx.Node) -> list[TensorValue]:
        fake = node.meta.get("val")
        fakes = list(fake) if isinstance(fake, (list, tuple)) else [fake]
        names = [node.name] if len(fakes) == 1 else [f"{node.name}.{i}" for i in range(len(fakes))]
        return [_tensor_from_fake(n, f, TensorRole.ACTIVATION, node) for n, f in zip(names, fakes)]

    def _out_arguments(
        self, node: torch.fx.Node, outs: tuple[SchemaArgument, ...], outputs: list[TensorValue]
    ) -> list[Argument]:
        if len(outs) == 1 and outs[0].kind is ArgKind.TENSOR_LIST:
            return [TensorList(tuple(outputs))]
        if len(outs) != len(outputs):
            raise ExportError(
                f"node '{node.name}' produces {len(outputs)} tensor(s) but its out variant "
                f"has {len(outs)} out argument(s)"
            )
        return list(outputs)

    def _lower_outputs(self, node: torch.fx.Node) -> list[TensorValue]:
        outputs: list[TensorValue] = []
        for item in node.args[0]:
            if not isinstance(item, torch.fx.Node):
                raise ExportError(
                    f"the model returns a constant ({item!r}); Kiln programs return tensors only"
                )
            tensor = self.tensor(item)
            tensor.is_output = True
            outputs.append(tensor)
        return outputs


def to_out_variants(
    program: ExportedProgram,
    *,
    method_name: str = "forward",
    graph_module: Optional[torch.fx.GraphModule] = None,
    kernel_libraries: Sequence[str] = KERNEL_LIBRARIES,
) -> MethodGraph:
    """Lower a core-ATen :class:`~torch.export.ExportedProgram` to out-variant kernel calls.

    Args:
        program: the result of :func:`kiln.export.export_to_edge` (core ATen).
        method_name: name of the method in the ``.pte`` program.
        graph_module: a rewritten copy of ``program``'s graph to lower instead (same
            placeholders and signature), e.g. with delegate call nodes
            (:mod:`kiln.passes.delegation`); those become ``DelegateCall`` instructions.
        kernel_libraries: the kernel libraries the program will run with, most
            specific first; every kernel call must have a kernel there for its dtypes.

    Returns:
        The method as a :class:`MethodGraph`, not yet memory planned.

    Raises:
        UnsupportedOperatorError: a node calls an operator with no out variant in
            :data:`kiln.passes.aten_out_variants.OUT_VARIANTS`, or whose out variant has no
            kernel in the runtime's op tables (all such nodes are listed);
            :class:`~kiln.passes.kernel_availability.UnsupportedDtypeError` when the
            kernel exists but takes none of a call's dtypes.
        ExportError: dynamic shapes, unsupported dtypes, in-place mutation of
            buffers or inputs, or non-tensor inputs/outputs.
    """
    libraries = tuple(kernel_libraries)
    method = _Lowering(program, method_name, graph_module, libraries).run()
    check_kernels(method, libraries)
    logger.debug("lowered %s: %d calls, %d tensors", method_name, len(method.calls), len(method.tensors()))
    return method


def find_call(method: MethodGraph, source_node: str) -> Optional[Call]:
    """The call lowered from FX node ``source_node`` (for tools and tests)."""
    return next((c for c in method.calls if c.source_node == source_node), None)
