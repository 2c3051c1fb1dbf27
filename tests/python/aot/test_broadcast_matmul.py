"""kiln.passes.broadcast_matmul: a fully connected layer on a transposed input, which torch
decomposes into a batched product with the weight repeated over the batch, is one matrix
product in Kiln's program (``addmm``/``mm``), computes what eager PyTorch does, and leaves
every other batched product as it is."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

import kiln
from kiln.passes.broadcast_matmul import fold_broadcast_matmuls
from kiln.runtime import Runtime

aten = torch.ops.aten


class TransposedLinear(nn.Module):
    """conv1d features [N, C, T] read by a Linear over C (as audio models write it)."""

    def __init__(self, bias: bool = True) -> None:
        super().__init__()
        self.fc = nn.Linear(6, 5, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(x.transpose(1, 2))


class ChannelMlp(nn.Module):
    """NCHW features permuted to NHWC for a Linear over channels (a ConvNeXt block's MLP)."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(6, 5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.fc(x.permute(0, 2, 3, 1)))


class Attention(nn.Module):
    """x^T x: both operands computed, a batched product that stays one."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.transpose(1, 2) @ x


class PerBatchWeights(nn.Module):
    """A different matrix per batch: a batched product that stays one."""

    def __init__(self) -> None:
        super().__init__()
        self.w = nn.Parameter(torch.randn(2, 6, 5))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.transpose(1, 2) @ self.w


def _targets(program: torch.export.ExportedProgram) -> list:
    return [n.target for n in program.graph.nodes if n.op == "call_function"]


@pytest.mark.parametrize("model, shape, product", [
    (TransposedLinear(), (2, 6, 7), aten.addmm.default),
    (TransposedLinear(bias=False), (2, 6, 7), aten.mm.default),
    (ChannelMlp(), (2, 6, 3, 4), aten.addmm.default),
], ids=["linear", "linear-no-bias", "channel-mlp"])
def test_a_linear_on_a_transposed_input_is_one_matrix_product(model: nn.Module, shape: tuple[int, ...],
                                                               product: object) -> None:
    torch.manual_seed(0)
    model.eval()
    x = torch.randn(*shape)
    program = torch.export.export(model, (x,)).run_decompositions()
    assert aten.bmm.default in _targets(program)  # torch's form, which this pass exists for
    assert fold_broadcast_matmuls(program) == 1
    targets = _targets(program)
    assert aten.bmm.default not in targets and aten.expand.default not in targets
    assert targets.count(product) == 1 and aten.add.Tensor not in targets  # the bias is the addmm's
    torch.testing.assert_close(program.module()(x), model(x), rtol=1e-5, atol=1e-6)
    assert fold_broadcast_matmuls(program) == 0


@pytest.mark.parametrize("model", [Attention(), PerBatchWeights()], ids=["attention", "per-batch-weights"])
def test_other_batched_products_stay(model: nn.Module) -> None:
    program = torch.export.export(model.eval(), (torch.randn(2, 6, 6 if isinstance(model, Attention) else 7),))
    program = program.run_decompositions()
    assert fold_broadcast_matmuls(program) == 0
    assert aten.bmm.default in _targets(program)


def test_kiln_program_runs_it_on_the_cpu() -> None:
    torch.manual_seed(0)
    model = ChannelMlp().eval()
    x = torch.from_numpy(np.random.default_rng(0).standard_normal((2, 6, 3, 4)).astype(np.float32))
    program = kiln.export(model, (x,))
    assert "aten::addmm.out" in program.operators and "aten::bmm.out" not in program.operators
    [got] = Runtime().load_program(program.to_bytes()).load_method("forward").execute([x.numpy()])
    np.testing.assert_allclose(got, model(x).detach().numpy(), rtol=1e-5, atol=1e-5)
