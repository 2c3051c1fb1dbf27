"""Users' mistakes give named kiln errors that say what is wrong and where."""

from __future__ import annotations

import pytest
import torch

import kiln


class UsesLgamma(torch.nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return torch.lgamma(x) + y


class UsesTwoUnsupported(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.lgamma(x) + torch.special.i0(x)


class DataDependentBranch(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.sum() > 0:
            return x * 2
        return x


class ChangesItsInput(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x.add_(1)
        return x * 2


def test_unsupported_operator_names_node_and_operator() -> None:
    with pytest.raises(kiln.UnsupportedOperatorError) as caught:
        kiln.export(UsesLgamma(), (torch.randn(3), torch.randn(3)))
    error = caught.value
    assert error.operator == "aten::lgamma"
    assert error.node == "lgamma"
    assert "aten::lgamma (node 'lgamma')" in str(error)
    assert isinstance(error, kiln.ExportError) and isinstance(error, kiln.KilnError)


def test_every_unsupported_operator_is_listed() -> None:
    with pytest.raises(kiln.UnsupportedOperatorError) as caught:
        kiln.export(UsesTwoUnsupported(), (torch.randn(3),))
    message = str(caught.value)
    assert message.startswith("2 node(s)")
    assert "aten::lgamma" in message and "aten::i0" in message


def test_dtype_conversions_lower_without_their_assertions() -> None:
    class Casts(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return (x.to(torch.int32) * 2).to(torch.float32)

    program = kiln.export(Casts(), (torch.randn(3),))
    assert program.operators == ["aten::_to_copy.out", "aten::mul.out"]


def test_torch_export_failure_is_an_export_error() -> None:
    with pytest.raises(kiln.ExportError, match="torch.export failed for DataDependentBranch") as caught:
        kiln.export(DataDependentBranch(), (torch.randn(3),))
    assert caught.value.__cause__ is not None


def test_input_mutation_is_rejected() -> None:
    # (Buffers the model updates are state: tests/python/runtime/test_state.py.)
    with pytest.raises(kiln.ExportError, match="changes its input 'x' in place"):
        kiln.export(ChangesItsInput(), (torch.randn(1),))


def test_not_a_module() -> None:
    with pytest.raises(kiln.ExportError, match="must be a torch.nn.Module"):
        kiln.export(lambda x: x, (torch.randn(1),))


def test_inputs_must_be_tensors_in_a_tuple() -> None:
    with pytest.raises(kiln.ExportError, match="tuple of tensors"):
        kiln.export(UsesLgamma(), {"x": torch.randn(1)})


def test_unsupported_dtype_is_named() -> None:
    class Complex(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return x * 2

    with pytest.raises(kiln.ExportError, match="complex64"):
        kiln.export(Complex(), (torch.randn(3, dtype=torch.complex64),))


def test_single_tensor_input_is_accepted() -> None:
    class Double(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return x + x

    program = kiln.export(Double(), torch.randn(2))
    assert program.operators == ["aten::add.out"]
