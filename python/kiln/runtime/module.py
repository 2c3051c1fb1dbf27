"""``kiln.runtime.Module``: a program and its methods behind one object.

    from kiln.runtime import Module
    module = Module("model.pte")           # or Module(pte_bytes)
    (y,) = module.forward(x)               # loads "forward" on first use
    module.run("reset")                    # any method by name
    module.method_names, module.meta("forward")

The lower-level API (:class:`Runtime` -> :class:`Program` -> :class:`Method`) is
underneath: a Module loads each method the first time it is run and keeps it, so a
method's state (mutable buffers) carries over from call to call until
:meth:`Module.reset` loads it again from the program's initial values.
"""

from __future__ import annotations

import os
from typing import Any, Optional, Union

from kiln.runtime.errors import KilnRuntimeError
from kiln.runtime.executor import DEFAULT_TEMP_BYTES, Method, Program, Runtime, _error_code
from kiln.runtime.meta import MethodMeta

ProgramSource = Union[str, "os.PathLike[str]", bytes, bytearray, memoryview]


class Module:
    """A loaded program whose methods are called by name.

    Args:
        program: a ``.pte`` file's path, or its bytes.
        temp_bytes: kernel scratch (temp allocator) of each method.
        threads: thread pool size of the methods' XNNPACK delegates (1: the calling thread).

    Raises:
        KilnRuntimeError: the program does not load (AccessFailed, ProgramTruncated,
            InvalidProgram, ...).
    """

    def __init__(self, program: ProgramSource, *, temp_bytes: int = DEFAULT_TEMP_BYTES, threads: int = 1) -> None:
        self._program: Program = Runtime.get().load_program(program)
        self._temp_bytes = temp_bytes
        self._threads = threads
        self._methods: dict[str, Method] = {}

    @property
    def program(self) -> Program:
        """The underlying :class:`kiln.runtime.Program`."""
        return self._program

    @property
    def method_names(self) -> list[str]:
        """The program's methods, in the program's order."""
        return self._program.method_names

    def meta(self, name: str = "forward") -> MethodMeta:
        """Inputs, outputs and memory of method ``name``: with allocator use once it is
        loaded, read from the program (without loading it) before."""
        self._check_name(name)
        loaded = self._methods.get(name)
        return loaded.meta if loaded is not None else self._program.method_meta(name)

    def load_method(self, name: str = "forward") -> Method:
        """Method ``name``, loaded on first use and kept (with its state)."""
        self._check_name(name)
        method = self._methods.get(name)
        if method is None:
            method = self._program.load_method(name, temp_bytes=self._temp_bytes, threads=self._threads)
            self._methods[name] = method
        return method

    def is_loaded(self, name: str) -> bool:
        return name in self._methods

    def run(self, name: str, *inputs: Any) -> list[Any]:
        """Runs method ``name`` on ``inputs`` (tensors, and Python numbers for
        non-tensor inputs); returns its outputs (see :meth:`Method.execute`)."""
        return self.load_method(name).execute(list(inputs))

    def forward(self, *inputs: Any) -> list[Any]:
        """``run("forward", *inputs)``."""
        return self.run("forward", *inputs)

    __call__ = forward

    def reset(self, name: Optional[str] = None) -> None:
        """Loads method ``name`` (every loaded method when None) again: its mutable
        buffers get back the initial values stored in the program."""
        names = list(self._methods) if name is None else [name]
        for method_name in names:
            self._check_name(method_name)
            self._methods.pop(method_name, None)
            self.load_method(method_name)

    def _check_name(self, name: str) -> None:
        names = self.method_names
        if name not in names:
            message = f"the program has no method named {name!r}; its methods: {', '.join(map(repr, names))}"
            raise KilnRuntimeError("NotFound", _error_code("NotFound"), [message], f"looking up method {name!r}")

    def __repr__(self) -> str:
        return f"<kiln.runtime.Module {self._program.source} methods={self.method_names}>"
