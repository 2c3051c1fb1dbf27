"""The constraint table (kiln.backends.arm.constraints) is the one place both sides ask.

For each family constraint, a node the partitioner's own checks accept is one the TOSA
lowering accepts, and a node they refuse the lowering refuses with the same reason: the
partition report never promises the NPU what the lowering then rejects. The expected
outcomes are Vela's documented rules (``ethosu.vela.tflite_supported_operators``: stride
above 3 only unpadded and undilated, depthwise stride 1-3, transposed stride 1 or 2, padded
pooling kernels at most 8x8, resize by equal factors 2, 4 or 8, GATHER and comparisons on
the U85 only). One small exported model holds every case; no Vela run is needed.

The second half reads the sources (no import): the limits have one owner.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any, Optional

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from kiln.backends.arm import EthosUCompileSpec
from kiln.backends.arm.constraints import FAMILY_CONSTRAINTS
from kiln.backends.arm.partitioner.checks import CheckContext, LowerableCheck, checks_for, first_objection
from kiln.backends.arm.tosa.support import is_lowerable
from kiln.passes.delegation import operator_name
from kiln.targets import NPU_FAMILIES, NPU_TARGETS, family_of

TARGETS = ["ethos-u55-128", "ethos-u65-256", "ethos-u85-256"]
U55_AND_U65 = ("ethos-u55", "ethos-u65")

# (case, operator it exercises, {family: what the reason says, or None where it runs}).
# Families not named run it. Cases run in this order in Constraints.forward.
CASES: list[tuple[str, str, dict[str, Optional[str]]]] = [
    ("conv stride 4 padded", "aten::convolution", {f: "stride [4, 4] > 3 on " + f for f in U55_AND_U65}),
    ("conv stride 4 dilated", "aten::convolution", {f: "Vela supports it only with dilation 1" for f in U55_AND_U65}),
    ("conv stride 4 unpadded", "aten::convolution", {}),
    ("depthwise stride 4", "aten::convolution", {f: f"depthwise convolution stride [4, 4]: {f} supports stride 1-3"
                                                  for f in U55_AND_U65}),
    ("conv1d stride 5 padded", "aten::convolution", {f: "stride [1, 5] > 3" for f in U55_AND_U65}),
    ("transposed stride 3", "aten::convolution", {f: f"transposed convolution stride [3, 3]: {f} supports stride 1 or 2"
                                                   for f in U55_AND_U65}),
    ("transposed stride 2", "aten::convolution", {}),
    ("max pool 9x9 padded", "aten::max_pool2d_with_indices",
     {f: "max pooling kernel [9, 9] with padding: at most 8x8" for f in NPU_FAMILIES}),
    ("avg pool stride 5 padded", "aten::avg_pool2d",
     {f: f"pooling stride [5, 5] with padding: {f} supports stride > 3 only without padding" for f in NPU_FAMILIES}),
    ("avg pool 3x3 padded", "aten::avg_pool2d", {}),
    # Vela limits a pooling kernel's height and area, not its width (Vela 5.2 compiles this and
    # the virtual NPU runs it, on U55 and U85).
    ("avg pool 1x300", "aten::avg_pool2d", {}),
    ("nearest 2x", "aten::upsample_nearest2d.vec", {}),
    ("nearest 3x", "aten::upsample_nearest2d.vec",
     {f: f"upsampling factors (3, 3): {f} supports equal factors of 2, 4 or 8" for f in U55_AND_U65}),
    ("nearest 1x2", "aten::upsample_nearest2d.vec", {f: "upsampling factors (1, 2)" for f in U55_AND_U65}),
    ("bilinear 2x", "aten::upsample_bilinear2d.vec", {}),
    ("bilinear 4x", "aten::upsample_bilinear2d.vec", {f: "bilinear RESIZE is Ethos-U85 only" for f in U55_AND_U65}),
    ("global mean 300x10", "aten::mean.dim", {f: "pooling kernel [300, 10]: height <= 256" for f in NPU_FAMILIES}),
    ("sum of 10000", "aten::sum.dim_IntList", {f: "reduces 10000 elements per output" for f in NPU_FAMILIES}),
    ("embedding", "aten::embedding",
     {f: f"aten::embedding (GATHER) is not supported by {f} (only ethos-u85)" for f in U55_AND_U65}),
    ("equal", "aten::eq.Tensor", {f: f"aten::eq.Tensor (EQUAL) is not supported by {f}" for f in U55_AND_U65}),
    ("where", "aten::where.self", {f: f"aten::where.self (SELECT) is not supported by {f}" for f in U55_AND_U65}),
]


class Constraints(nn.Module):
    """Every case of CASES on small tensors, in CASES' order."""

    def __init__(self) -> None:
        super().__init__()
        self.padded = nn.Conv2d(4, 4, 3, stride=4, padding=1)
        self.dilated = nn.Conv2d(4, 4, 3, stride=4, dilation=2)
        self.unpadded = nn.Conv2d(4, 4, 4, stride=4)
        self.depthwise = nn.Conv2d(4, 4, 3, stride=4, groups=4)
        self.conv1d = nn.Conv1d(4, 4, 5, stride=5, padding=2)
        self.transposed3 = nn.ConvTranspose2d(4, 4, 3, stride=3)
        self.transposed2 = nn.ConvTranspose2d(4, 4, 2, stride=2)
        self.embedding = nn.Embedding(30, 8)

    def forward(self, x: torch.Tensor, line: torch.Tensor, row: torch.Tensor, tall: torch.Tensor,
                wide: torch.Tensor, ids: torch.Tensor, a: torch.Tensor, b: torch.Tensor) -> tuple[torch.Tensor, ...]:
        return (
            self.padded(x), self.dilated(x), self.unpadded(x), self.depthwise(x), self.conv1d(line),
            self.transposed3(x), self.transposed2(x),
            F.max_pool2d(x, 9, stride=1, padding=4), F.avg_pool2d(x, 5, stride=5, padding=2),
            F.avg_pool2d(x, 3, stride=1, padding=1), F.avg_pool2d(row, (1, 300)),
            F.interpolate(x, scale_factor=2, mode="nearest"), F.interpolate(x, scale_factor=3, mode="nearest"),
            F.interpolate(x, scale_factor=(1, 2), mode="nearest"),
            F.interpolate(x, scale_factor=2, mode="bilinear"), F.interpolate(x, scale_factor=4, mode="bilinear"),
            tall.mean(dim=(2, 3)), wide.sum(dim=(2, 3)),
            self.embedding(ids), a == b, torch.where(a > 0, a, b),
        )


