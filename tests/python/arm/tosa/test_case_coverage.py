"""Every operator the partitioner delegates on some Ethos-U family, as the TOSA lowering
accepts it, has a case in qdq_cases.py (which test_ops_reference.py runs on the TOSA reference
model and tests/python/arm/vnpu runs on the virtual NPU).

tests/python/arm/vnpu/test_lowered_ops.py keeps the same promise for the U55 table; this one
holds it for every family's table, U85's included.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

import pytest

from kiln.passes.delegation import operator_name

FAMILIES = ("ethos-u55", "ethos-u65", "ethos-u85")

# Delegable on paper but never found in a graph the lowering sees, with the reason.
NOT_IN_ANY_GRAPH = {
    "aten::alias": "torch.export's core-ATen decomposition removes it",
    "aten::squeeze.dim": "core ATen turns it into squeeze.dims",
    "aten::hardswish": "core ATen decomposes it; the 'hardswish' case lowers the pieces to one TABLE",
    "aten::hardsigmoid": "core ATen decomposes it; the 'hardsigmoid' case lowers the pieces to one TABLE",
}


@pytest.fixture(scope="module")
def covered(qdq: ModuleType, lowered_case: Any) -> set[str]:
    """Core-ATen operators of all the cases' graphs."""
    names: set[str] = set()
    for name in qdq.CASES:
        _, _, graph, _ = lowered_case(name)
        names |= {operator_name(n) for n in graph.graph.nodes if n.op == "call_function"}
    return names


@pytest.mark.parametrize("family", FAMILIES)
def test_every_delegated_operator_has_a_case(covered: set[str], family: str) -> None:
    from kiln.backends.arm.constraints import OPERATORS
    from kiln.backends.arm.tosa.ops import load_all

    lowerable = {operator_name_of(target) for target in load_all()}
    delegated = {name for name, support in OPERATORS.items() if family in support.families and name in lowerable}
    missing = sorted(delegated - covered - set(NOT_IN_ANY_GRAPH))
    assert not missing, f"{family}: operators the partitioner delegates with no case in qdq_cases.py: {missing}"
    stale = sorted(set(NOT_IN_ANY_GRAPH) & covered)
    assert not stale, f"NOT_IN_ANY_GRAPH lists operators a case does have: {stale}"


def test_u85_only_cases_use_an_operator_u55_does_not_run(qdq: ModuleType, lowered_case: Any) -> None:
    """A case marked U85-only really needs U85: Vela refuses its graph for ethos-u55-128."""
    from kiln.backends.arm import EthosUCompileSpec, VelaError
    from kiln.backends.arm.vela import compile_tosa

    for name in sorted(qdq.U85_ONLY):
        _, _, _, subgraph = lowered_case(name)
        with pytest.raises(VelaError):
            compile_tosa(subgraph.flatbuffer, EthosUCompileSpec("ethos-u55-128"), name=name)
        assert compile_tosa(subgraph.flatbuffer, EthosUCompileSpec("ethos-u85-256"), name=name).total_cycles > 0


def operator_name_of(target: Any) -> str:
    schema = getattr(target, "_schema", None)
    if schema is None:
        return str(target)
    overload = target._overloadname
    return schema.name + ("" if overload == "default" else f".{overload}")
