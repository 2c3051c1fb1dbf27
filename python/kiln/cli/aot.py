"""``kiln-aot`` (also ``python -m kiln.aot_compiler``): compile a PyTorch model to a .pte.

Today this is the CPU flow: export -> core ATen -> out-variant calls -> memory planning ->
.pte run by Kiln's portable kernels. User errors end with a one-line message and exit
code 2; ``--debug`` shows the full traceback instead.
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from pathlib import Path

import numpy as np
import torch

EPILOG = """examples:
  kiln-aot --model_name mv2 --output mv2.pte --evaluate
  kiln-aot --model_name my_net.py:MyNet --output my_net.pte --intermediates out/my_net
"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kiln-aot", description="Compile a PyTorch model to a Kiln/ExecuTorch .pte program.",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model_name", "-m", required=True,
                        help="a built-in model (kiln.models: %(choices_text)s) or path/to/file.py:ClassName "
                             "whose class has get_example_inputs()" % {"choices_text": _model_names()})
    parser.add_argument("--output", "-o", type=Path,
                        help="where to write the program (default: <model>.pte in the current folder)")
    parser.add_argument("--intermediates", type=Path, metavar="DIR",
                        help="write the example inputs (input_<i>.npy), eager PyTorch's outputs "
                             "(reference_output_<i>.npy), the exported graph and the program summary here")
    parser.add_argument("--evaluate", action="store_true",
                        help="run the program on Kiln's runtime and compare with eager PyTorch")
    parser.add_argument("--unplanned_io", action="store_true",
                        help="leave inputs and outputs out of the planned memory (the caller provides them)")
    parser.add_argument("--debug", action="store_true", help="verbose logging and full tracebacks")
    return parser


def _model_names() -> str:
    import kiln.models

    return ", ".join(kiln.models.names())


class _Progress:
    """Prints numbered steps with their duration: long work is never silent."""

    def __init__(self, total: int) -> None:
        self.total, self.index = total, 0

    def step(self, text: str):
        self.index += 1
        print(f"[{self.index}/{self.total}] {text} ...", end="", flush=True)
        return _Timer()


class _Timer:
    def __enter__(self):
        self.start = time.perf_counter()
        return self

    def __exit__(self, exc_type, *_):
        if exc_type is None:
            print(f" {time.perf_counter() - self.start:.2f} s", flush=True)
        else:
            print(" failed", flush=True)


def _outputs_as_list(value) -> list[torch.Tensor]:
    return list(value) if isinstance(value, (tuple, list)) else [value]


def evaluate(program_bytes: bytes, inputs, reference: list[torch.Tensor]) -> list[tuple[float, bool]]:
    """Runs the program on Kiln's runtime: (max abs error / max |reference|, top-1 agrees) per output."""
    from kiln.runtime import Runtime

    outputs = Runtime().load_program(program_bytes).load_method("forward").execute(list(inputs))
    results = []
    for got, ref in zip(outputs, reference):
        got_np, ref_np = np.asarray(got), ref.detach().numpy()
        scale = max(float(np.abs(ref_np).max()), 1e-12)
        top1 = bool(got_np.reshape(-1).argmax() == ref_np.reshape(-1).argmax())
        results.append((float(np.abs(got_np - ref_np).max()) / scale, top1))
    return results


def run(args: argparse.Namespace) -> int:
    import kiln
    import kiln.models

    steps = 3 + int(args.evaluate)
    progress = _Progress(steps)
    with progress.step(f"building model {args.model_name}"):
        model, inputs = kiln.models.load(args.model_name)
        with torch.no_grad():
            reference = _outputs_as_list(model(*inputs))
    with progress.step("exporting, lowering to out-variant kernels, planning memory"):
        program = kiln.export(model, inputs, plan_inputs=not args.unplanned_io,
                              plan_outputs=not args.unplanned_io)
    output = args.output or Path(f"{Path(args.model_name.split(':')[-1]).stem}.pte")
    with progress.step(f"writing {output}"):
        output.parent.mkdir(parents=True, exist_ok=True)
        program.save(output)
    if args.intermediates:
        args.intermediates.mkdir(parents=True, exist_ok=True)
        for i, x in enumerate(inputs):
            np.save(args.intermediates / f"input_{i}.npy", x.detach().numpy())
        for i, y in enumerate(reference):
            np.save(args.intermediates / f"reference_output_{i}.npy", y.detach().numpy())
        (args.intermediates / "summary.txt").write_text(program.summary() + "\n")
    results = None
    if args.evaluate:
        with progress.step("evaluating on Kiln's runtime against eager PyTorch"):
            results = evaluate(output.read_bytes(), inputs, reference)

    print()
    print(program.summary())
    print(f"program file: {output} ({output.stat().st_size:,} bytes)")
    if args.intermediates:
        print(f"intermediates: {args.intermediates}/")
    if results is not None:
        worst = max(err for err, _ in results)
        for i, (err, top1) in enumerate(results):
            print(f"evaluate: output {i}: max abs error {err:.2e} of max |eager|, "
                  f"top-1 {'agrees' if top1 else 'DIFFERS'}")
        if worst > 1e-4:
            print(f"error: Kiln's output differs from eager PyTorch by {worst:.2e} (limit 1e-4)", file=sys.stderr)
            return 1
    return 0


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.debug else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")
    try:
        return run(args)
    except Exception as error:  # noqa: BLE001 - user errors end in one line, not a traceback
        if args.debug or not _is_user_error(error):
            raise
        print(f"\nerror: {error}", file=sys.stderr)
        return 2


def _is_user_error(error: Exception) -> bool:
    import kiln
    import kiln.models

    user_errors: tuple[type[BaseException], ...] = (kiln.models.UnknownModelError, kiln.models.ModelFileError)
    for name in ("KilnError",):
        cls = getattr(kiln, name, None)
        if isinstance(cls, type):
            user_errors += (cls,)
    runtime_error = getattr(__import__("kiln.runtime", fromlist=["KilnRuntimeError"]), "KilnRuntimeError", None)
    if isinstance(runtime_error, type):
        user_errors += (runtime_error,)
    return isinstance(error, user_errors)


if __name__ == "__main__":
    sys.exit(main())
