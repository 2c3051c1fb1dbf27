"""Bundled programs (``.bpte``, identifier ``BP08``): a ``.pte`` program with test cases —
inputs and the outputs they must produce — that runners check on the target.

    cases = [kiln.devtools.TestCase([x]) for x in samples]          # expected: eager PyTorch
    bundled = kiln.devtools.bundle(program, cases, model=model)
    bundled.save("mv2.bpte")                                        # kiln-run mv2.bpte -> PASS/FAIL

The format is ExecuTorch's (its ``serialize_from_bundled_program_to_flatbuffer`` writes
the same bytes layout and its runtime's bundled-program API reads Kiln's files);
``kiln-run FILE.bpte`` and the firmware (``kiln-deploy --bundleio``) run the cases.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional, Sequence, Union

import numpy as np

from kiln.devtools.errors import BundledProgramError
from kiln.serialize.scalar_types import CODE_BY_NUMPY, NAME_BY_CODE, NUMPY_BY_CODE

logger = logging.getLogger(__name__)

FILE_IDENTIFIER = b"BP08"
#: The schema version ExecuTorch 1.5 writes (its BUNDLED_PROGRAM_SCHEMA_VERSION).
SCHEMA_VERSION = 2
#: The embedded program and tensor data are aligned for the runtime to use them in place.
PROGRAM_ALIGNMENT = 32
TENSOR_ALIGNMENT = 16

Value = Union[np.ndarray, int, float, bool]


@dataclass
class TestCase:
    """Inputs of one call of a method and, optionally, the outputs it must produce (None:
    :func:`bundle` computes them with ``model``). Tensors may be numpy arrays or torch tensors."""

    inputs: Sequence[Any]
    expected_outputs: Optional[Sequence[Any]] = None
    __test__ = False  # not a pytest test class, despite its name


@dataclass
class MethodTestSuite:
    method_name: str
    test_cases: list[TestCase] = field(default_factory=list)


@dataclass
class BundledProgram:
    """A program and its test cases (``program`` is the ``.pte`` file's bytes)."""

    program: bytes
    suites: list[MethodTestSuite]
    version: int = SCHEMA_VERSION

    def to_bytes(self) -> bytes:
        return _serialize(self)

    def save(self, path: Union[str, Path]) -> Path:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(self.to_bytes())
        return path

    def suite(self, method_name: str) -> MethodTestSuite:
        for suite in self.suites:
            if suite.method_name == method_name:
                return suite
        raise BundledProgramError(f"the bundled program has no test cases for method {method_name!r} "
                                  f"(it has {[s.method_name for s in self.suites]})")

    @classmethod
    def load(cls, path: Union[str, Path]) -> "BundledProgram":
        path = Path(path)
        try:
            data = path.read_bytes()
        except OSError as error:
            raise BundledProgramError(f"cannot read {path}: {error.strerror or error}") from None
        return cls.from_bytes(data, source=str(path))

    @classmethod
    def from_bytes(cls, data: bytes, *, source: str = "bundled program") -> "BundledProgram":
        """Parses a ``.bpte`` (raises :class:`BundledProgramError` naming what is wrong)."""
        return _deserialize(bytes(data), source)


# ---------------------------------------------------------------------------- building
def _as_value(value: Any, what: str) -> Value:
    if isinstance(value, (bool, int, float, np.ndarray)):
        return value
    if hasattr(value, "detach") and hasattr(value, "numpy"):  # a torch tensor
        return value.detach().cpu().contiguous().numpy()
    if isinstance(value, np.generic):
        return value.item()
    raise BundledProgramError(f"{what} is a {type(value).__name__}; bundled values are tensors, ints, floats or bools")


def _run_model(model: Any, inputs: Sequence[Any]) -> list[Any]:
    import torch

    tensors = [torch.from_numpy(np.array(x)) if isinstance(x, np.ndarray) else x for x in inputs]
    with torch.no_grad():
        result = model(*tensors)
    if isinstance(result, (tuple, list)):
        return list(result)
    return [result]


def _method_io(program: Any, method_name: str) -> tuple[list[Any], list[Any]]:
    try:
        info = program.method(method_name)
    except Exception as error:
        raise BundledProgramError(f"the program has no method {method_name!r}: {error}") from None
    return info.inputs, info.outputs


def _check_against_method(values: Sequence[Value], specs: Sequence[Any], what: str) -> None:
    if len(values) != len(specs):
        raise BundledProgramError(f"{what}: {len(values)} values given; the method has {len(specs)}")
    for index, (value, spec) in enumerate(zip(values, specs)):
        if not isinstance(value, np.ndarray):
            continue
        dtype_name = NAME_BY_CODE.get(CODE_BY_NUMPY.get(value.dtype, -1), str(value.dtype))
        expected = str(getattr(spec, "dtype", ""))
        if expected and dtype_name != expected:
            raise BundledProgramError(f"{what} {index} is {dtype_name}; the method's is {expected}")
        shape = tuple(getattr(spec, "shape", ()))
        if shape and tuple(value.shape) != shape:
            raise BundledProgramError(f"{what} {index} has shape {tuple(value.shape)}; the method's is {shape}")


def bundle(program: Any, test_cases: Sequence[Union[TestCase, Sequence[Any]]], *, model: Any = None,
           method_name: str = "forward") -> BundledProgram:
    """Bundles ``program`` (a :class:`kiln.Program`, or a ``.pte`` path or its bytes) with test cases.

    Args:
        test_cases: :class:`TestCase` objects, or input sequences. A case without expected
            outputs gets ``model(*inputs)`` (eager PyTorch, or the quantized model — whatever
            the program should reproduce).
        model: computes the missing expected outputs; needed when a case has none.
        method_name: the method the cases test.

    Raises:
        BundledProgramError: a case's inputs or outputs do not match the method (count,
            dtype, shape), or a case has no expected outputs and no ``model`` was given.
    """
    from kiln.program import Program

    if isinstance(program, (str, Path)):
        program = Program.load(program)
    elif isinstance(program, (bytes, bytearray)):
        program = Program.from_bytes(bytes(program))
    input_specs, output_specs = _method_io(program, method_name)
    suite = MethodTestSuite(method_name)
    for number, case in enumerate(test_cases):
        if not isinstance(case, TestCase):
            case = TestCase(list(case))
        inputs = [_as_value(v, f"test case {number} input {i}") for i, v in enumerate(case.inputs)]
        expected = case.expected_outputs
        if expected is None:
            if model is None:
                raise BundledProgramError(f"test case {number} has no expected outputs and no model was given "
                                          "to compute them")
            expected = _run_model(model, case.inputs)
        outputs = [_as_value(v, f"test case {number} expected output {i}") for i, v in enumerate(expected)]
        _check_against_method(inputs, input_specs, f"test case {number} input")
        _check_against_method(outputs, output_specs, f"test case {number} expected output")
        suite.test_cases.append(TestCase(inputs, outputs))
    return BundledProgram(program.to_bytes(), [suite])


# ---------------------------------------------------------------------------- serialization
def _aligned_bytes(builder: Any, data: bytes, alignment: int) -> int:
    """A [ubyte] vector whose data starts at a multiple of ``alignment`` (Python's generated
    code ignores the schema's force_align)."""
    builder.StartVector(1, len(data), alignment)
    builder.head = builder.head - len(data)
    builder.Bytes[builder.head:builder.head + len(data)] = data
    return builder.EndVector()


def _write_value(builder: Any, schema: Any, value: Value) -> int:
    if isinstance(value, np.ndarray):
        array = np.ascontiguousarray(value)
        code = CODE_BY_NUMPY.get(array.dtype)
        if code is None:
            raise BundledProgramError(f"tensors of dtype {array.dtype} cannot be bundled")
        data = _aligned_bytes(builder, array.tobytes(), TENSOR_ALIGNMENT)
        dim_order = builder.CreateByteVector(bytes(range(array.ndim)))
        schema.TensorStartSizesVector(builder, array.ndim)
        for size in reversed(array.shape):
            builder.PrependInt32(int(size))
        sizes = builder.EndVector()
        schema.TensorStart(builder)
        schema.TensorAddScalarType(builder, code)
        schema.TensorAddSizes(builder, sizes)
        schema.TensorAddData(builder, data)
        schema.TensorAddDimOrder(builder, dim_order)
        payload, kind = schema.TensorEnd(builder), schema.ValueUnion.Tensor
    elif isinstance(value, bool):
        schema.BoolStart(builder)
        schema.BoolAddBoolVal(builder, value)
        payload, kind = schema.BoolEnd(builder), schema.ValueUnion.Bool
    elif isinstance(value, int):
        schema.IntStart(builder)
        schema.IntAddIntVal(builder, value)
        payload, kind = schema.IntEnd(builder), schema.ValueUnion.Int
    else:
        schema.DoubleStart(builder)
        schema.DoubleAddDoubleVal(builder, float(value))
        payload, kind = schema.DoubleEnd(builder), schema.ValueUnion.Double
    schema.ValueStart(builder)
    schema.ValueAddValType(builder, kind)
    schema.ValueAddVal(builder, payload)
    return schema.ValueEnd(builder)


def _offsets_vector(builder: Any, offsets: list[int]) -> int:
    builder.StartVector(4, len(offsets), 4)
    for offset in reversed(offsets):
        builder.PrependUOffsetTRelative(offset)
    return builder.EndVector()


def _serialize(bundled: BundledProgram) -> bytes:
    import flatbuffers

    from kiln.devtools import bundled_program_generated as schema

    builder = flatbuffers.Builder(len(bundled.program) + 4096)
    program = _aligned_bytes(builder, bundled.program, PROGRAM_ALIGNMENT)
    suites = []
    for suite in bundled.suites:
        cases = []
        for case in suite.test_cases:
            inputs = _offsets_vector(builder, [_write_value(builder, schema, v) for v in case.inputs])
            outputs = _offsets_vector(builder, [_write_value(builder, schema, v) for v in case.expected_outputs or []])
            schema.BundledMethodTestCaseStart(builder)
            schema.BundledMethodTestCaseAddInputs(builder, inputs)
            schema.BundledMethodTestCaseAddExpectedOutputs(builder, outputs)
            cases.append(schema.BundledMethodTestCaseEnd(builder))
        case_vector = _offsets_vector(builder, cases)
        name = builder.CreateString(suite.method_name)
        schema.BundledMethodTestSuiteStart(builder)
        schema.BundledMethodTestSuiteAddMethodName(builder, name)
        schema.BundledMethodTestSuiteAddTestCases(builder, case_vector)
        suites.append(schema.BundledMethodTestSuiteEnd(builder))
    suite_vector = _offsets_vector(builder, suites)
    schema.BundledProgramStart(builder)
    schema.BundledProgramAddVersion(builder, bundled.version)
    schema.BundledProgramAddMethodTestSuites(builder, suite_vector)
    schema.BundledProgramAddProgram(builder, program)
    builder.Finish(schema.BundledProgramEnd(builder), file_identifier=FILE_IDENTIFIER)
    return bytes(builder.Output())


def _read_value(value: Any, schema: Any, what: str) -> Value:
    kind = value.valType
    payload = value.val
    if kind == schema.ValueUnion.Tensor:
        dtype = NUMPY_BY_CODE.get(int(payload.scalarType))
        if dtype is None:
            raise BundledProgramError(f"{what}: unsupported tensor dtype code {payload.scalarType}")
        sizes = [int(s) for s in (payload.sizes if payload.sizes is not None else [])]
        data = bytes(bytearray(payload.data)) if payload.data is not None else b""
        count = int(np.prod(sizes, dtype=np.int64)) if sizes else 1
        if count * np.dtype(dtype).itemsize != len(data):
            raise BundledProgramError(f"{what}: sizes {sizes} of {np.dtype(dtype)} need "
                                      f"{count * np.dtype(dtype).itemsize} bytes; it holds {len(data)}")
        array = np.frombuffer(data, dtype=dtype).reshape(sizes).copy()
        order = list(payload.dimOrder) if payload.dimOrder is not None else list(range(len(sizes)))
        if order != list(range(len(sizes))):
            # Data are contiguous in dim order: give them back in the logical (NCHW) order.
            array = np.transpose(np.frombuffer(data, dtype=dtype).reshape([sizes[d] for d in order]),
                                 np.argsort(order)).copy()
        return array
    if kind == schema.ValueUnion.Int:
        return int(payload.intVal)
    if kind == schema.ValueUnion.Bool:
        return bool(payload.boolVal)
    if kind == schema.ValueUnion.Double:
        return float(payload.doubleVal)
    raise BundledProgramError(f"{what} holds no value")


def _deserialize(data: bytes, source: str) -> BundledProgram:
    from kiln.devtools import bundled_program_generated as schema

    if len(data) < 8:
        raise BundledProgramError(f"{source}: {len(data)} bytes is too short for a bundled program")
    if data[4:8] != FILE_IDENTIFIER:
        foreign = {b"ET12": "; this is a .pte program (bundle it with kiln.devtools.bundle)"}.get(data[4:8], "")
        raise BundledProgramError(f"{source}: not a bundled program (identifier {data[4:8]!r}, expected "
                                  f"b'BP08'){foreign}")
    try:
        root = schema.BundledProgramT.InitFromPackedBuf(data, 0)
    except Exception as error:  # the generated reader raises struct/index errors on cut or corrupt data
        raise BundledProgramError(f"{source}: truncated or corrupt bundled program "
                                  f"({type(error).__name__}: {error})") from None
    if root.program is None or len(root.program) == 0:
        raise BundledProgramError(f"{source}: the bundled program holds no program")
    suites = []
    for s, suite in enumerate(root.methodTestSuites or []):
        name = suite.methodName.decode() if isinstance(suite.methodName, bytes) else str(suite.methodName or "")
        cases = []
        for c, case in enumerate(suite.testCases or []):
            inputs = [_read_value(v, schema, f"{source}: suite {name!r} case {c} input {i}")
                      for i, v in enumerate(case.inputs or [])]
            outputs = [_read_value(v, schema, f"{source}: suite {name!r} case {c} expected output {i}")
                       for i, v in enumerate(case.expectedOutputs or [])]
            cases.append(TestCase(inputs, outputs))
        suites.append(MethodTestSuite(name, cases))
    return BundledProgram(bytes(bytearray(root.program)), suites, int(root.version))
