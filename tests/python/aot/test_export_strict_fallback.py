"""torch.export both ways: non-strict first, strict (TorchDynamo) where non-strict cannot trace
the model, and one named error with both of torch's reasons where neither can."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

import kiln


class PaddingMask(nn.Module):
    """Sizes a mask from a tensor's value, as torchaudio's models do with their lengths."""

    def forward(self, x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        frames = torch.arange(int(lengths.max().item()), dtype=lengths.dtype)
        return x * (frames < lengths.unsqueeze(1)).to(x.dtype)


class NeitherWay(PaddingMask):
    """Non-strict cannot specialise the size; TorchDynamo refuses the graph break."""

    def forward(self, x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        torch._dynamo.graph_break()
        return super().forward(x, lengths)


def _inputs() -> tuple[torch.Tensor, torch.Tensor]:
    rng = np.random.default_rng(0)
    return torch.from_numpy(rng.standard_normal((3, 5)).astype(np.float32)), torch.tensor([5, 2, 4], dtype=torch.int32)


def test_non_strict_export_alone_fails_on_a_value_sized_tensor() -> None:
    # What makes the fallback necessary (torch's behaviour, not Kiln's).
    with pytest.raises(Exception, match="data-dependent"):
        torch.export.export(PaddingMask(), _inputs(), strict=False)


def test_export_falls_back_to_strict_and_runs_like_eager() -> None:
    from kiln.runtime import Runtime

    x, lengths = _inputs()
    program = kiln.export(PaddingMask(), (x, lengths))
    (got,) = Runtime().load_program(program.to_bytes()).load_method("forward").execute([x.numpy(), lengths.numpy()])
    np.testing.assert_array_equal(got, PaddingMask()(x, lengths).numpy())


def test_value_checks_and_the_reads_feeding_them_are_dropped() -> None:
    # The strict export checks max(lengths) == 5 with _assert_scalar, which Kiln never runs:
    # the max and the read of its value go with it instead of staying as CPU operators.
    edge = kiln.export.to_edge_program(PaddingMask(), _inputs())
    names = {str(n.target) for n in edge.graph.nodes if n.op == "call_function"}
    assert not {"aten._local_scalar_dense.default", "aten.max.default", "aten._assert_scalar.default"} & names


def test_quantize_falls_back_to_strict() -> None:
    from kiln.backends.arm import EthosUCompileSpec, EthosUQuantizer

    class Scaled(PaddingMask):
        def __init__(self) -> None:
            super().__init__()
            self.linear = nn.Linear(5, 5)

        def forward(self, x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
            return self.linear(super().forward(x, lengths))

    quantized = kiln.quantize(Scaled().eval(), _inputs(), EthosUQuantizer(EthosUCompileSpec("ethos-u55-128")),
                              progress=False)
    assert any("quantize_per_tensor" in str(n.target) for n in quantized.graph.nodes)


def test_failing_both_ways_gives_both_reasons() -> None:
    with pytest.raises(kiln.export.TorchExportError) as caught:
        kiln.export(NeitherWay(), _inputs())
    error = caught.value
    assert "GuardOnDataDependentSymNode" in error.non_strict
    assert "graph_break" in error.strict
    assert error.non_strict in str(error) and error.strict in str(error)
    assert "torch.export failed for NeitherWay" in str(error)
    assert isinstance(error, kiln.ExportError)
