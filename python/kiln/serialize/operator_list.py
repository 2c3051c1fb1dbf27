"""The operators (and tensor dtypes) a ``.pte`` program calls, read without torch.

``kiln-oplist`` (:mod:`kiln.cli.oplist`) prints them. This module is also the .pte reader of
the selective-build code generator (tools/codegen/selection.py), which loads it by file path
at CMake time. So it imports only the standard library at module level and takes the
flatc-generated schema module as an argument: reading a program needs neither torch, numpy,
the runtime extension nor the rest of the ``kiln`` package, only ``flatbuffers``.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from struct import error as struct_error
from types import ModuleType
from typing import Optional, Sequence

#: c10 ScalarType code -> name, as the kernel op tables and the C++ enum spell them.
SCALAR_TYPE_NAMES: dict[int, str] = {
    0: "Byte", 1: "Char", 2: "Short", 3: "Int", 4: "Long", 5: "Half", 6: "Float", 7: "Double",
    8: "ComplexHalf", 9: "ComplexFloat", 10: "ComplexDouble", 11: "Bool", 12: "QInt8",
    13: "QUInt8", 14: "QInt32", 15: "BFloat16", 16: "QUInt4x2", 17: "QUInt2x4", 18: "Bits1x8",
    19: "Bits2x4", 20: "Bits4x2", 21: "Bits8", 22: "Bits16", 23: "Float8_e5m2",
    24: "Float8_e4m3fn", 25: "Float8_e5m2fnuz", 26: "Float8_e4m3fnuz", 27: "UInt16",
    28: "UInt32", 29: "UInt64",
}  # fmt: skip

_FILE_IDENTIFIER = b"ET12"
_BUNDLE_IDENTIFIER = b"BP08"


class ProgramReadError(ValueError):
    """The file is not a .pte program this reader understands."""


@dataclass
class OperatorUse:
    """One operator of a program: its full name and the dtypes of the tensors its
    kernel calls pass (inputs and outputs, over every call in every method)."""

    name: str
    dtypes: set[str] = field(default_factory=set)
    calls: int = 0


def _text(value: Optional[bytes]) -> str:
    return "" if value is None else value.decode()


def _tensor_dtype(schema: ModuleType, value: object) -> Optional[str]:
    tensor = schema.Tensor()
    table = value.Val()  # type: ignore[attr-defined]
    tensor.Init(table.Bytes, table.Pos)
    code = int(tensor.ScalarType())
    return SCALAR_TYPE_NAMES.get(code, f"ScalarType{code}")


def _value_dtypes(schema: ModuleType, plan: object, index: int, depth: int = 0) -> set[str]:
    """Dtypes of the tensor(s) held by value `index` (a Tensor, TensorList or
    OptionalTensorList; other kinds hold none)."""
    if index < 0 or index >= plan.ValuesLength() or depth > 1:  # type: ignore[attr-defined]
        return set()
    value = plan.Values(index)  # type: ignore[attr-defined]
    kind = value.ValType()
    types = schema.KernelTypes
    if kind == types.Tensor:
        dtype = _tensor_dtype(schema, value)
        return {dtype} if dtype else set()
    if kind in (types.TensorList, types.OptionalTensorList):
        holder = schema.TensorList() if kind == types.TensorList else schema.OptionalTensorList()
        table = value.Val()
        holder.Init(table.Bytes, table.Pos)
        found: set[str] = set()
        for j in range(holder.ItemsLength()):
            found |= _value_dtypes(schema, plan, int(holder.Items(j)), depth + 1)
        return found
    return set()


def embedded_program(data: bytes) -> bytes:
    """The .pte inside a bundled program (``BP08``: runtime/schema/bundled_program.fbs,
    whose root table's third field is the program's bytes); ``data`` itself otherwise."""
    if len(data) < 8 or data[4:8] != _BUNDLE_IDENTIFIER:
        return data
    from flatbuffers.table import Table

    try:
        root = Table(bytearray(data), int.from_bytes(data[0:4], "little"))
        field = root.Offset(8)  # vtable slot of BundledProgram.program
        if field:
            start, length = root.Vector(field), root.VectorLen(field)
            if start + length <= len(data):
                return bytes(data[start : start + length])
    except (IndexError, ValueError, struct_error) as error:
        raise ProgramReadError(f"bundled program: truncated or corrupt ({error})") from None
    raise ProgramReadError("bundled program: no program inside (truncated or corrupt)")


def read_program_operators(data: bytes, schema: ModuleType) -> dict[str, OperatorUse]:
    """Operators of every method of the .pte `data` (or of the program a bundled program
    holds), in first-use order, with the dtypes their kernel calls see. `schema` is the
    flatc-generated Python module of runtime/schema/program.fbs
    (kiln.serialize.program_generated). Operators inside delegates are not kernels and
    are not listed."""
    data = embedded_program(data)
    if len(data) < 8 or data[4:8] != _FILE_IDENTIFIER:
        raise ProgramReadError(f"not a .pte program: file identifier {bytes(data[4:8])!r}, expected {_FILE_IDENTIFIER!r}")
    try:
        program = schema.Program.GetRootAs(data, 0)
        operators: dict[str, OperatorUse] = {}
        for p in range(program.ExecutionPlanLength()):
            plan = program.ExecutionPlan(p)
            names = []
            for o in range(plan.OperatorsLength()):
                op = plan.Operators(o)
                name, overload = _text(op.Name()), _text(op.Overload())
                names.append(f"{name}.{overload}" if overload else name)
                operators.setdefault(names[-1], OperatorUse(names[-1]))
            for c in range(plan.ChainsLength()):
                chain = plan.Chains(c)
                for i in range(chain.InstructionsLength()):
                    instruction = chain.Instructions(i)
                    if instruction.InstrArgsType() != schema.InstructionArguments.KernelCall:
                        continue
                    call = schema.KernelCall()
                    table = instruction.InstrArgs()
                    call.Init(table.Bytes, table.Pos)
                    op_index = int(call.OpIndex())
                    if not 0 <= op_index < len(names):
                        raise ProgramReadError(f"kernel call names operator {op_index} of {len(names)}")
                    use = operators[names[op_index]]
                    use.calls += 1
                    for a in range(call.ArgsLength()):
                        use.dtypes |= _value_dtypes(schema, plan, int(call.Args(a)))
    except (IndexError, ValueError, TypeError, AttributeError) as error:
        if isinstance(error, ProgramReadError):
            raise
        raise ProgramReadError(f"malformed program flatbuffer: {error}") from error
    return operators


def load_schema_module(path: Optional[Path] = None) -> ModuleType:
    """The flatc-generated schema module: from `path` (a program_generated.py), or
    the one installed with kiln."""
    if path is None:
        from kiln.serialize import program_generated

        return program_generated
    import importlib.util

    spec = importlib.util.spec_from_file_location("kiln_pte_schema", path)
    if spec is None or spec.loader is None:
        raise ProgramReadError(f"cannot load the schema module {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def program_operators(path: Path, schema: Optional[ModuleType] = None) -> dict[str, OperatorUse]:
    """:func:`read_program_operators` of the file at `path`."""
    return read_program_operators(Path(path).read_bytes(), schema if schema is not None else load_schema_module())
