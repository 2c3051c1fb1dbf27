"""Out-variant operator schemas, and conversion of FX argument values into
``.pte`` argument values according to them.

The schema comes from torch's registration of the out overload when torch has one
(``aten::convolution.out``). Operators whose out overload exists only in the
runtime (``quantized_decomposed::quantize_per_tensor.out``) get a schema derived
from the functional one: same arguments, then ``*, Tensor(a!) out`` per return,
which is how those kernels are declared.
"""

from __future__ import annotations

import enum
import functools
from dataclasses import dataclass
from typing import Any, Callable, Optional

import torch

from kiln import ExportError
from kiln.ir.method_graph import (
    Argument,
    Bool,
    BoolList,
    Double,
    DoubleList,
    Int,
    IntList,
    Null,
    OptionalTensorList,
    ScalarValue,
    String,
    TensorList,
    TensorValue,
    split_operator_name,
)
from kiln.serialize.scalar_types import layout_code, memory_format_code, scalar_type_code


class ArgKind(enum.Enum):
    """What an argument holds, from its schema type (Optional[...] unwrapped)."""

    TENSOR = "Tensor"
    TENSOR_LIST = "Tensor[]"
    OPTIONAL_TENSOR_LIST = "Tensor?[]"
    INT = "int"
    FLOAT = "float"
    BOOL = "bool"
    SCALAR = "Scalar"
    STRING = "str"
    INT_LIST = "int[]"
    FLOAT_LIST = "float[]"
    BOOL_LIST = "bool[]"
    OTHER = "other"  # dtype/memory_format/layout/device: emitted from the Python value


@dataclass(frozen=True)
class SchemaArgument:
    name: str
    kind: ArgKind
    optional: bool
    has_default: bool
    default: Any
    list_size: Optional[int]  # N of int[N], which accepts a single int


@dataclass(frozen=True)
class OutSchema:
    """Arguments of an out-variant operator, split the way the emitter needs them."""

    operator: str  # "aten::convolution.out"
    inputs: tuple[SchemaArgument, ...]  # every non-out argument, in schema order
    outs: tuple[SchemaArgument, ...]  # out arguments (kind TENSOR or TENSOR_LIST)
    num_returns: int


def _classify(jit_type: Any) -> tuple[ArgKind, bool]:
    optional = isinstance(jit_type, torch.OptionalType)
    if optional:
        jit_type = jit_type.getElementType()
    if isinstance(jit_type, torch.ListType):
        element = jit_type.getElementType()
        if isinstance(element, torch.OptionalType) and isinstance(
            element.getElementType(), torch.TensorType
        ):
            return ArgKind.OPTIONAL_TENSOR_LIST, optional
        list_kinds = {
            torch.TensorType: ArgKind.TENSOR_LIST,
            torch.IntType: ArgKind.INT_LIST,
            torch.FloatType: ArgKind.FLOAT_LIST,
            torch.BoolType: ArgKind.BOOL_LIST,
        }
        for jit_class, kind in list_kinds.items():
            if isinstance(element, jit_class):
                return kind, optional
        return ArgKind.OTHER, optional
    scalar_kinds = {
        torch.TensorType: ArgKind.TENSOR,
        torch.IntType: ArgKind.INT,
        torch.FloatType: ArgKind.FLOAT,
        torch.BoolType: ArgKind.BOOL,
        torch.NumberType: ArgKind.SCALAR,
        torch.StringType: ArgKind.STRING,
    }
    for jit_class, kind in scalar_kinds.items():
        if isinstance(jit_type, jit_class):
            return kind, optional
    return ArgKind.OTHER, optional


def _schema_argument(argument: Any) -> SchemaArgument:
    kind, optional = _classify(argument.type)
    has_default = argument.has_default_value()
    return SchemaArgument(
        name=argument.name,
        kind=kind,
        optional=optional,
        has_default=has_default,
        default=argument.default_value if has_default else None,
        list_size=argument.N,
    )


def resolve_overload(full_name: str) -> Optional[torch._ops.OpOverload]:
    """The torch OpOverload for ``"ns::name.overload"``, or None if torch has none."""
    qualified, overload = split_operator_name(full_name)
    namespace, name = qualified.split("::")
    try:
        packet = getattr(getattr(torch.ops, namespace), name)
        return getattr(packet, overload or "default")
    except (AttributeError, RuntimeError):
        return None


@functools.lru_cache(maxsize=None)
def out_schema_for(out_operator: str, functional: torch._ops.OpOverload) -> OutSchema:
    """Schema of ``out_operator``; derived from ``functional`` if torch lacks it."""
    overload = resolve_overload(out_operator)
    if overload is not None:
        arguments = overload._schema.arguments
        return OutSchema(
            operator=out_operator,
            inputs=tuple(_schema_argument(a) for a in arguments if not a.is_out),
            outs=tuple(_schema_argument(a) for a in arguments if a.is_out),
            num_returns=len(overload._schema.returns),
        )
    returns = functional._schema.returns
    out_names = ["out"] if len(returns) == 1 else [f"out{i}" for i in range(len(returns))]
    outs = tuple(SchemaArgument(n, ArgKind.TENSOR, False, False, None, None) for n in out_names)
    return OutSchema(
        operator=out_operator,
        inputs=tuple(_schema_argument(a) for a in functional._schema.arguments),
        outs=outs,
        num_returns=len(returns),
    )


def bound_arguments(node: torch.fx.Node) -> dict[str, Any]:
    """The node's argument values by schema name (positional and keyword)."""
    target = node.target
    assert isinstance(target, torch._ops.OpOverload)
    values: dict[str, Any] = {}
    for schema_arg, value in zip(target._schema.arguments, node.args):
        values[schema_arg.name] = value
    values.update(node.kwargs)
    return values


