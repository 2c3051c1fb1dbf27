"""Runs inside ExecuTorch's venv (KILN_EXECUTORCH_PYTHON): ExecuTorch's devtools on Kiln's
files, and ExecuTorch making files for Kiln.

    inspect FILE.etdp [DEBUG_BUFFER]   ExecuTorch's Inspector prints its table (stdout)
    run-bundle FILE.bpte N             ExecuTorch's runtime runs the bundle's test cases
                                       0..N-1 and checks them (prints PASS or FAIL, exits 0 or 3)
    make-bundle OUT.bpte INPUT.npy     ExecuTorch exports a small CNN and bundles it with
                                       the input and eager PyTorch's output
"""

from __future__ import annotations

import sys

import numpy as np
import torch


def inspect(etdump: str, debug_buffer: str | None) -> int:
    from executorch.devtools import Inspector

    inspector = Inspector(etdump_path=etdump, debug_buffer_path=debug_buffer)
    inspector.print_data_tabular()
    rows = inspector.to_dataframe()
    print(f"rows: {len(rows)} delegated: {int(rows['is_delegated_op'].sum())}")
    return 0


def run_bundle(path: str, cases: int) -> int:
    from executorch.extension.pybindings import portable_lib

    data = open(path, "rb").read()
    bundle = portable_lib._load_bundled_program_from_buffer(data)
    for index in range(cases):
        try:
            # Loads the case's inputs, runs the method and compares with its expected outputs.
            bundle.verify_result_with_bundled_expected_output("forward", index)
        except Exception as error:  # ExecuTorch raises a RuntimeError naming the mismatch
            print(f"FAIL: test case {index}: {error}")
            return 3
    print("PASS")
    return 0


class SmallNet(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.fc = torch.nn.Linear(8, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(torch.relu(self.conv(x)).mean(dim=(2, 3)))


def make_bundle(out: str, input_path: str) -> int:
    from executorch.devtools import BundledProgram
    from executorch.devtools.bundled_program.config import MethodTestCase, MethodTestSuite
    from executorch.devtools.bundled_program.serialize import serialize_from_bundled_program_to_flatbuffer
    from executorch.exir import to_edge

    torch.manual_seed(0)
    model = SmallNet().eval()
    x = torch.from_numpy(np.load(input_path))
    program = to_edge(torch.export.export(model, (x,))).to_executorch()
    with torch.no_grad():
        expected = model(x)
    suite = MethodTestSuite("forward", [MethodTestCase(inputs=[x], expected_outputs=[expected])])
    bundled = BundledProgram(program, [suite])
    with open(out, "wb") as file:
        file.write(serialize_from_bundled_program_to_flatbuffer(bundled))
    return 0


def main(argv: list[str]) -> int:
    command, *args = argv
    if command == "inspect":
        return inspect(args[0], args[1] if len(args) > 1 else None)
    if command == "run-bundle":
        return run_bundle(args[0], int(args[1]))
    if command == "make-bundle":
        return make_bundle(args[0], args[1])
    raise SystemExit(f"unknown command {command}")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
