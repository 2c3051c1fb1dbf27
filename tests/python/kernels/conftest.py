"""Harness of the kernel tests: export a tiny model with Kiln, run it on Kiln's
runtime, compare with eager PyTorch.

Tests get the harness through the ``check_op`` fixture (pytest runs in importlib
mode, so test files cannot import helpers from here)::

    def test_relu(check_op):
        check_op(lambda x: torch.relu(x), (torch.randn(3, 4),), ops=["aten::relu.out"])

    def test_relu_dtypes(check_op):  # variants in one program: one export, not one each
        check_op.many([(str(d), torch.relu, (torch.ones(3, dtype=d),)) for d in DTYPES],
                      ops=["aten::relu.out"])

Exports are in memory (Program.to_bytes() -> Runtime.load_program(bytes)). An export
costs ~0.2 s of CPU whatever the model size, so tests batch their variants with
``check_op.many``; its failure message names every variant that differs.

Comparison rule: floating outputs need ``max |kiln - torch| <= 1e-5 * max(1, max |torch|)``
over finite values, with NaN and +-inf in the same places; integer, bool and
index outputs, and every output of an ``exact=True`` check, must be bit-identical.

Every exported check also runs the program with bounded dynamic shapes: each input
and intermediate tensor declared one larger in every dimension (``DYNAMIC_BOUND``,
memory planned for that bound) while the inputs keep their sizes. Each kernel then
gets outputs larger than its result and must resize them (``resize_output``); the
outputs must equal the static program's bit for bit.

Operators Kiln's exporter never emits (data-dependent output shapes, in-place
updates, ExecuTorch's own copies) are checked with ``check_op.call``: a program of
that one kernel call, built directly from Kiln's method graph classes, whose out
tensors take the shapes of eager PyTorch's results::

    check_op.call("aten::nonzero.out", [x], [torch.nonzero(x)])

Every operator the programs call is recorded for the session; test_op_coverage.py
(moved to the end of the run) checks that together they cover the portable kernel
table.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

import pytest
import torch

import kiln
from kiln.export import lower_edge_program, program_from_methods, to_edge_program
from kiln.memory import plan_memory
from kiln.ir import method_graph as mg
from kiln.runtime import Runtime
from kiln.serialize.scalar_types import scalar_type_code

KERNEL_TEST_DIR = Path(__file__).resolve().parent
COVERAGE_FILE = "test_op_coverage.py"

# Relative float tolerance: error <= FLOAT_TOLERANCE * max(1, max |reference|).
FLOAT_TOLERANCE = 1e-5


class Lambda(torch.nn.Module):
    """Wraps a function of tensors so that torch.export can trace it."""

    def __init__(self, function: Callable[..., Any]) -> None:
        super().__init__()
        self.function = function

    def forward(self, *inputs: torch.Tensor) -> Any:
        return self.function(*inputs)


class _Cases(torch.nn.Module):
    """Several functions side by side: inputs are split among them, outputs concatenated.
    Functions that are modules become submodules, so their parameters are exported."""

    def __init__(self, functions: Sequence[Callable[..., Any]], input_counts: Sequence[int]) -> None:
        super().__init__()
        self.parts = torch.nn.ModuleList(
            f if isinstance(f, torch.nn.Module) else Lambda(f) for f in functions
        )
        self.input_counts = list(input_counts)

    def forward(self, *inputs: torch.Tensor) -> tuple[Any, ...]:
        results: list[Any] = []
        start = 0
        for part, count in zip(self.parts, self.input_counts):
            results.append(part(*inputs[start : start + count]))
            start += count
        return tuple(results)


@dataclass
class OperatorLog:
    """Operators called by the programs of this session, and by which tests: exported
    ones (``users``) and programs built call by call (``built``, check_op.call)."""

    users: dict[str, set[str]] = field(default_factory=dict)
    built: dict[str, set[str]] = field(default_factory=dict)

    def record(self, test_id: str, operators: Iterable[str], *, exported: bool = True) -> None:
        log = self.users if exported else self.built
        for name in operators:
            log.setdefault(name, set()).add(test_id)

    @property
    def operators(self) -> set[str]:
        return set(self.users)


@dataclass(frozen=True)
class TensorListArg:
    """A Tensor[] (``optional=False``) or Tensor?[] argument of check_op.call."""

    items: tuple[Optional[torch.Tensor], ...]
    optional: bool = False


class _CallBuilder:
    """Turns check_op.call's Python arguments into a one-call MethodGraph."""

    def __init__(self) -> None:
        self.inputs: list[mg.TensorValue] = []
        self.feeds: list[torch.Tensor] = []

    def tensor(self, value: torch.Tensor, role: mg.TensorRole, name: str) -> mg.TensorValue:
        tensor = mg.TensorValue(name, scalar_type_code(value.dtype), value.element_size(), tuple(value.shape), role)
        if role is mg.TensorRole.INPUT:
            self.inputs.append(tensor)
            self.feeds.append(value)
        return tensor

    def argument(self, value: Any) -> mg.Argument:
        if isinstance(value, torch.Tensor):
            return self.tensor(value, mg.TensorRole.INPUT, f"input{len(self.inputs)}")
        if isinstance(value, TensorListArg):
            items = tuple(None if t is None else self.argument(t) for t in value.items)
            return mg.OptionalTensorList(items) if value.optional else mg.TensorList(items)
        if value is None:
            return mg.Null()
        if isinstance(value, bool):
            return mg.Bool(value)
        if isinstance(value, int):
            return mg.Int(value)
        if isinstance(value, float):
            return mg.Double(value)
        if isinstance(value, (list, tuple)) and all(isinstance(v, bool) for v in value) and value:
            return mg.BoolList(tuple(value))
        if isinstance(value, (list, tuple)) and all(isinstance(v, int) for v in value):
            return mg.IntList(tuple(value))
        if isinstance(value, (list, tuple)) and all(isinstance(v, float) for v in value):
            return mg.DoubleList(tuple(value))
        raise TypeError(f"check_op.call cannot pass {value!r}")


