"""Lower a core-ATen ExportedProgram to a :class:`MethodGraph` of out-variant calls.

Every ``call_function`` node becomes one :class:`KernelCall` whose operator comes
from :mod:`kiln.passes.aten_out_variants`; ``getitem`` nodes select one output of a
multi-output call; parameters, buffers and lifted constants become constant
tensors; identity operations (a clone without a layout change, a view to the same
shape) reuse their input tensor instead of copying it. Symbolic sizes (bounded
dynamic shapes) are handled by :mod:`kiln.passes.symbolic`, buffers the model
updates by :mod:`kiln.passes.state`; int, float and bool user inputs become the
method's non-tensor inputs.
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
from kiln.passes import as_strided, state, symbolic
from kiln.passes.delegation import DELEGATE_META_KEY, is_delegate_call
from kiln.ir.method_graph import (
    Argument,
    Call,
    DelegateCall,
    KernelCall,
    MethodGraph,
    MethodValue,
    Null,
    ScalarValue,
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


def _tensor_from_fake(
    name: str, fake: Any, role: TensorRole, node: torch.fx.Node, ranges: symbolic.RangeConstraints = {}
) -> TensorValue:
    """A tensor value of the fake tensor's dtype and shape; a symbolic shape becomes
    its upper bound (from ``ranges``, the program's range constraints) and marks the
    tensor dynamic."""
    if not isinstance(fake, torch.Tensor):
        raise ExportError(
            f"node '{node.name}' produces {type(fake).__name__}, not a tensor; Kiln programs "
            "pass tensors, ints, floats and bools only"
        )
    if not is_supported_dtype(fake.dtype):
        raise ExportError(f"node '{node.name}' has dtype {fake.dtype}, which Kiln does not support")
    shape, dynamic = symbolic.upper_bound_shape(tuple(fake.shape), ranges, f"node '{node.name}'")
    return TensorValue(
        name=name,
        dtype_code=scalar_type_code(fake.dtype),
        element_size=fake.element_size(),
        shape=shape,
        role=role,
        dynamic=dynamic,
    )


def _scalar_input(node: torch.fx.Node) -> ScalarValue:
    """A non-tensor user input: an int that stays symbolic (``Dim`` on an int input),
    or a number torch.export fixed to the example's value (the runtime accepts only
    that value for an input no instruction reads)."""
    value = node.meta.get("val")
    if isinstance(value, torch.SymInt):
        hint = value.node.hint
        return ScalarValue(node.name, int(hint) if isinstance(hint, int) else 0)
    if isinstance(value, (bool, int, float)):
        return ScalarValue(node.name, value)
    raise ExportError(
        f"input '{node.name}' is a {type(value).__name__}; Kiln methods take tensors, ints, "
        "floats and bools"
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
            and _same_sizes(tuple(source.meta["val"].shape), tuple(node.meta["val"].shape))
        )
    return False


def _same_sizes(a: tuple[Any, ...], b: tuple[Any, ...]) -> bool:
    """Equal shapes, symbolic sizes compared as expressions (no guard is added)."""
    def key(size: Any) -> Any:
        return size.node.expr if isinstance(size, torch.SymInt) else int(size)

    return len(a) == len(b) and all(key(x) == key(y) for x, y in zip(a, b))


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
        # TensorValue, ScalarValue (an input or a size computed at run time) or a list
        # of TensorValues.
        self.values: dict[torch.fx.Node, Any] = {}
        self.inputs: list[MethodValue] = []
        self.calls: list[Call] = []
        self.output_nodes: set[torch.fx.Node] = set()
        self.scalar_constants = 0
        self.current_node: Optional[torch.fx.Node] = None
        self.ranges = program.range_constraints
        self.mutated_buffers = state.mutated_buffers(program)
        self.states: dict[str, TensorValue] = {}  # buffer target -> its state tensor
        self.dropped: set[torch.fx.Node] = set()  # run-time checks and what only they read

    def tensor(self, node: torch.fx.Node) -> TensorValue:
        value = self.values.get(node)
        if not isinstance(value, TensorValue):
            raise ExportError(f"node '{node.name}' is used as a tensor but was not lowered to one")
        return value

    def value(self, node: torch.fx.Node) -> Any:
        """The tensor or number node ``node`` was lowered to."""
        if node not in self.values:
            raise ExportError(f"node '{node.name}' is used before it was lowered")
        return self.values[node]

    def run(self) -> MethodGraph:
        graph = self.graph_module.graph
        self.dropped = symbolic.check_only_nodes(graph, _is_compile_time_check)
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
            if spec.kind is OutputKind.USER_INPUT_MUTATION:
                raise ExportError(
                    f"the model changes its input '{spec.target}' in place; Kiln methods do not "
                    "write their inputs: return the new value, or keep it in a buffer "
                    "(register_buffer) to have state"
                )
            if spec.kind not in (OutputKind.USER_OUTPUT, OutputKind.BUFFER_MUTATION):
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
            if node.op != "call_function" or node.target is operator.getitem or node in self.dropped:
                continue
            if is_delegate_call(node) or symbolic.is_size_computation(node):
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

    @staticmethod
    def _check_strided_read(node: torch.fx.Node) -> None:
        reason = as_strided.copy_objection(node)
        if reason is not None:
            raise UnsupportedOperatorError(f"node '{node.name}' (aten::as_strided) cannot run on the CPU: {reason}",
                                           node=node.name, operator="aten::as_strided")

    def _lower_placeholder(self, node: torch.fx.Node, spec: Any) -> None:
        if spec.kind is InputKind.USER_INPUT:
            fake = node.meta.get("val")
            if isinstance(fake, torch.Tensor):
                value: MethodValue = _tensor_from_fake(node.name, fake, TensorRole.INPUT, node, self.ranges)
            else:
                value = _scalar_input(node)
            self.inputs.append(value)
            self.values[node] = value
            return
        target = spec.target
        mutated = spec.kind is InputKind.BUFFER and target in self.mutated_buffers
        if not node.users and not mutated:
            return  # e.g. BatchNorm's num_batches_tracked
        data = self.program.state_dict.get(target)
        if data is None:
            data = self.program.constants.get(target)
        if data is None and mutated:
            data = dict(self.program.named_buffers()).get(target)  # non-persistent buffers
        if not isinstance(data, torch.Tensor):
            raise ExportError(f"constant '{target}' of node '{node.name}' has no tensor data")
        tensor = _tensor_from_fake(node.name, data, TensorRole.CONSTANT, node)
        tensor.data = _constant_bytes(data)
        if mutated:
            self.states[target] = state.make_state(tensor, target)
        self.values[node] = tensor

    def _lower_call(self, node: torch.fx.Node) -> None:
        if node in self.dropped:
            return
        if symbolic.is_size_computation(node):
            call, result = symbolic.size_call(node, self.value)
            self.calls.append(call)
            self.values[node] = result
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
        if functional is as_strided.AS_STRIDED:
            self._check_strided_read(node)
        out_operator = OUT_VARIANTS[_operator_name(functional)]
        schema = out_schema_for(out_operator, functional)
        converter = ArgumentConverter(node, self.value, self._scalar_tensor)
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
        outputs = [_tensor_from_fake(n, f, TensorRole.ACTIVATION, node, self.ranges) for n, f in zip(names, fakes)]
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
        return [_tensor_from_fake(n, f, TensorRole.ACTIVATION, node, self.ranges) for n, f in zip(names, fakes)]

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

    def _lower_outputs(self, node: torch.fx.Node) -> list[MethodValue]:
        """The user outputs; the new values of updated buffers (the graph returns them
        first) are written back into their state instead."""
        items = list(node.args[0])
        outputs: list[MethodValue] = []
        for item in items[len(self.mutated_buffers):]:
            if not isinstance(item, torch.fx.Node):
                raise ExportError(
                    f"the model returns a constant ({item!r}); Kiln programs return values the "
                    "method computes"
                )
            value = self.value(item)
            if isinstance(value, TensorValue) and value.role is TensorRole.STATE:
                value = self._copy_of_state(value, item)  # the value before the write-back
            if isinstance(value, TensorValue):
                value.is_output = True
            elif not isinstance(value, ScalarValue):
                raise ExportError(f"output '{item.name}' is not a tensor or a number")
            outputs.append(value)
        for target, item in zip(self.mutated_buffers, items):
            new_value = self.tensor(item)
            state_tensor = self.states[target]
            if new_value is not state_tensor:
                self._check_kernel(state.WRITE_BACK_OPERATOR, item.name)
                self.calls.append(state.write_back(state_tensor, new_value, target, item.name))
        return outputs

    @staticmethod
    def _check_kernel(operator_name: str, node_name: str) -> None:
        """Refuses a call Kiln adds itself when no kernel library implements it."""
        kernels = kernel_operators()
        if kernels is not None and operator_name not in kernels:
            raise UnsupportedOperatorError(
                f"node '{node_name}' needs {operator_name}, which no kernel library implements",
                node=node_name,
                operator=operator_name,
            )

    def _copy_of_state(self, state_tensor: TensorValue, node: torch.fx.Node) -> TensorValue:
        copy = TensorValue(
            name=f"{node.name}_output", dtype_code=state_tensor.dtype_code,
            element_size=state_tensor.element_size, shape=state_tensor.shape, role=TensorRole.ACTIVATION,
        )  # fmt: skip
        self.calls.append(KernelCall("aten::clone.out", [state_tensor, Null(), copy, copy], [copy], node.name))
        return copy


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