def _inputs() -> tuple[torch.Tensor, ...]:
    generator = torch.Generator().manual_seed(0)
    return (
        torch.randn(1, 4, 16, 16, generator=generator), torch.randn(1, 4, 40, generator=generator),
        torch.randn(1, 2, 1, 600, generator=generator),
        torch.randn(1, 2, 300, 10, generator=generator), torch.randn(1, 2, 100, 100, generator=generator),
        torch.randint(0, 30, (1, 6), dtype=torch.int32, generator=generator),
        torch.randint(-5, 5, (1, 8), dtype=torch.int32, generator=generator),
        torch.randint(-5, 5, (1, 8), dtype=torch.int32, generator=generator),
    )


@pytest.fixture(scope="module")
def exported() -> tuple[dict[str, torch.fx.Node], dict[str, torch.Tensor]]:
    """(each case's node in the exported core-ATen graph, matched in forward order; the
    weights by placeholder name, as the partitioner sees them)."""
    program = torch.export.export(Constraints().eval(), _inputs()).run_decompositions()
    weights = {placeholder: program.state_dict[name]
               for placeholder, name in program.graph_signature.inputs_to_parameters.items()}
    nodes = [n for n in program.graph.nodes if n.op == "call_function"]
    found: dict[str, torch.fx.Node] = {}
    position = 0
    for name, operator, _ in CASES:
        while operator_name(nodes[position]) != operator:
            position += 1
        found[name] = nodes[position]
        position += 1
    return found, weights


