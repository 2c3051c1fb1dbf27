"""Kernel calls follow ExecuTorch's argument convention: every schema argument in
order with defaults materialized, the outs, then the returns again."""

from __future__ import annotations

from typing import Any

import pytest
import torch

import kiln
from kiln.passes.aten_out_variants import OUT_VARIANTS
from kiln.passes.out_schema import resolve_overload
from kiln.serialize import program_generated as pte
from kiln.serialize import read_pte

KIND_NAMES = {getattr(pte.KernelTypes, n): n for n in dir(pte.KernelTypes) if not n.startswith("_")}


def decode(plan: Any, index: int) -> tuple[str, Any]:
    """A value as (kind, python value); tensors as ("Tensor", index)."""
    value = plan.values[index]
    kind = KIND_NAMES[value.valType]
    if kind == "Tensor":
        return kind, index
    if kind == "Int":
        return kind, value.val.intVal
    if kind == "Double":
        return kind, value.val.doubleVal
    if kind == "Bool":
        return kind, value.val.boolVal
    if kind == "IntList":
        return kind, [decode(plan, int(i)) for i in value.val.items]
    if kind == "TensorList":
        return kind, [int(i) for i in value.val.items]
    return kind, None


def calls(program: kiln.Program) -> tuple[Any, list[tuple[str, list[tuple[str, Any]]]]]:
    program_t, _ = read_pte(program.to_bytes())
    plan = program_t.executionPlan[0]
    names = [f"{op.name.decode()}.{op.overload.decode()}" for op in plan.operators]
    result = []
    for instruction in plan.chains[0].instructions:
        call = instruction.instrArgs
        result.append((names[call.opIndex], [decode(plan, int(a)) for a in call.args]))
    return plan, result


def test_add_arguments() -> None:
    class Add(torch.nn.Module):
        def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
            return x + y

    plan, [(name, args)] = calls(kiln.export(Add(), (torch.randn(3), torch.randn(3))))
    assert name == "aten::add.out"
    x, y = (int(i) for i in plan.inputs)
    (out,) = (int(i) for i in plan.outputs)
    assert args == [("Tensor", x), ("Tensor", y), ("Int", 1), ("Tensor", out), ("Tensor", out)]


def test_cnn_call_arguments(small_cnn) -> None:
    plan, program_calls = calls(kiln.export(*small_cnn))
    by_name = {}
    for name, args in program_calls:
        by_name.setdefault(name, args)

    conv = by_name["aten::convolution.out"]
    assert [kind for kind, _ in conv] == [
        "Tensor", "Tensor", "Tensor", "IntList", "IntList", "IntList", "Bool", "IntList", "Int",
        "Tensor", "Tensor",
    ]  # fmt: skip
    assert conv[3][1] == [("Int", 1), ("Int", 1)]  # stride items are Int values
    assert conv[4][1] == [("Int", 1), ("Int", 1)]  # padding
    assert conv[6][1] is False and conv[8][1] == 1
    assert conv[9] == conv[10]

    bn = by_name["aten::_native_batch_norm_legit_no_training.out"]
    assert [kind for kind, _ in bn] == ["Tensor"] * 5 + ["Double", "Double"] + ["Tensor"] * 3 + ["TensorList"]
    assert bn[6][1] == pytest.approx(1e-5)
    assert bn[10][1] == [bn[7][1], bn[8][1], bn[9][1]]
    # save_mean / save_invstd are unused: empty tensors, as ExecuTorch emits them.
    for _, index in bn[8:10]:
        assert list(plan.values[index].val.sizes) == [0]

    pool = by_name["aten::max_pool2d_with_indices.out"]
    assert [kind for kind, _ in pool] == [
        "Tensor", "IntList", "IntList", "IntList", "IntList", "Bool", "Tensor", "Tensor", "TensorList",
    ]  # fmt: skip
    assert pool[8][1] == [pool[6][1], pool[7][1]]
    assert plan.values[pool[7][1]].val.scalarType == 4  # indices are int64

    mean = by_name["aten::mean.out"]
    assert [kind for kind, _ in mean] == ["Tensor", "IntList", "Bool", "Null", "Tensor", "Tensor"]

    assert [kind for kind, _ in by_name["aten::addmm.out"]] == ["Tensor"] * 3 + ["Int", "Int"] + ["Tensor"] * 2
    assert by_name["aten::permute_copy.out"][1] == ("IntList", [("Int", 1), ("Int", 0)])


def test_views_become_copies_and_identities_disappear() -> None:
    class Views(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            y = x.view(2, 6).clone()  # clone of an intermediate: no copy needed
            y = y.view(2, 6)  # same shape: no-op
            return y.permute(1, 0).unsqueeze(0) * 2

    program = kiln.export(Views(), (torch.randn(3, 4),))
    assert program.operators == [
        "aten::view_copy.out", "aten::permute_copy.out", "aten::unsqueeze_copy.out", "aten::mul.out",
    ]  # fmt: skip


def test_numbers_in_tensor_arguments_become_0_dim_constants() -> None:
    class Scale(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return x * 2

    program = kiln.export(Scale(), (torch.randn(4),))
    program_t, segments = read_pte(program.to_bytes())
    plan, [(name, args)] = calls(program)
    assert name == "aten::mul.out"
    constant = plan.values[args[1][1]].val
    assert list(constant.sizes) == [] and constant.scalarType == 6  # float32, like x
    offset = int(program_t.constantSegment.offsets[constant.dataBufferIdx])
    assert segments[0][offset : offset + 4] == torch.tensor(2.0).numpy().tobytes()


@pytest.mark.parametrize(
    "low, high, expected",
    [(0, 6, [("Int", 0), ("Int", 6)]), (0.0, 6.5, [("Double", 0.0), ("Double", 6.5)])],
)
def test_scalar_arguments_keep_their_python_type(low, high, expected) -> None:
    class Clamp(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.ops.aten.hardtanh.default(x, low, high)

    _, [(name, args)] = calls(kiln.export(Clamp(), (torch.randn(5),)))
    assert name == "aten::hardtanh.out"
    assert args[1:3] == expected


@pytest.mark.parametrize("core_name", sorted(k for k in OUT_VARIANTS if k.startswith("aten::")))
def test_op_table_entries_resolve(core_name: str) -> None:
    """Every aten entry names real overloads, and the out variant needs no argument
    the core operator lacks."""
    functional = resolve_overload(core_name)
    out = resolve_overload(OUT_VARIANTS[core_name])
    assert functional is not None and out is not None
    functional_names = {a.name for a in functional._schema.arguments}
    for argument in out._schema.arguments:
        if not argument.is_out:
            assert argument.name in functional_names or argument.has_default_value(), argument.name
