"""Every operator the Kiln partitioner delegates, as Kiln lowers it: the q/dq cases of
tests/python/arm/tosa (one tiny quantized module per operator and variant) lowered to
TOSA by Kiln for the target's family, compiled by Vela for every Ethos-U55/U65 and
ethos-u85-128/256/512 configuration (the cases only Vela's Ethos-U85 compiles, for those),
run on the virtual NPU: equal to the TOSA reference model on the same graph, bit for bit.

The hand-built graphs of the other files here pin down edge cases of single NPU
operations; these cover the command sequences Vela makes of Kiln's own graphs (PAD as
copies, RESIZE as upscaling, MATMUL as per-row MUL + REDUCE_SUM, TRANSPOSE, grouped
convolution as SLICE/CONV2D/CONCAT, ...). A coverage test keeps the case list in step
with the partitioner's operator table.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

import numpy as np
import pytest

from .conftest import U85_TARGETS  # type: ignore[import-not-found]

# Delegable on paper but never found in a graph the lowering sees, with the reason.
NOT_IN_ANY_GRAPH = {
    "aten::alias": "torch.export's core-ATen decomposition removes it",
    "aten::squeeze.dim": "core ATen turns it into squeeze.dims",
    "aten::hardswish": "core ATen decomposes it; the 'hardswish' case lowers the pieces to one TABLE",
    "aten::hardsigmoid": "core ATen decomposes it; the 'hardsigmoid' case lowers the pieces to one TABLE",
}


@pytest.fixture(scope="module")
def lowered(qdq: ModuleType) -> Any:
    """(case name, target) -> (TosaSubgraph, core-ATen operator names of its graph, the
    case's integer inputs), lowered once per case and family (the lowering may differ
    between Ethos-U55/U65 and U85)."""
    from kiln.backends.arm import EthosUCompileSpec
    from kiln.backends.arm.tosa import lower_to_tosa

    graphs: dict[str, Any] = {}
    cache: dict[tuple[str, str], Any] = {}

    def get(name: str, target: str = "ethos-u55-128") -> Any:
        family = "ethos-u85" if target.startswith("ethos-u85") else "ethos-u55"
        if name not in graphs:
            case, floats = qdq.CASES[name]()
            graphs[name] = qdq.export_graph(case, case.calibrate(*floats)), floats
        if (name, family) not in cache:
            graph, examples = graphs[name]
            indices = [t.numpy() for t in examples if not t.is_floating_point()]
            operators = {_operator_name(n.target) for n in graph.graph.nodes if n.op == "call_function"}
            spec = EthosUCompileSpec(f"{family}-128")
            cache[name, family] = (lower_to_tosa(graph, spec, name=name), operators, indices)
        return cache[name, family]

    return get


def _operator_name(target: Any) -> str:
    schema = getattr(target, "_schema", None)
    if schema is None:
        return str(target)
    overload = target._overloadname
    return schema.name + ("" if overload == "default" else f".{overload}")


def _case_names(family: str = "ethos-u55") -> list[str]:
    """The case names a target family runs, at collection time (parametrize cannot wait for
    the ``qdq`` fixture); loads qdq_cases.py under the name tests/python/arm/conftest.py
    uses, so it loads once."""
    import importlib.util
    import sys
    from pathlib import Path

    name = "kiln_test_arm_qdq_cases"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, Path(__file__).parents[1] / "tosa" / "qdq_cases.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)  # type: ignore[union-attr]
    return sys.modules[name].names_for(family)


#: The cases Vela compiles for Ethos-U85 only (bilinear RESIZE beyond 2x, GATHER, ...).
U85_ONLY_CASES = sorted(set(_case_names("ethos-u85")) - set(_case_names("ethos-u55")))


@pytest.mark.parametrize("name", _case_names())
def test_lowered_case_is_bit_exact(lowered: Any, vnpu_tools: Any, model_target: str, name: str) -> None:
    _assert_case_bit_exact(lowered, vnpu_tools, model_target, name)


@pytest.mark.parametrize("model_target", U85_TARGETS)
@pytest.mark.parametrize("name", U85_ONLY_CASES)
def test_u85_only_case_is_bit_exact(lowered: Any, vnpu_tools: Any, model_target: str, name: str) -> None:
    _assert_case_bit_exact(lowered, vnpu_tools, model_target, name)


def _assert_case_bit_exact(lowered: Any, vnpu_tools: Any, target: str, name: str) -> None:
    subgraph, _, indices = lowered(name, target)
    rng = np.random.default_rng(7)
    # Full-range random codes in the TOSA (NHWC) layout: saturation and both extremes occur.
    # int32 inputs are indices (GATHER): the case's own, which stay inside the table.
    given = iter(indices)
    inputs = [next(given).reshape(io.tosa_shape) if io.dtype == "int32"
              else rng.integers(-128, 128, size=io.tosa_shape).astype(np.int8) for io in subgraph.inputs]
    expected = vnpu_tools.reference(subgraph.flatbuffer, inputs)
    actual, counters = vnpu_tools.run_on_vnpu(subgraph.flatbuffer, inputs, target)
    # Something ran: an NPU operation, or a DMA transfer (Vela makes a GATHER from a
    # constant table one index-driven DMA on Ethos-U85).
    assert counters["operations"] + counters["dma_transfers"] >= 1
    # The per-operation records (what benchmarks/vnpu.py sets against Vela's per-layer figures)
    # add up to the totals; a record's "macs" are element operations for non-MAC operations.
    assert sum(op["macs"] for op in counters["ops"]) == counters["macs"] + counters["element_ops"]
    assert len(counters["ops"]) >= counters["operations"]
    assert len(actual) == len(expected)
    for k, (a, e) in enumerate(zip(actual, expected)):
        a = a.reshape(e.shape)
        differ = int(np.count_nonzero(a != e))
        assert differ == 0, (f"{name} on {target}, output {k}: {differ} of {e.size} elements differ from "
                             f"the TOSA reference ({subgraph.summary()})")


@pytest.mark.parametrize("family", ["ethos-u55", "ethos-u85"])
def test_every_delegated_operator_has_a_case(lowered: Any, family: str) -> None:
    from kiln.backends.arm.constraints import OPERATORS
    from kiln.backends.arm.tosa.ops import load_all

    lowerable = {_operator_name(target) for target in load_all()}
    delegated = {name for name, support in OPERATORS.items() if family in support.families and name in lowerable}
    covered = set().union(*(lowered(name, f"{family}-128")[1] for name in _case_names(family)))
    missing = sorted(delegated - covered - set(NOT_IN_ANY_GRAPH))
    assert not missing, f"operators the partitioner delegates with no case in tosa/qdq_cases.py: {missing}"
    stale = sorted(set(NOT_IN_ANY_GRAPH) & covered)
    assert not stale, f"NOT_IN_ANY_GRAPH lists operators a case does have: {stale}"
