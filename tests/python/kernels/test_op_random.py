"""Random kernels: rand, randn and native_dropout. Their numbers come from Kiln's own
deterministic generator, not PyTorch's, so the tests check distributions (bounds,
mean, variance, the kept fraction) and dropout's exact relation between input, mask and
output, in float32 and float64. The generator is deterministic, so these checks
always see the same numbers."""

from __future__ import annotations

import math

import pytest
import torch

aten = torch.ops.aten
FLOATS = [torch.float32, torch.float64]
N = 20000


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_rand_is_uniform_on_unit_interval(check_op, dtype: torch.dtype) -> None:
    first, second = check_op.run(lambda x: (torch.rand(N, dtype=dtype) + x, torch.rand(4, 5, dtype=dtype) + x[:1]),
                                 (torch.zeros(N, dtype=dtype),), ops=["aten::rand.out"])
    assert first.dtype == dtype and second.shape == (4, 5)
    assert float(first.min()) >= 0.0 and float(first.max()) < 1.0
    standard_error = math.sqrt(1 / 12 / N)
    assert abs(float(first.mean()) - 0.5) < 5 * standard_error
    assert abs(float(first.var()) - 1 / 12) < 0.005
    # Ten bins hold about a tenth each.
    counts = torch.histc(first.double(), bins=10, min=0.0, max=1.0) / N
    assert float((counts - 0.1).abs().max()) < 0.01
    assert not torch.equal(first[:20].reshape(4, 5), second), "two calls drew the same numbers"


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_randn_is_standard_normal(check_op, dtype: torch.dtype) -> None:
    (values,) = check_op.run(lambda x: torch.randn(N, dtype=dtype) + x, (torch.zeros(N, dtype=dtype),),
                             ops=["aten::randn.out"])
    assert values.dtype == dtype and bool(torch.isfinite(values).all())
    assert abs(float(values.mean())) < 5 / math.sqrt(N)
    assert abs(float(values.std()) - 1.0) < 0.03
    within_one = float((values.abs() < 1).double().mean())
    assert abs(within_one - 0.6827) < 0.015
    assert float(values.abs().max()) > 3.0  # the tails are there


def test_rand_draws_new_numbers_on_every_execution(check_op) -> None:
    import kiln
    from kiln.runtime import Runtime

    class Noise(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.rand(8) + x

    program = kiln.export(Noise(), (torch.zeros(8),))
    method = Runtime.get().load_program(program.to_bytes()).load_method("forward")
    first, second = method.execute([torch.zeros(8)])[0], method.execute([torch.zeros(8)])[0]
    assert not torch.equal(first, second)


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_native_dropout_in_training(check_op, dtype: torch.dtype) -> None:
    x = torch.rand(100, 200, dtype=dtype) + 0.5  # no zeros: a zero output means dropped
    cases = lambda x: (aten.native_dropout.default(x, 0.3, True), aten.native_dropout.default(x, 0.0, None),  # noqa: E731
                       aten.native_dropout.default(x, 1.0, True))
    out, mask, out_p0, mask_p0, out_p1, mask_p1 = check_op.run(cases, (x,), ops=["aten::native_dropout.out"])
    assert mask.dtype == torch.bool and out.dtype == dtype
    kept = float(mask.double().mean())
    assert abs(kept - 0.7) < 0.01
    torch.testing.assert_close(out, torch.where(mask, x / 0.7, torch.zeros_like(x)), rtol=1e-6, atol=0)
    assert bool(mask_p0.all()) and torch.equal(out_p0, x)  # p = 0 keeps everything
    assert not bool(mask_p1.any()) and bool((out_p1 == 0).all())  # p = 1 drops everything


def test_native_dropout_in_inference_is_the_identity(check_op) -> None:
    check_op(lambda x: aten.native_dropout.default(x, 0.5, False), (torch.randn(3, 4),),
             ops=["aten::native_dropout.out"], exact=True)


def test_dropout_layer_in_a_model_in_training_mode(check_op) -> None:
    # 16384 draws: the dropped fraction's standard deviation is 0.0034, far inside the bound
    # below whatever state earlier tests left the kernel's generator in.
    model = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.Dropout(0.25)).train()
    x = torch.randn(256, 64)
    (out,) = check_op.run(model, (x,), ops=["aten::native_dropout.out"])
    with torch.no_grad():
        dense = model[0](x)
    dropped = out == 0
    assert abs(float(dropped.double().mean()) - 0.25) < 0.03
    torch.testing.assert_close(out[~dropped], dense[~dropped] / 0.75, rtol=1e-5, atol=1e-6)