def _flatten(value: Any) -> list[Any]:
    if isinstance(value, (list, tuple)):
        return [item for element in value for item in _flatten(element)]
    return [value]


def compare(got: torch.Tensor, want: torch.Tensor, *, exact: bool, what: str) -> None:
    """Raises AssertionError unless `got` matches the eager reference `want` (rule in
    the module docstring)."""

    def fail(why: str) -> None:
        raise AssertionError(f"{what}: {why}\n  kiln  {got}\n  eager {want}")

    if not isinstance(got, torch.Tensor):
        raise AssertionError(f"{what}: kiln returned {type(got).__name__}, not a tensor")
    if got.dtype != want.dtype:
        fail(f"dtype {got.dtype}, eager {want.dtype}")
    if tuple(got.shape) != tuple(want.shape):
        fail(f"shape {list(got.shape)}, eager {list(want.shape)}")
    if not want.dtype.is_floating_point:
        if not torch.equal(got, want):
            fail("values differ")
        return
    got64, want64 = got.double(), want.double()
    nan_want = torch.isnan(want64)
    if not torch.equal(torch.isnan(got64), nan_want):
        fail("NaN at different places")
    inf_want = torch.isinf(want64)
    if not torch.equal(torch.isinf(got64), inf_want) or not torch.equal(got64[inf_want], want64[inf_want]):
        fail("infinities differ")
    finite = ~(nan_want | inf_want)
    if not bool(finite.any()):
        return
    error = float((got64[finite] - want64[finite]).abs().max())
    if exact:
        if error != 0.0:
            fail(f"not bit-exact (max abs error {error:.3g})")
        return
    bound = FLOAT_TOLERANCE * max(1.0, float(want64[finite].abs().max()))
    if error > bound:
        fail(f"max abs error {error:.3g} > {bound:.3g}")


def edge_program(
    module: torch.nn.Module, inputs: tuple[torch.Tensor, ...], preserve: Sequence[Any] = ()
) -> torch.export.ExportedProgram:
    """kiln.export's first stage, with `preserve` left out of the core-ATen
    decompositions (for kernels of operators torch decomposes by default, e.g. hardswish)."""
    if not preserve:
        return to_edge_program(module, inputs)
    exported = torch.export.export(module, inputs, strict=False)
    table = torch.export.default_decompositions()
    for operator in preserve:
        table.pop(operator, None)
    return exported.run_decompositions(table)


