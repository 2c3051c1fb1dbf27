"""The kernel tables, the runtime's registry, the AOT op table and the op tests agree:

1. the runtime registers exactly the operators of the kernel libraries' tables
   (kernels/<library>/op_table.yaml for each of KERNEL_LIBRARIES; the registration is
   generated from them), whose kernel functions exist as named;
2. the programs exported by the op tests (test_op_*.py, run before this file) call
   every operator of the portable table, except the ones only ExecuTorch's exporter
   emits and the ones the op tests build call by call (check_op.call) because Kiln's
   exporter cannot emit them (the Cortex-M library's operators are tested with
   ExecuTorch's programs in tests/python/cortex_m);
3. every out variant in kiln.passes.aten_out_variants.OUT_VARIANTS has a kernel or is listed
   as AOT-only below, and kiln.export refuses the AOT-only ones by node and operator.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import torch
import yaml

import kiln
import kiln.backends.cortex_m.ops  # noqa: F401  (registers the cortex_m:: operators in OUT_VARIANTS)
from kiln.passes import out_variants
from kiln.passes.aten_out_variants import OUT_VARIANTS
from kiln.passes.kernel_availability import KERNEL_LIBRARIES, kernel_operators, op_table_text
from kiln.runtime import Runtime

REPO = Path(__file__).resolve().parents[3]

# Operators Kiln's exporter never emits; ExecuTorch's does. Programs that call them
# come from ExecuTorch's exporter: test them in tests/python/interop (which needs the
# ExecuTorch venv), not here. (At the time of writing no test there checks them
# operator by operator.)
EXECUTORCH_ONLY: dict[str, str] = {
    "executorch_prim::et_view.default": "ExecuTorch's memory-planned views",
    "aten::alias_copy.out": "Kiln elides aten.alias (an identity)",
    "dim_order_ops::_to_dim_order_copy.out": "ExecuTorch's replacement of _to_copy",
    "dim_order_ops::_clone_dim_order.out": "ExecuTorch's replacement of clone",
    # Sizes read and computed at run time: programs with dynamic shapes, which these op
    # tests (static shapes) do not export; tests/python/runtime/test_dynamic_shapes.py
    # runs them in Kiln's programs, test_executorch_parity.py in ExecuTorch's.
    "executorch_prim::add.Scalar": "symbolic size arithmetic",
    "executorch_prim::sub.Scalar": "symbolic size arithmetic",
    "executorch_prim::mul.Scalar": "symbolic size arithmetic",
    "executorch_prim::floordiv.Scalar": "symbolic size arithmetic",
    "aten::sym_size.int": "symbolic sizes",
    "aten::sym_numel": "symbolic sizes",
}

# Operators Kiln's exporter cannot emit, which the op tests check with programs built
# call by call (check_op.call), each compared with eager PyTorch.
BUILT_CALL_BY_CALL: dict[str, str] = {
    "aten::nonzero.out": "data-dependent output shape",
    "aten::masked_select.out": "data-dependent output shape",
    "aten::repeat_interleave.Tensor_out": "data-dependent output shape",
    "aten::copy_": "in-place update of an input (ExecuTorch's buffer updates)",
    "aten::index_put_": "in-place update of an input (ExecuTorch's cache updates)",
    "aten::_native_batch_norm_legit.out": "training mode updates its running-stat buffers in place",
    "aten::narrow_copy.out": "torch.export turns narrow into slice",
    "aten::lift_fresh_copy.out": "torch.export folds it into constants",
    "et_copy::_h2d_copy.out": "ExecuTorch's device copies",
    "et_copy::_d2h_copy.out": "ExecuTorch's device copies",
    "dim_order_ops::_empty_dim_order.out": "ExecuTorch's replacement of empty",
}

# Out variants kiln.passes.aten_out_variants maps core-ATen operators to, for which no kernel
# exists yet ("AOT-only"): kiln.export refuses them, naming the node. Move an entry out
# of this set when its kernel lands (the test below fails until you do).
AOT_ONLY_NO_KERNEL_YET: frozenset[str] = frozenset(
    {
    }
)  # fmt: skip


def _yaml_entries(library: str = "portable") -> list[dict]:
    return yaml.safe_load((REPO / "kernels" / library / "op_table.yaml").read_text(encoding="utf-8"))


def _table_operators(library: str = "portable") -> set[str]:
    """Operators of kernels/<library>/op_table.yaml in this source tree."""
    return {entry["op"] for entry in _yaml_entries(library)}


def _all_table_operators() -> set[str]:
    """Operators of every kernel library's table (they must not overlap)."""
    tables = [_table_operators(library) for library in KERNEL_LIBRARIES]
    union = set().union(*tables)
    assert len(union) == sum(len(t) for t in tables), "two kernel libraries list the same operator"
    return union


# --- 1. the table, the registration code and the runtime agree ----------------------


