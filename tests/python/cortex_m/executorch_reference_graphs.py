"""Runs Kiln-lowered Cortex-M graphs with ExecuTorch's reference cortex_m:: operators.

Run in the ExecuTorch venv: ``python executorch_reference_graphs.py IN.pt OUT.pt``. IN holds
``{case: {"nodes": [(name, operator, args)], "output": name, "inputs": {name: tensor}}}``
(a graph as test_kiln_cortex_m_flow.py flattens it: arguments that are other nodes are
``("node", name)``); every ``cortex_m::`` call runs ExecuTorch's implementation (its
``backends/cortex_m/ops/operators.py``), every ``aten::`` call plain torch. OUT gets
``{case: output tensor}``.
"""

from __future__ import annotations

import sys

# The passes package first: importing the operators alone runs into an import cycle of the wheel.
import executorch.backends.cortex_m.passes  # noqa: F401
import executorch.backends.cortex_m.ops.operators as operators  # registers the cortex_m:: operators
import torch


class _IntegerConvolutions:
    """torch.nn.functional for the reference operators, with an int32 conv2d that torch's CPU
    build lacks for dilated convolutions: computed in float64, exact for these sums."""

    def __getattr__(self, name: str):
        return getattr(torch.nn.functional, name)

    @staticmethod
    def conv2d(input, weight, bias=None, *args, **kwargs):
        if input.dtype != torch.int32:
            return torch.nn.functional.conv2d(input, weight, bias, *args, **kwargs)
        bias = None if bias is None else bias.double()
        return torch.nn.functional.conv2d(input.double(), weight.double(), bias, *args, **kwargs).round().int()


operators.F = _IntegerConvolutions()


def _operator(name: str):
    namespace, rest = name.split("::")
    packet, _, overload = rest.partition(".")
    return getattr(getattr(getattr(torch.ops, namespace), packet), overload or "default")


def _resolve(value, values):
    if isinstance(value, tuple) and len(value) == 2 and value[0] == "node":
        return values[value[1]]
    if isinstance(value, list):
        return [_resolve(v, values) for v in value]
    return value


#: aten ops that only move values but that torch's CPU build lacks for int8 (channels-last
#: nearest upsampling): run on the values as float, exact for a copy, and cast back.
_MOVES_WITHOUT_INT8 = {"aten::upsample_nearest2d.vec", "aten::upsample_nearest2d"}


def _call(operator: str, args: list):
    if operator in _MOVES_WITHOUT_INT8 and args[0].dtype == torch.int8:
        return _operator(operator)(args[0].float(), *args[1:]).to(torch.int8)
    return _operator(operator)(*args)


def run(case: dict) -> torch.Tensor:
    values = dict(case["inputs"])
    for name, operator, args in case["nodes"]:
        values[name] = _call(operator, [_resolve(a, values) for a in args])
    return values[case["output"]]


def main() -> None:
    cases = torch.load(sys.argv[1])
    torch.save({name: run(case) for name, case in cases.items()}, sys.argv[2])


if __name__ == "__main__":
    main()