def with_bounds_above_shapes(method: mg.MethodGraph) -> mg.MethodGraph:
    """Declares every input and intermediate tensor one larger in each dimension, as a
    bounded dynamic shape, and plans memory for those bounds: the same computation on
    tensors smaller than their bounds. 0-dim and empty tensors stay as they are (an
    empty out may be a placeholder the kernel leaves alone, e.g. a masked-out gradient)."""
    for tensor in method.tensors():
        if tensor.role in (mg.TensorRole.INPUT, mg.TensorRole.ACTIVATION) and tensor.shape and all(tensor.shape):
            tensor.shape = tuple(size + 1 for size in tensor.shape)
            tensor.dynamic = True
    plan_memory(method)
    return method


def _same_bits(got: torch.Tensor, want: torch.Tensor) -> bool:
    return (
        got.dtype == want.dtype
        and tuple(got.shape) == tuple(want.shape)
        and got.contiguous().numpy().tobytes() == want.contiguous().numpy().tobytes()
    )


def _one_call_method(
    operator: str, args: Sequence[Any], expected: Sequence[torch.Tensor], out_list: bool, returns: Optional[int],
    in_place: Optional[int], mutated: Sequence[int],
) -> tuple[mg.MethodGraph, list[torch.Tensor]]:
    """check_op.call's one-call method (not yet planned) and the tensors it takes as inputs."""
    builder = _CallBuilder()
    call_args = [builder.argument(a) for a in args]
    if in_place is not None:
        target = call_args[in_place]
        outs: list[mg.TensorValue] = [target]
        call_args.append(target)
    else:
        outs = [builder.tensor(e, mg.TensorRole.ACTIVATION, f"out{i}") for i, e in enumerate(expected[: len(expected) - len(mutated)])]
        call_args += [mg.TensorList(tuple(outs))] if out_list else outs
        count = (0 if out_list else len(outs)) if returns is None else returns
        if count == 1:
            call_args.append(outs[0])
        elif count > 1:
            call_args.append(mg.TensorList(tuple(outs)))
    returned = outs + [call_args[i] for i in mutated]
    for tensor in returned:
        tensor.is_output = True
    method = mg.MethodGraph("forward", builder.inputs, returned, [mg.KernelCall(operator, call_args, outs)])
    return method, builder.feeds


def _check_same_as_static(bounded: Sequence[torch.Tensor], static: Sequence[torch.Tensor], *, bits: bool) -> None:
    """Fails unless the program run with tensors below their dynamic bounds gave the
    static program's outputs (bit for bit, or shapes and dtypes only with bits=False)."""

    def same(a: torch.Tensor, b: torch.Tensor) -> bool:
        if not bits:
            return a.dtype == b.dtype and tuple(a.shape) == tuple(b.shape)
        return _same_bits(a, b)

    differ = [i for i, (a, b) in enumerate(zip(bounded, static)) if not same(a, b)]
    assert len(bounded) == len(static) and not differ, (
        f"outputs {differ} differ when the tensors are smaller than their dynamic bounds "
        f"(a kernel that does not resize its output?): {[bounded[i] for i in differ]} "
        f"vs {[static[i] for i in differ]}"
    )


@pytest.fixture(scope="session")
def operator_log() -> OperatorLog:
    return OperatorLog()


