"""Activation kernels against eager PyTorch: elu (alpha, scale, input_scale; SELU and
ELU modules), glu (every dim, negative dims, 0-dim-free shapes), and the activation
modules users bring whose core-ATen forms need this library's math kernels (Mish,
Softplus and LogSigmoid through log1p, CELU through expm1, SiLU, PReLU, GELU), each
exported as an nn.Module and as part of an nn.Sequential."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn
from torch.testing import make_tensor

aten = torch.ops.aten

FLOAT_DTYPES = [torch.float32, torch.float64]
SPECIAL_VALUES = torch.tensor([float("nan"), float("inf"), float("-inf"), 0.0, -0.0, -1e-8, 1e-8, -30.0, 30.0])


def tensor(shape, dtype=torch.float32, **kwargs) -> torch.Tensor:
    return make_tensor(shape, dtype=dtype, device="cpu", **kwargs)


def name_of(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


ELUS = {
    "default": lambda x: F.elu(x),
    "alpha_0.5": lambda x: F.elu(x, alpha=0.5),
    "alpha_2": lambda x: F.elu(x, alpha=2.0),
    "scale_input_scale": lambda x: aten.elu(x, 1.5, 2.0, 0.5),
    "selu": nn.SELU(),
    "elu_module": nn.ELU(alpha=0.3),
}


def test_elu(check_op) -> None:
    """Negative, zero and positive inputs, special values, 0-dim; ELU's and SELU's
    constants."""
    cases = []
    for dtype in FLOAT_DTYPES:
        x = torch.cat([tensor((12,), dtype, low=-6, high=6), SPECIAL_VALUES.to(dtype)])
        cases += [(f"{name}_{name_of(dtype)}", function, (x,)) for name, function in ELUS.items()]
        cases.append((f"0dim_{name_of(dtype)}", F.elu, (torch.tensor(-0.7, dtype=dtype),)))
    check_op.many(cases, ops=["aten::elu.out"])


def test_glu(check_op) -> None:
    """Core ATen decomposes glu; kept, it reaches its kernel. The halved dimension first,
    in the middle, last (default) and negative."""
    cases = []
    for dtype in FLOAT_DTYPES:
        x = tensor((4, 6, 2), dtype, low=-5, high=5)
        cases += [(f"dim{dim}_{name_of(dtype)}", lambda t, d=dim: F.glu(t, d), (x,)) for dim in (0, 1, 2, -1, -2)]
        cases.append((f"rank1_{name_of(dtype)}", F.glu, (tensor((8,), dtype),)))
    special = torch.stack([SPECIAL_VALUES, SPECIAL_VALUES.flip(0)])
    cases.append(("special", lambda t: F.glu(t, 0), (special,)))
    cases.append(("empty", lambda t: F.glu(t, 1), (torch.empty(0, 4),)))
    check_op.many(cases, ops=["aten::glu.out"], preserve=[aten.glu.default])


class _Block(nn.Module):
    """A small block as users write it: linear, activation, linear."""

    def __init__(self, activation: nn.Module) -> None:
        super().__init__()
        self.first = nn.Linear(8, 16)
        self.activation = activation
        self.second = nn.Linear(16, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.second(self.activation(self.first(x)))


ACTIVATION_MODULES = {
    "mish": (nn.Mish, ["aten::log1p.out"]),
    "softplus": (nn.Softplus, ["aten::log1p.out"]),
    "softplus_beta": (lambda: nn.Softplus(beta=2.0, threshold=5.0), ["aten::log1p.out"]),
    "logsigmoid": (nn.LogSigmoid, ["aten::log1p.out"]),
    "celu": (lambda: nn.CELU(alpha=0.5), ["aten::expm1.out"]),
    "silu": (nn.SiLU, ["aten::sigmoid.out"]),
    "prelu": (lambda: nn.PReLU(16), ["aten::where.self_out"]),
    "gelu": (nn.GELU, ["aten::gelu.out"]),
}


def test_activation_modules(check_op) -> None:
    """Each activation alone on inputs that reach its thresholds (softplus switches to
    the identity above threshold / beta), and inside a class-defined block and an
    nn.Sequential with trained-looking weights."""
    torch.manual_seed(0)
    x = torch.cat([torch.linspace(-25, 25, 40), SPECIAL_VALUES[1:]]).reshape(3, 16)  # 16 channels for PReLU
    # torch's vectorized float32 GELU returns nan for +inf on AVX-512 CPUs (its scalar and
    # float64 paths, and Kiln, return inf): +inf meets GELU alone, in a one-element tensor
    # that eager computes on the scalar path on every CPU.
    finite_or_nan = torch.where(x == float("inf"), torch.tensor(30.0), x)
    cases = [("gelu_plus_infinity", nn.GELU(), (torch.tensor([float("inf")]),))]
    for name, (make, _) in ACTIVATION_MODULES.items():
        cases.append((f"{name}_alone", make(), ((finite_or_nan if name == "gelu" else x).clone(),)))
        cases.append((f"{name}_block", _Block(make()), (torch.randn(3, 8),)))
        cases.append((f"{name}_sequential", nn.Sequential(nn.Linear(8, 16), make(), nn.Linear(16, 4)), (torch.randn(3, 8),)))
    ops = sorted({op for _, ops in ACTIVATION_MODULES.values() for op in ops})
    check_op.many(cases, ops=ops)
