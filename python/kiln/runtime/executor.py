"""Loading and running .pte programs on Kiln's C++ runtime from Python.

    from kiln.runtime import Runtime
    program = Runtime.get().load_program("model.pte")
    method = program.load_method("forward")
    outputs = method.execute([torch.randn(1, 3)])

Memory is sized from the program: the method allocator gets exactly the bytes the
method's init needs and every planned buffer its planned size; the buffers belong to
the Method object. Outputs are copies, so they stay valid after the next execute.
"""

from __future__ import annotations

import logging
import os
import statistics
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from kiln.runtime.errors import KilnRuntimeError
from kiln.runtime.meta import MethodMeta

try:
    from kiln import _runtime
except ImportError as error:  # pragma: no cover - only without a built extension
    raise ImportError(
        "kiln._runtime (the C++ runtime extension) is not built; install the package with "
        "`pip install --no-build-isolation /path/to/kiln`"
    ) from error

try:
    import torch
except ImportError:  # torch is optional for running programs
    torch = None  # type: ignore[assignment]

logger = logging.getLogger("kiln.runtime")

#: Kernel scratch (temp allocator) size when the caller does not choose one.
DEFAULT_TEMP_BYTES = 1 << 20
# Serializes setting the XNNPACK thread count with the load that reads it.
_XNNPACK_THREADS_LOCK = threading.Lock()

# kiln::LogLevel (runtime/platform/log.h) -> logging levels.
_LOG_LEVELS = {0: logging.DEBUG, 1: logging.INFO, 2: logging.ERROR, 3: logging.CRITICAL}

T = TypeVar("T")


def _call(function: Callable[..., T], *args: Any) -> T:
    """Calls into the runtime and forwards the messages it logged to ``logger``."""
    try:
        return function(*args)
    finally:
        for level, message in _runtime.take_log():
            logger.log(_LOG_LEVELS.get(level, logging.INFO), "%s", message)


def _error_code(name: str) -> int:
    for code, error_name in _runtime.error_names().items():
        if error_name == name:
            return int(code)
    raise ValueError(f"unknown kiln::Error {name}")


def _wrapper_error(name: str, reason: str, context: str) -> KilnRuntimeError:
    """A KilnRuntimeError for a check the Python wrapper makes before calling the runtime."""
    return KilnRuntimeError(name, _error_code(name), [reason], context)


def _is_torch_tensor(value: object) -> bool:
    return torch is not None and isinstance(value, torch.Tensor)


#: Values that are one input by themselves, never a sequence of inputs.
_SINGLE_VALUES = (np.ndarray, np.generic, bool, int, float, complex)


def _input_list(inputs: object) -> list[Any]:
    """The method's inputs as a list, one value per input, in the method's order."""
    if _is_torch_tensor(inputs) or isinstance(inputs, _SINGLE_VALUES):
        return [inputs]  # one tensor is never meant as a sequence of rows
    if isinstance(inputs, Mapping):
        raise _wrapper_error(
            "InvalidType",
            "inputs given as a dict; the runtime takes them by position: a list of torch tensors or "
            "numpy arrays in the method's input order (method.meta.inputs)",
            "converting the inputs")
    if inputs is None or isinstance(inputs, (str, bytes, bytearray)) or not isinstance(inputs, Iterable):
        raise _wrapper_error(
            "InvalidType",
            f"inputs is {'None' if inputs is None else 'a ' + type(inputs).__name__}; give a list of torch "
            "tensors or numpy arrays, one per method input",
            "converting the inputs")
    return list(inputs)


def _native_byte_order(array: np.ndarray) -> np.ndarray:
    """The same values in the machine's byte order (the runtime reads native numbers)."""
    return array if array.dtype.isnative else array.astype(array.dtype.newbyteorder("="))


def _as_input_array(value: object, index: int) -> Any:
    """A C-contiguous CPU array (numpy, or a torch tensor passed through DLPack)."""
    if _is_torch_tensor(value):
        tensor = value.detach()  # type: ignore[union-attr]
        if tensor.device.type != "cpu":
            tensor = tensor.cpu()
        # resolve_conj/neg: lazily conjugated/negated views have no DLPack form.
        return tensor.resolve_conj().resolve_neg().contiguous()
    if isinstance(value, _SINGLE_VALUES):
        # np.asarray keeps a 0-d value 0-d (np.ascontiguousarray would make it [1]).
        array = np.asarray(value)
        # Objects, strings, dates: no buffer of numbers the runtime could take.
        if array.dtype.kind not in "biufc":
            raise _wrapper_error(
                "InputDtypeMismatch",
                f"input {index} has numpy dtype {array.dtype}, which is not a tensor dtype",
                "converting the inputs")
        array = _native_byte_order(array)
        return array if array.flags.c_contiguous else np.ascontiguousarray(array)
    raise _wrapper_error(
        "InvalidType",
        f"input {index} is a {type(value).__name__}; give torch tensors or numpy arrays",
        "converting the inputs")