def test_every_table_operator_is_registered_by_the_runtime() -> None:
    """(A difference after editing the table or the kernels: rebuild the extension.)"""
    table = _all_table_operators()
    registered = Runtime.get().operators
    assert len(registered) == len(set(registered)), "an operator is registered twice"
    assert sorted(table - set(registered)) == [], "in an op_table.yaml but not registered"
    assert sorted(set(registered) - table) == [], "registered but missing from every op_table.yaml"


def test_every_table_kernel_is_defined_in_its_source() -> None:
    """The registration is generated from the table (tools/codegen); the table's
    kernel functions and source files must exist as named."""
    for library in KERNEL_LIBRARIES:
        _check_table_kernels(library)


def _check_table_kernels(library: str) -> None:
    entries = _yaml_entries(library)
    assert len({entry["op"] for entry in entries}) == len(entries), "an operator is listed twice"
    for entry in entries:
        function = entry["kernel"].removeprefix(f"kiln::{library}::")
        kernel_file = REPO / "kernels" / library / entry["source"]
        assert kernel_file.is_file(), f"{entry['op']}: {entry['source']} does not exist"
        definition = re.compile(rf"\bvoid\s+{function}\s*\(\s*KernelContext\s*&")
        assert definition.search(kernel_file.read_text(encoding="utf-8")), (
            f"{entry['op']}: {entry['source']} does not define {function}"
        )


# --- 2. the op tests call every kernel -----------------------------------------------


def test_op_tests_cover_every_kernel(operator_log, every_op_test_selected) -> None:
    table = _table_operators()
    covered = operator_log.operators
    missing = sorted(table - covered - set(EXECUTORCH_ONLY) - set(BUILT_CALL_BY_CALL))
    assert missing == [], f"no op test exports a program that calls {missing}"
    not_built = sorted(set(BUILT_CALL_BY_CALL) - set(operator_log.built))
    assert not_built == [], f"BUILT_CALL_BY_CALL lists operators no op test calls: {not_built}"
    exported_anyway = sorted(set(BUILT_CALL_BY_CALL) & covered)
    assert exported_anyway == [], f"op tests export {exported_anyway}: remove them from BUILT_CALL_BY_CALL"
    stale = sorted(set(EXECUTORCH_ONLY) - table)
    assert stale == [], f"EXECUTORCH_ONLY lists operators without a kernel: {stale}"
    tested_anyway = sorted(set(EXECUTORCH_ONLY) & covered)
    assert tested_anyway == [], f"op tests call {tested_anyway}: remove them from EXECUTORCH_ONLY"


# --- 3. the AOT op table and the kernels ------------------------------------------------


def test_export_reads_the_kernel_table() -> None:
    """kiln.export's check uses the table the package ships (or this tree's): the same
    operators as this source tree (else rebuild/reinstall the package)."""
    for library in KERNEL_LIBRARIES:
        packaged = op_table_text(library)
        assert packaged is not None, library
        assert {entry["op"] for entry in yaml.safe_load(packaged)} == _table_operators(library)
    assert kernel_operators() == frozenset(_all_table_operators())


def test_every_out_variant_has_a_kernel_or_is_listed_as_aot_only() -> None:
    kernels = _all_table_operators()  # the cortex_m:: out variants are the Cortex-M library's
    without_kernel = {out for out in OUT_VARIANTS.values() if out not in kernels}
    assert sorted(without_kernel - AOT_ONLY_NO_KERNEL_YET) == [], "add a kernel or list it as AOT-only"
    assert sorted(AOT_ONLY_NO_KERNEL_YET - without_kernel) == [], (
        "these have a kernel (or left OUT_VARIANTS): remove them from AOT_ONLY_NO_KERNEL_YET"
    )


class _Floor(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.floor(x) + 1


class _GreaterEqualAndErf(torch.nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return torch.where(x >= y, torch.erf(x), y)


@pytest.fixture
def without_kernels(monkeypatch: pytest.MonkeyPatch):
    """Makes kiln.export see the kernel table without the given out variants."""

    def remove(*operators: str) -> None:
        table = kernel_operators()
        assert table is not None and set(operators) <= table
        monkeypatch.setattr(out_variants, "kernel_operators", lambda *libraries: table - set(operators))

    return remove


def test_export_refuses_operator_without_kernel(without_kernels) -> None:
    without_kernels("aten::floor.out")
    with pytest.raises(kiln.UnsupportedOperatorError) as caught:
        kiln.export(_Floor(), (torch.randn(4),))
    error = caught.value
    assert (error.operator, error.node) == ("aten::floor", "floor")
    assert "aten::floor.out" in str(error) and "no kernel" in str(error)


def test_export_lists_every_operator_without_kernel(without_kernels) -> None:
    without_kernels("aten::ge.Tensor_out", "aten::erf.out")
    with pytest.raises(kiln.UnsupportedOperatorError) as caught:
        kiln.export(_GreaterEqualAndErf(), (torch.randn(4), torch.randn(4)))
    message = str(caught.value)
    assert message.startswith("2 node(s)")
    assert "aten::ge.Tensor (node 'ge')" in message and "aten::erf (node 'erf')" in message
