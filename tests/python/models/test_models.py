"""The example models are deterministic and have realistic activations."""

from __future__ import annotations

import pytest
import torch

import kiln.models


@pytest.mark.parametrize("name", kiln.models.names())
def test_model_is_deterministic_and_not_degenerate(name: str) -> None:
    model_a, inputs_a = kiln.models.get(name)
    model_b, inputs_b = kiln.models.get(name)
    assert not model_a.training
    with torch.no_grad():
        out_a, out_b = model_a(*inputs_a), model_b(*inputs_b)
    torch.testing.assert_close(out_a, out_b, rtol=0, atol=0)
    # Default batch-norm statistics would give ~1e-9 outputs on a deep random network.
    assert 0.05 < float(out_a.abs().max()) < 100


def test_unknown_model_lists_the_names() -> None:
    with pytest.raises(kiln.models.UnknownModelError, match="available: add"):
        kiln.models.get("mobilenet")