#: The largest count the runtime's size_t arguments take from Python.
_MAX_COUNT = 2**63 - 1


def _count(value: object, name: str, minimum: int, context: str) -> int:
    """`value` as an int in [minimum, 2**63 - 1] (a named error otherwise)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise _wrapper_error("InvalidType", f"{name} must be an int, got {type(value).__name__} {value!r}", context)
    if not minimum <= int(value) <= _MAX_COUNT:
        raise _wrapper_error("InvalidArgument", f"{name} must be between {minimum} and {_MAX_COUNT}, got {int(value)}",
                             context)
    return int(value)


def _as_number(value: object, tag: str, index: int) -> bool | int | float:
    """A Python number for a non-tensor input (``tag`` "Int", "Double" or "Bool"):
    a Python or numpy scalar, or a one-element tensor or array, as its ``.item()``."""
    if isinstance(value, (np.ndarray, np.generic)) and value.size == 1:
        value = value.item()
    elif _is_torch_tensor(value) and value.numel() == 1:  # type: ignore[union-attr]
        value = value.item()  # type: ignore[union-attr]
    if tag == "Double" and isinstance(value, int) and not isinstance(value, bool):
        return float(value)  # an int where a float input is expected: the same number
    if isinstance(value, (bool, int, float)):
        return value
    raise _wrapper_error(
        "InvalidType", f"input {index} is a {tag} (a number); a {type(value).__name__} was given",
        "converting the inputs")


def _to_torch(value: object) -> object:
    if isinstance(value, np.ndarray):
        return torch.from_numpy(value)
    return value


@dataclass(frozen=True)
class TimedRun:
    """Outputs of the last of several runs, and each run's duration."""

    outputs: list[Any]
    times_ms: list[float]

    @property
    def median_ms(self) -> float:
        return statistics.median(self.times_ms)

    @property
    def min_ms(self) -> float:
        return min(self.times_ms)


class Method:
    """An initialized method, with the memory it runs in."""

    def __init__(self, handle: Any, program: Program) -> None:
        self._handle = handle
        self._program = program  # the method points into the program's bytes
        # "Tensor", or "Int"/"Double"/"Bool" for the non-tensor inputs.
        self._input_tags = [spec.tag for spec in self.meta.inputs]

    @property
    def name(self) -> str:
        return self._handle.name

    @property
    def meta(self) -> MethodMeta:
        """Inputs, outputs, planned buffers and allocator use (current, not cached)."""
        return MethodMeta.from_dict(_call(self._handle.meta))

    def _prepare(self, inputs: Sequence[Any] | Any) -> tuple[list[Any], bool]:
        values = _input_list(inputs)
        return_torch = any(_is_torch_tensor(v) for v in values)
        prepared = []
        for index, value in enumerate(values):
            tag = self._input_tags[index] if index < len(self._input_tags) else "Tensor"
            if tag in ("Int", "Double", "Bool"):
                prepared.append(_as_number(value, tag, index))
            else:
                prepared.append(_as_input_array(value, index))
        return prepared, return_torch

    @staticmethod
    def _finish(outputs: list[Any], return_torch: bool) -> list[Any]:
        return [_to_torch(o) for o in outputs] if return_torch else outputs

    def execute(self, inputs: Sequence[Any] | Any) -> list[Any]:
        """Runs the method. Inputs are tensors (torch or numpy) and, for non-tensor
        inputs, Python ints, floats or bools. Returns torch tensors when any input was
        a torch tensor, numpy arrays otherwise (non-tensor outputs as Python numbers).
        State (mutable buffers) carries over from one call to the next.

        A 0-d array or numpy scalar is a 0-d tensor (shape []); arrays in the other
        byte order are converted to the machine's.

        Raises KilnRuntimeError: InvalidType (inputs that are not a list of values,
        e.g. None or a dict), InputCountMismatch, InputDtypeMismatch,
        InputShapeMismatch (also for a tensor beyond its dynamic bound), InvalidType
        or InvalidArgument (a number the program fixed at export), or the error of a
        failing kernel.
        """
        arrays, return_torch = self._prepare(inputs)
        return self._finish(_call(self._handle.execute, arrays), return_torch)

    def execute_timed(self, inputs: Sequence[Any] | Any, iterations: int = 10) -> TimedRun:
        """Runs `iterations` (at least 1) times on the same inputs, timing each execute."""
        iterations = _count(iterations, "iterations", 1, "timing the method")
        arrays, return_torch = self._prepare(inputs)
        outputs, durations_ns = _call(self._handle.execute_timed, arrays, iterations)
        return TimedRun(self._finish(outputs, return_torch), [d / 1e6 for d in durations_ns])

    def npu_counters(self) -> dict[str, Any]:
        """What the NPU did in this method's latest execute, its Ethos-U delegate calls
        added up: the PMU's ``cycles``, ``active_cycles``, ``axi_read_beats`` and
        ``axi_write_beats`` as the register-level driver read them (the virtual NPU device's
        estimate), the virtual NPU's ``operations``, ``macs``, ``element_ops``,
        ``dma_transfers``, ``commands``, ``bytes_read``/``bytes_written`` per region (index 8:
        the NPU's internal memory), and ``delegate_calls``. All zero for a method without
        Ethos-U delegates."""
        return dict(_call(self._handle.npu_counters))

    def __repr__(self) -> str:
        return f"<kiln.runtime.Method {self.name!r}>"


