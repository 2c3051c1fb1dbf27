"""Runs inside ExecuTorch's venv (KILN_EXECUTORCH_PYTHON): ExecuTorch makes XNNPACK-delegated
programs for Kiln's tests and runs them with its own runtime, the reference.

    make DIR NAME FLAVOUR [NAME FLAVOUR ...]

For each NAME and FLAVOUR (fp32 or int8): exports the ExportedProgram DIR/NAME.pt2 with
ExecuTorch's XnnpackPartitioner (int8: quantized first with its XNNPACKQuantizer,
symmetric, per-channel weights, calibrated on the inputs), writes DIR/NAME_FLAVOUR.pte,
runs it on the inputs in ExecuTorch's runtime and saves the outputs in
DIR/NAME_FLAVOUR_expected.npz (arrays out0, out1, ...). The inputs are DIR/NAME_inputs.npz
(arrays in0, in1, ...). One process for all: ExecuTorch takes seconds to import.
"""

from __future__ import annotations

import sys

import numpy as np
import torch


def _load_inputs(path: str) -> tuple[torch.Tensor, ...]:
    arrays = np.load(path)
    return tuple(torch.from_numpy(arrays[f"in{index}"]) for index in range(len(arrays.files)))


def _quantize(exported: torch.export.ExportedProgram, inputs: tuple[torch.Tensor, ...]) -> torch.nn.Module:
    from executorch.backends.xnnpack.quantizer.xnnpack_quantizer import (
        XNNPACKQuantizer,
        get_symmetric_quantization_config,
    )
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

    quantizer = XNNPACKQuantizer().set_global(get_symmetric_quantization_config(is_per_channel=True))
    # torch 2.13: PT2E refuses the guard-checking call_module of a plain ep.module().
    prepared = prepare_pt2e(exported.module(check_guards=False), quantizer)
    prepared(*inputs)
    return convert_pt2e(prepared)


def make(model_path: str, inputs_path: str, out_pte: str, flavour: str, outputs_path: str) -> None:
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
    from executorch.exir import to_edge_transform_and_lower
    from executorch.extension.pybindings import portable_lib

    inputs = _load_inputs(inputs_path)
    exported = torch.export.load(model_path)
    if flavour == "int8":
        exported = torch.export.export(_quantize(exported, inputs), inputs)
    program = to_edge_transform_and_lower(exported, partitioner=[XnnpackPartitioner()]).to_executorch()
    with open(out_pte, "wb") as file:
        file.write(program.buffer)
    module = portable_lib._load_for_executorch_from_buffer(program.buffer)
    outputs = module.forward(list(inputs))
    np.savez(outputs_path, **{f"out{index}": out.numpy() for index, out in enumerate(outputs)})


def main(argv: list[str]) -> int:
    if len(argv) < 4 or argv[0] != "make" or len(argv) % 2 != 0:
        print(__doc__, file=sys.stderr)
        return 2
    folder = argv[1]
    for name, flavour in zip(argv[2::2], argv[3::2]):
        base = f"{folder}/{name}"
        make(f"{base}.pt2", f"{base}_inputs.npz", f"{base}_{flavour}.pte", flavour,
             f"{base}_{flavour}_expected.npz")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