def _partitioner_reason(node: torch.fx.Node, target: str, weights: dict[str, torch.Tensor]) -> Optional[str]:
    """The partitioner's own checks (not the one that asks the lowering)."""
    checks = [check for check in checks_for(target) if not isinstance(check, LowerableCheck)]
    return first_objection(node, checks, CheckContext(target, weights, EthosUCompileSpec(target)))


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("case", [name for name, _, _ in CASES])
def test_partitioner_and_lowering_give_the_same_answer(exported: Any, case: str, target: str) -> None:
    nodes, weights = exported
    node = nodes[case]
    family = family_of(target)
    expected = dict((name, outcome) for name, _, outcome in CASES)[case].get(family)
    partitioner = _partitioner_reason(node, target, weights)
    ok, lowering = is_lowerable(node, EthosUCompileSpec(target))
    if expected is None:
        assert partitioner is None and ok, (partitioner, lowering)
    else:
        assert partitioner is not None and expected in partitioner, partitioner
        assert not ok and lowering == partitioner, (lowering, partitioner)


def test_the_table_has_one_row_per_family() -> None:
    assert set(FAMILY_CONSTRAINTS) == set(NPU_FAMILIES)
    assert {t.family for t in NPU_TARGETS} <= set(FAMILY_CONSTRAINTS)
    u55, u65 = FAMILY_CONSTRAINTS["ethos-u55"], FAMILY_CONSTRAINTS["ethos-u65"]
    assert {k: v for k, v in vars(u55).items() if k != "family"} == {k: v for k, v in vars(u65).items()
                                                                      if k != "family"}  # one NPU core


# ----------------------------------------------------------------------------- one owner
PACKAGE = Path(__file__).resolve().parents[4] / "python" / "kiln"
OWNER = PACKAGE / "backends" / "arm" / "constraints" / "families.py"
TARGETS_MODULE = PACKAGE / "targets.py"


def _code_constants(tree: ast.AST) -> list[tuple[int, Any]]:
    """(line, value) of the literals in code: tuples of ints and strings, docstrings left out."""
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef)) and node.body
                  and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
    found: list[tuple[int, Any]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Tuple) and node.elts and all(
                isinstance(e, ast.Constant) and type(e.value) is int for e in node.elts):
            found.append((node.lineno, tuple(e.value for e in node.elts)))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            found.append((node.lineno, node.value))
    return found


@pytest.fixture(scope="module")
def sources() -> dict[Path, ast.AST]:
    return {path: ast.parse(path.read_text(), filename=str(path)) for path in sorted(PACKAGE.rglob("*.py"))}


def test_resize_factors_have_one_owner(sources: dict[Path, ast.AST]) -> None:
    """Vela's resize factors are written once: grep finds the table."""
    holders = {path for path, tree in sources.items()
               for _, value in _code_constants(tree) if value in ((2, 4, 8), (1, 2, 4, 8))}
    assert holders == {OWNER}


def test_the_lowering_and_the_partitioner_ask_the_table(sources: dict[Path, ast.AST]) -> None:
    """No family name or family test in the partitioner's or the lowering's code: the family's
    limits come from the table, the family from kiln.targets (``rsplit("-")`` there only)."""
    arm = PACKAGE / "backends" / "arm"
    wrong = []
    for path, tree in sources.items():
        if path.is_relative_to(arm / "partitioner") or path.is_relative_to(arm / "tosa"):
            wrong += [f"{path.name}:{line} {value!r}" for line, value in _code_constants(tree)
                      if isinstance(value, str) and value.startswith("ethos-u")]
        names = {node.name for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)}
        wrong += [f"{path.name} defines {name}" for name in names & {"_family", "_is_u85"}]
        if path != TARGETS_MODULE:
            wrong += [f"{path.name}:{node.lineno} parses a target name" for node in ast.walk(tree)
                      if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                      and node.func.attr == "rsplit" and node.args and isinstance(node.args[0], ast.Constant)
                      and node.args[0].value == "-"]
    assert not wrong, "\n".join(wrong)