# The value an earlier node was lowered to: a tensor, or a number the method computes
# or takes as input (ScalarValue).
ValueLookup = Callable[[torch.fx.Node], Any]
# Makes a 0-dim constant tensor holding a number, with the given dtype.
ScalarTensorFactory = Callable[[Any, torch.dtype], TensorValue]


def wrapped_number_dtype(node: torch.fx.Node, value: Any) -> torch.dtype:
    """dtype for a Python number passed where the schema wants a Tensor.

    torch treats such numbers as "wrapped numbers" that do not promote the other
    operand, so a 0-dim tensor of the first tensor argument's dtype gives the same
    result, except a float with an integer tensor, which promotes to float.
    """
    first = next(
        (a.meta["val"] for a in node.args if isinstance(a, torch.fx.Node)
         and isinstance(a.meta.get("val"), torch.Tensor)),
        None,
    )  # fmt: skip
    if first is None:
        return torch.get_default_dtype() if isinstance(value, float) else torch.int64
    if isinstance(value, float) and not first.dtype.is_floating_point:
        return torch.get_default_dtype()
    return first.dtype


class ArgumentConverter:
    """Turns one FX argument value into a ``.pte`` argument per its schema entry."""

    def __init__(
        self, node: torch.fx.Node, lookup: ValueLookup, scalar_tensor: ScalarTensorFactory
    ) -> None:
        self._node = node
        self._lookup = lookup
        self._scalar_tensor = scalar_tensor

    def _fail(self, argument: SchemaArgument, why: str) -> ExportError:
        return ExportError(
            f"node '{self._node.name}' ({self._node.target}): argument "
            f"'{argument.name}' {why}"
        )

    def convert(self, argument: SchemaArgument, value: Any) -> Argument:
        if value is None:
            return Null()
        if isinstance(value, torch.fx.Node):
            if not isinstance(value.meta.get("val"), torch.Tensor):
                return self._runtime_number(argument, value)
            return self._tensor(argument, value)
        special = self._enum_like(value)
        if special is not None:
            return special
        kind = argument.kind
        if kind is ArgKind.TENSOR and isinstance(value, (bool, int, float)):
            return self._scalar_tensor(value, wrapped_number_dtype(self._node, value))
        if isinstance(value, (list, tuple)):
            return self._list(argument, list(value))
        if kind in (ArgKind.INT_LIST, ArgKind.FLOAT_LIST, ArgKind.BOOL_LIST):
            # int[2] stride=1 means [1, 1].
            return self._list(argument, [value] * (argument.list_size or 1))
        if isinstance(value, bool):
            return Bool(value)
        if kind is ArgKind.FLOAT:
            return Double(float(value))
        if isinstance(value, int):
            return Int(value)
        if isinstance(value, float):
            return Double(value)
        if isinstance(value, str):
            return String(value)
        raise self._fail(argument, f"has a value of type {type(value).__name__} Kiln cannot emit")

    def _enum_like(self, value: Any) -> Optional[Argument]:
        if isinstance(value, torch.dtype):
            return Int(scalar_type_code(value))
        if isinstance(value, torch.memory_format):
            return Int(memory_format_code(value))
        if isinstance(value, torch.layout):
            return Int(layout_code(value))
        return None

    def _tensor(self, argument: SchemaArgument, node: torch.fx.Node) -> TensorValue:
        value = self._lookup(node)
        if not isinstance(value, TensorValue):
            raise self._fail(argument, f"comes from node '{node.name}', which is not a tensor")
        return value

    def _runtime_number(self, argument: SchemaArgument, node: torch.fx.Node) -> ScalarValue:
        """A number the method computes or takes as input (a symbolic size), passed
        where the schema takes an int or a Scalar."""
        value = self._number_node(argument, node)
        if argument.kind not in (ArgKind.INT, ArgKind.SCALAR, ArgKind.FLOAT, ArgKind.BOOL):
            raise self._fail(
                argument,
                f"is the run-time number '{node.name}' where the operator takes a "
                f"{argument.kind.value}; Kiln passes run-time numbers as ints and Scalars only",
            )
        return value

    def _number_node(self, argument: SchemaArgument, node: torch.fx.Node) -> ScalarValue:
        value = self._lookup(node)
        if not isinstance(value, ScalarValue):
            raise self._fail(argument, f"comes from node '{node.name}', which Kiln did not lower to a number")
        return value

    def _list(self, argument: SchemaArgument, items: list[Any]) -> Argument:
        kind = argument.kind
        if kind is ArgKind.TENSOR_LIST:
            return TensorList(tuple(self._tensor(argument, item) for item in items))
        if kind is ArgKind.OPTIONAL_TENSOR_LIST:
            return OptionalTensorList(
                tuple(None if item is None else self._tensor(argument, item) for item in items)
            )
        if any(isinstance(item, torch.fx.Node) for item in items):
            if kind is not ArgKind.INT_LIST:
                raise self._fail(argument, f"is a {kind.value} with run-time values, which Kiln cannot emit")
            # Sizes known at run time: the list refers to the Int values computing them.
            return IntList(tuple(
                self._number_node(argument, item) if isinstance(item, torch.fx.Node) else int(item)
                for item in items
            ))  # fmt: skip
        if kind is ArgKind.FLOAT_LIST:
            return DoubleList(tuple(float(item) for item in items))
        if kind is ArgKind.BOOL_LIST:
            return BoolList(tuple(bool(item) for item in items))
        if all(isinstance(item, int) and not isinstance(item, bool) for item in items):
            return IntList(tuple(items))
        raise self._fail(argument, f"is a list Kiln cannot emit: {items!r}")