class Program:
    """A loaded .pte program. Holds its bytes for as long as it or a method lives."""

    def __init__(self, handle: Any, source: str) -> None:
        self._handle = handle
        self.source = source

    @property
    def method_names(self) -> list[str]:
        return list(_call(self._handle.method_names))

    @property
    def file_size(self) -> int:
        return int(self._handle.file_size)

    @property
    def program_data_size(self) -> int:
        """Bytes of the flatbuffer part of the file (without segments)."""
        return int(self._handle.program_data_size)

    @property
    def load_ms(self) -> float:
        return self._handle.load_ns / 1e6

    def method_meta(self, name: str = "forward") -> MethodMeta:
        """What method `name` takes and needs, without initializing it."""
        return MethodMeta.from_dict(_call(self._handle.method_meta, name))

    def load_method(
        self,
        name: str = "forward",
        temp_bytes: int = DEFAULT_TEMP_BYTES,
        *,
        threads: int = 1,
        fill_planned: int | None = None,
    ) -> Method:
        """Initializes method `name` in memory sized from its MethodMeta; `temp_bytes`
        is the kernel scratch space (bytes, at least 0); `threads` the thread pool of its
        XNNPACK delegates (at least 1; 1 runs them on the calling thread);
        `fill_planned` a byte (0 to 255) written over the planned memory before the
        method initializes (None: left as allocated), so that outputs which change with
        it show a read of memory the program never wrote. Raises KilnRuntimeError (e.g.
        NotFound, OperatorMissing, InvalidArgument)."""
        if not isinstance(name, str):
            raise _wrapper_error("InvalidType", f"the method name must be a str, got {type(name).__name__}",
                                 "loading a method")
        context = f"loading method {name!r}"
        temp_bytes = _count(temp_bytes, "temp_bytes", 0, context)
        threads = _count(threads, "threads", 1, context)
        fill = -1 if fill_planned is None else _count(fill_planned, "fill_planned", 0, context)
        if fill > 255:
            raise _wrapper_error("InvalidArgument", f"fill_planned must be a byte (0 to 255), got {fill}", context)
        # The thread count is read when the delegates initialize, inside load_method.
        with _XNNPACK_THREADS_LOCK:
            _call(_runtime.set_xnnpack_threads, threads)
            handle = _call(self._handle.load_method, name, temp_bytes, fill)
        return Method(handle, self)

    def __repr__(self) -> str:
        return f"<kiln.runtime.Program {self.source} methods={self.method_names}>"


class Runtime:
    """Entry point: loads programs. The portable kernels are registered at import."""

    _instance: Runtime | None = None

    @classmethod
    def get(cls) -> Runtime:
        if cls._instance is None:
            cls._instance = cls()
        return cls._instance

    @property
    def operators(self) -> list[str]:
        """Operators with a registered kernel, e.g. "aten::add.out"."""
        return list(_runtime.registered_operators())

    def load_program(self, program: str | os.PathLike[str] | bytes | bytearray | memoryview) -> Program:
        """Loads a program from a file path or from its bytes (which are copied).

        Raises KilnRuntimeError naming the problem: AccessFailed, ProgramTruncated,
        ProgramBadIdentifier, ProgramBadHeader, InvalidProgram, ...
        """
        if isinstance(program, (bytes, bytearray, memoryview)):
            data = bytes(program)
            handle = _call(_runtime.Program.from_bytes, data)
            return Program(handle, f"<{len(data)} bytes>")
        path = Path(program)
        handle = _call(_runtime.Program.from_file, os.fspath(path))
        return Program(handle, str(path))