class OpChecker:
    """The ``check_op`` fixture: export, run, compare (see the module docstring)."""

    def __init__(self, log: OperatorLog, test_id: str) -> None:
        self._log = log
        self._test_id = test_id

    def __call__(
        self,
        model: torch.nn.Module | Callable[..., Any],
        inputs: Sequence[torch.Tensor],
        *,
        ops: Iterable[str],
        exact: bool = False,
        preserve: Sequence[Any] = (),
    ) -> list[torch.Tensor]:
        """Checks one model. model: an nn.Module or a function of the inputs. ops:
        out-variant operators the program must call (so the test exercises the kernel
        it is about). exact: compare floats bit for bit. preserve: OpOverloads to keep
        out of the core-ATen decompositions. Returns Kiln's outputs."""
        module = model if isinstance(model, torch.nn.Module) else Lambda(model)
        module = module.eval()
        inputs = tuple(inputs)
        with torch.no_grad():
            reference = _flatten(module(*(t.clone() for t in inputs)))
        outputs = self._export_and_run(module, inputs, ops, preserve)
        assert len(outputs) == len(reference), f"{len(outputs)} outputs, eager has {len(reference)}"
        for index, (got, want) in enumerate(zip(outputs, reference)):
            compare(got, want, exact=exact, what=f"output {index}")
        return outputs

    def many(
        self,
        cases: Sequence[tuple[str, Callable[..., Any], Sequence[torch.Tensor]]],
        *,
        ops: Iterable[str],
        exact: bool = False,
        preserve: Sequence[Any] = (),
    ) -> None:
        """Checks several (label, function, inputs) cases compiled into one program:
        one export instead of one per variant keeps the suite fast. Each case is
        compared on its own and failures name its label."""
        module = _Cases([function for _, function, _ in cases], [len(inputs) for _, _, inputs in cases]).eval()
        flat_inputs = tuple(t for _, _, inputs in cases for t in inputs)
        labelled_reference: list[tuple[str, torch.Tensor]] = []
        with torch.no_grad():
            for label, function, inputs in cases:
                outs = _flatten(function(*(t.clone() for t in inputs)))
                labelled_reference += [(label if len(outs) == 1 else f"{label}[{i}]", o) for i, o in enumerate(outs)]
        outputs = self._export_and_run(module, flat_inputs, ops, preserve)
        assert len(outputs) == len(labelled_reference), f"{len(outputs)} outputs, eager has {len(labelled_reference)}"
        failures: list[str] = []
        for got, (label, want) in zip(outputs, labelled_reference):
            try:
                compare(got, want, exact=exact, what=label)
            except AssertionError as error:
                failures.append(str(error))
        if failures:  # every failing case at once: one wrong variant does not hide the others
            count = f"{len(failures)} of {len(labelled_reference)} cases differ from eager"
            raise AssertionError(count + ":\n" + "\n".join(failures))

    def run(
        self, model: torch.nn.Module | Callable[..., Any], inputs: Sequence[torch.Tensor], *, ops: Iterable[str],
        preserve: Sequence[Any] = (),
    ) -> list[torch.Tensor]:
        """Exports and runs `model` (in the mode it is in) without comparing: for results
        eager PyTorch cannot predict (random numbers); the run below the dynamic bounds
        must give the same shapes and dtypes. Returns Kiln's outputs."""
        module = model if isinstance(model, torch.nn.Module) else Lambda(model)
        return self._export_and_run(module, tuple(inputs), ops, preserve, bits=False)

    @staticmethod
    def tensor_list(items: Sequence[Optional[torch.Tensor]], *, optional: bool = False) -> TensorListArg:
        """A Tensor[] argument for call() (Tensor?[] with optional=True; None items allowed)."""
        return TensorListArg(tuple(items), optional)

    def call(
        self,
        operator: str,
        args: Sequence[Any],
        expected: Sequence[torch.Tensor],
        *,
        out_list: bool = False,
        returns: Optional[int] = None,
        in_place: Optional[int] = None,
        mutated: Sequence[int] = (),
        exact: bool = False,
        check_values: bool = True,
    ) -> list[torch.Tensor]:
        """Runs one call of `operator` and compares its outs with `expected` (eager
        PyTorch's results, whose shapes the out tensors take). args: the operator's
        arguments before its outs, in schema order (tensors become method inputs;
        TensorListArg for lists of tensors; ints, floats, bools, None and lists as
        is). out_list: the outs are one Tensor[] argument. returns: how many values
        the schema returns (default: one per out, none for an out list). in_place:
        index of the argument the operator updates and returns (copy_, index_put_),
        which then is the only output. mutated: indices of tensor arguments the
        operator also updates (batch norm's running stats); their final values follow
        the outs in `expected`. check_values=False compares shapes and dtypes only
        (empty). Returns Kiln's outputs."""
        def build() -> tuple[mg.MethodGraph, list[torch.Tensor]]:
            return _one_call_method(operator, args, expected, out_list, returns, in_place, mutated)

        method, feeds = build()
        plan_memory(method, plan_inputs=True, plan_outputs=True)
        program = program_from_methods([method])
        self._log.record(self._test_id, program.operators, exported=False)
        outputs = self._run(program, feeds)
        assert len(outputs) == len(expected), f"{len(outputs)} outputs, eager has {len(expected)}"
        for index, (got, want) in enumerate(zip(outputs, expected)):
            what = f"{operator} output {index}"
            if check_values:
                compare(got, want, exact=exact, what=what)
            else:
                assert (got.dtype, tuple(got.shape)) == (want.dtype, tuple(want.shape)), f"{what}: {got.dtype} {list(got.shape)}"
        bounded_method, feeds = build()
        bounded = program_from_methods([with_bounds_above_shapes(bounded_method)])
        _check_same_as_static(self._run(bounded, feeds), outputs, bits=check_values)
        return outputs

    def _export_and_run(
        self, module: torch.nn.Module, inputs: tuple[torch.Tensor, ...], ops: Iterable[str], preserve: Sequence[Any],
        *, bits: bool = True,
    ) -> list[torch.Tensor]:
        """Kiln's outputs; fails unless the bounded-dynamic variant gives the same bits
        (the same shapes and dtypes with bits=False: random or unset values)."""
        edge = edge_program(module, inputs, preserve)
        program = program_from_methods([lower_edge_program(edge)])
        self._log.record(self._test_id, program.operators)
        missing = [name for name in ops if name not in program.operators]
        assert not missing, f"program does not call {missing}; it calls {program.operators}"
        outputs = self._run(program, inputs)
        bounded = program_from_methods([with_bounds_above_shapes(lower_edge_program(edge))])
        _check_same_as_static(self._run(bounded, inputs), outputs, bits=bits)
        return outputs

    @staticmethod
    def _run(program: kiln.Program, inputs: Sequence[torch.Tensor]) -> list[torch.Tensor]:
        method = Runtime.get().load_program(program.to_bytes()).load_method("forward")
        # Without inputs there is no torch tensor to go by: the runtime answers in numpy.
        return [o if isinstance(o, torch.Tensor) else torch.from_numpy(o)
                for o in method.execute([t.clone() for t in inputs])]


@pytest.fixture
def check_op(operator_log: OperatorLog, request: pytest.FixtureRequest) -> OpChecker:
    """check_op(model, inputs, ops=[...]) or check_op.many([(label, fn, inputs), ...], ops=[...])."""
    return OpChecker(operator_log, request.node.nodeid)


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    """Runs test_op_coverage.py after every op test, whose programs it inspects."""
    last = [item for item in items if item.path.name == COVERAGE_FILE]
    if last:
        items[:] = [item for item in items if item.path.name != COVERAGE_FILE] + last


_DESELECTED_OP_TESTS = pytest.StashKey[int]()


def pytest_deselected(items: list[pytest.Item]) -> None:
    """Counts deselected op tests (-k, -m, --deselect): the coverage check needs them all."""
    op_tests = [item for item in items if item.path.parent == KERNEL_TEST_DIR and item.path.name != COVERAGE_FILE]
    if op_tests:
        stash = op_tests[0].config.stash
        stash[_DESELECTED_OP_TESTS] = stash.get(_DESELECTED_OP_TESTS, 0) + len(op_tests)


@pytest.fixture
def every_op_test_selected(request: pytest.FixtureRequest) -> None:
    """Skips unless this session runs every test of every test_op_*.py file."""
    op_files = {p.name for p in KERNEL_TEST_DIR.glob("test_op_*.py")} - {COVERAGE_FILE}
    collected = {item.path.name for item in request.session.items}
    not_collected = sorted(op_files - collected)
    deselected = request.config.stash.get(_DESELECTED_OP_TESTS, 0)
    if not_collected or deselected:
        pytest.skip(
            f"needs every op test in this session ({len(not_collected)} op test file(s) not "
            f"collected, {deselected} op test(s) deselected): run all of {KERNEL_TEST_DIR}"
        )


@pytest.fixture(autouse=True)
def _seeded() -> None:
    """Every test draws the same inputs on every run."""
    torch.manual_seed(0)
