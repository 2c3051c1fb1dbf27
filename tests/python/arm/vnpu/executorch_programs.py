"""ExecuTorch's own Ethos-U programs for public architectures, run on Kiln (shared by
test_delegate_executorch_models.py and benchmarks/executorch_programs.py).

The architectures are the user-written ones of tests/python/arm/e2e (Wav2Letter-style,
DeepLabV3-style, Conformer-style) and kiln.models (a DeiT-style ViT, MobileNetV3 in
torchvision's structure), at a reduced size for tests and at full size for the benchmark.
ExecuTorch 1.5.1's Arm flow (benchmarks/executorch_arm_programs.py, in its own venv) compiles
each into a .pte and dumps the TOSA graph of every delegate. Kiln then runs

* every delegate's payload on the virtual NPU (``ethos_u_run_payload``) on random inputs,
  against the TOSA reference model on the graph ExecuTorch lowered: must be bit-exact;
* the whole program on Kiln's runtime, against ExecuTorch's quantized PyTorch model (its
  expectation: ExecuTorch's host runtime cannot run Ethos-U programs), in output steps.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import json
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np
import torch

_HERE = Path(__file__).resolve().parent
_E2E_PACKAGE = "kiln_e2e_test_models"

WORKER = _HERE.parents[3] / "benchmarks" / "executorch_arm_programs.py"
TARGETS = ("ethos-u55-128", "ethos-u85-256")

#: (model, example inputs, calibration samples)
Built = tuple[torch.nn.Module, tuple[torch.Tensor, ...], list[tuple[torch.Tensor, ...]]]


def _e2e_module(name: str) -> Any:
    """A model module of tests/python/arm/e2e (they import each other relatively), imported
    under a package name of its own whatever way this file was imported."""
    if _E2E_PACKAGE not in sys.modules:
        spec = importlib.machinery.ModuleSpec(_E2E_PACKAGE, None, is_package=True)
        spec.submodule_search_locations = [str(_HERE.parent / "e2e")]
        sys.modules[_E2E_PACKAGE] = importlib.util.module_from_spec(spec)
    return importlib.import_module(f"{_E2E_PACKAGE}.{name}")


def _image_samples(model: torch.nn.Module, shape: tuple[int, ...]) -> Built:
    from kiln.models.calibration import example_input

    samples = [(example_input(shape, seed=seed),) for seed in range(2)]
    return model.eval(), samples[0], samples


def wav2letter(full: bool) -> Built:
    model, inputs, samples = _e2e_module("speech_models").wav2letter_head()
    return model, inputs, samples[:2]


def deeplab_v3(full: bool) -> Built:
    model, inputs, samples = _e2e_module("segmentation_models").deeplab_v3(size=128 if full else 32)
    return model, inputs, samples[:2]


def conformer(full: bool) -> Built:
    speech = _e2e_module("speech_models")
    model, inputs, samples = speech.conformer()
    if not full:  # one layer instead of two: half of ExecuTorch's compile time
        torch.manual_seed(0)
        model = speech.settle_batch_norms(speech.Conformer(layers=1), samples)
    return model, inputs, samples[:2]


def deit(full: bool) -> Built:
    from kiln.models.deit import VisionTransformer

    torch.manual_seed(0)
    if full:
        return _image_samples(VisionTransformer(), (1, 3, 224, 224))
    return _image_samples(VisionTransformer(size=64, dim=48, depth=1, heads=3, classes=10), (1, 3, 64, 64))


def mobilenet_v3(full: bool) -> Built:
    from kiln.models.calibration import reestimate_batchnorm
    from kiln.models.mobilenet_v3_torchvision import MobileNetV3

    torch.manual_seed(0)
    model = MobileNetV3(classes=1000 if full else 10)
    if not full:  # the stem and the first five blocks (squeeze-excite, hardswish, a residual add)
        model.features = model.features[:6]
        model.classifier[0] = torch.nn.Linear(40, 64)
        model.classifier[3] = torch.nn.Linear(64, 10)
    shape = (1, 3, 224, 224) if full else (1, 3, 32, 32)
    reestimate_batchnorm(model, shape)
    return _image_samples(model, shape)


MODELS: dict[str, Callable[[bool], Built]] = {
    "wav2letter": wav2letter, "deeplab_v3": deeplab_v3, "conformer": conformer, "deit": deit,
    "mobilenet_v3": mobilenet_v3,
}


class A16w8Cnn(torch.nn.Module):
    """conv, depthwise conv, a residual add, ReLU, average pooling and a linear head: operators
    ExecuTorch's Ethos-U flow quantizes to 16 bits on both Ethos-U55 and U85."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.depthwise = torch.nn.Conv2d(8, 8, 3, padding=1, groups=8)
        self.project = torch.nn.Conv2d(8, 8, 1)
        self.head = torch.nn.Linear(8, 5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.relu(self.conv(x))
        z = self.project(torch.relu(self.depthwise(y))) + y
        z = torch.nn.functional.avg_pool2d(z, 2)
        return self.head(z.mean((2, 3)))


class A16w8Mlp(torch.nn.Module):
    """linear layers with sigmoid and tanh between them (16-bit table functions)."""

    def __init__(self) -> None:
        super().__init__()
        self.fc1 = torch.nn.Linear(16, 32)
        self.fc2 = torch.nn.Linear(32, 32)
        self.fc3 = torch.nn.Linear(32, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc3(torch.tanh(self.fc2(torch.sigmoid(self.fc1(x)))))


def _small(cls: type[torch.nn.Module], shape: tuple[int, ...]) -> Callable[[bool], Built]:
    def build(full: bool) -> Built:
        torch.manual_seed(0)
        model = cls().eval()
        generator = torch.Generator().manual_seed(1)
        samples = [(torch.randn(shape, generator=generator),) for _ in range(4)]
        return model, samples[0], samples

    return build


#: Small models for ExecuTorch's a16w8 flow (16-bit activations, int8 weights).
A16W8_MODELS: dict[str, Callable[[bool], Built]] = {
    "a16w8_cnn": _small(A16w8Cnn, (1, 3, 8, 8)), "a16w8_mlp": _small(A16w8Mlp, (1, 16)),
}


@dataclass
class EtProgram:
    """ExecuTorch's compiled program and what checking it needs."""

    name: str
    target: str
    folder: Path
    inputs: tuple[torch.Tensor, ...]
    seconds: float = 0.0  # ExecuTorch's quantize + lower, as its worker measured it
    output_scales: list[float] = field(default_factory=list)
    tosa: list[Path] = field(default_factory=list)  # one per delegate, in partition tag order
    error: str = ""

    @property
    def pte(self) -> Path:
        return self.folder / "program.pte"

    @property
    def pte_cortex_m(self) -> Path:
        """a16w8 programs: the same program with ``cortex_m::`` quantize/dequantize on the CPU."""
        return self.folder / "program_cortex_m.pte"

    def expected_outputs(self) -> list[np.ndarray]:
        with np.load(self.folder / "quantized.npz") as arrays:
            return [arrays[f"output_{k}"] for k in range(len(arrays.files))]


def export(model: torch.nn.Module, inputs: tuple[torch.Tensor, ...]) -> torch.export.ExportedProgram:
    """torch.export, strict first: the Conformer's padding mask (a data-dependent size in
    non-strict mode) exports only strictly; the others either way."""
    try:
        return torch.export.export(model, inputs, strict=True)
    except Exception:  # noqa: BLE001 - any strict-mode failure: the non-strict export decides
        return torch.export.export(model, inputs, strict=False)


def compile_with_executorch(python: Path, name: str, target: str, folder: Path, full: bool = False,
                            timeout: float = 3600, a16w8: bool = False) -> EtProgram:
    """ExecuTorch's Arm flow on ``MODELS[name]`` (or ``A16W8_MODELS[name]``) for ``target`` (its
    worker in its venv); ``a16w8``: its 16-bit activation, int8 weight quantization config, and
    also the program with ``cortex_m::`` quantize/dequantize (``EtProgram.pte_cortex_m``)."""
    model, inputs, samples = {**MODELS, **A16W8_MODELS}[name](full)
    folder.mkdir(parents=True, exist_ok=True)
    pt2 = folder / "model.pt2"
    torch.export.save(export(model, inputs), str(pt2))
    paths = []
    for i, sample in enumerate(samples):
        paths.append(folder / f"sample_{i}.npz")
        np.savez(paths[-1], **{f"input_{k}": x.numpy() for k, x in enumerate(sample)})
    program = EtProgram(name, target, folder / target, inputs)
    start = time.perf_counter()
    try:
        result = subprocess.run([str(python), str(WORKER), str(pt2), str(program.folder), "--target", target,
                                 *(["--a16w8", "--cortex-m-qdq"] if a16w8 else []), "--samples", *map(str, paths)],
                                capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        program.error = f"ExecuTorch did not finish in {timeout:.0f} s"
        return program
    lines = [line for line in result.stdout.splitlines() if line.startswith("{")]
    if not lines:
        tail = (result.stderr.strip().splitlines() or ["no output"])[-1]
        program.error = f"worker exited {result.returncode}: {tail}"
        return program
    data = json.loads(lines[-1])
    program.seconds = sum(data.get("seconds", {}).values()) or time.perf_counter() - start
    program.error = data.get("error", "")
    program.output_scales = data.get("output_scales", [])
    program.tosa = [program.folder / "tosa" / f for f in data.get("tosa", [])]
    return program


def program_cache(python: Path, tmp_path_factory: Any, *, a16w8: bool = False) -> Callable[[str, str], EtProgram]:
    """A test module's ExecuTorch programs, each compiled on first use (``get(name, target)``);
    skips when ExecuTorch's venv lacks its Arm flow's tools."""
    import pytest

    probe = subprocess.run([str(python), "-c", "import ethosu.vela, tosa_serializer"], capture_output=True, check=False)
    if probe.returncode != 0:
        pytest.skip("ExecuTorch's Arm flow needs ethos-u-vela==5.1.0 and tosa-tools==2026.5.0 in its venv")
    cache: dict[tuple[str, str], EtProgram] = {}
    kind = " a16w8" if a16w8 else ""

    def get(name: str, target: str) -> EtProgram:
        if (name, target) not in cache:
            folder = tmp_path_factory.mktemp(f"et_{name}")
            cache[name, target] = compile_with_executorch(python, name, target, folder, timeout=600, a16w8=a16w8)
        program = cache[name, target]
        assert not program.error, f"ExecuTorch could not compile {name}{kind} for {target}: {program.error}"
        return program

    return get


def delegate_payloads(path: Path) -> list[tuple[str, bytes, list[tuple[str, bytes]]]]:
    """(backend id, blob, compile specs) of every delegate of ``forward``, in plan order."""
    from kiln.program import Program
    from kiln.serialize import program_generated as pte

    program = Program.load(path)
    flat = program.flatbuffer
    found = []
    for delegate in flat.executionPlan[0].delegates or []:
        reference = delegate.processed
        if reference.location == pte.DataLocation.SEGMENT:
            blob = bytes(program._segments[int(reference.index)])
        else:
            blob = bytes(bytearray(flat.backendDelegateData[int(reference.index)].data))
        specs = [(bytes(s.key).decode(), bytes(bytearray(s.value if s.value is not None else [])))
                 for s in delegate.compileSpecs or []]
        found.append((bytes(delegate.id).decode(), blob, specs))
    return found


_TOSA_NUMPY = {1: np.bool_, 3: np.int8, 4: np.int16, 5: np.int32}  # tosa.DType BOOL, INT8, INT16, INT32


def tosa_io(graph: bytes) -> tuple[list[tuple[tuple[int, ...], type]], list[tuple[tuple[int, ...], type]]]:
    """(shape, numpy dtype) of the graph's inputs and outputs."""
    from tosa.TosaGraph import TosaGraph

    block = TosaGraph.GetRootAs(graph, 0).Regions(0).Blocks(0)
    tensors = {block.Tensors(i).Name(): block.Tensors(i) for i in range(block.TensorsLength())}

    def describe(name: bytes) -> tuple[tuple[int, ...], type]:
        tensor = tensors[name]
        return tuple(int(d) for d in tensor.ShapeAsNumpy()), _TOSA_NUMPY[tensor.Type()]

    return ([describe(block.Inputs(i)) for i in range(block.InputsLength())],
            [describe(block.Outputs(i)) for i in range(block.OutputsLength())])


def _signature(inputs: list[tuple[int, ...]], outputs: list[tuple[int, ...]]) -> tuple:
    """IO shapes without their 1s (Vela's payload pads every shape to 6 dims, and
    ExecuTorch's boundary views may add or drop unit dims)."""
    def strip(shape: tuple[int, ...]) -> tuple[int, ...]:
        return tuple(d for d in shape if d != 1)

    return tuple(map(strip, inputs)), tuple(map(strip, outputs))


def match_tosa_graphs(payloads: list[tuple[str, bytes, list]], graphs: list[Path]) -> list[Path]:
    """The TOSA graph of each delegate. ExecuTorch names the graphs by partition tag, whose
    order is not the program's delegate order: match by IO shapes (tag order among equals)."""
    from kiln.backends.arm.payload import unpack

    if len(payloads) != len(graphs):
        raise AssertionError(f"{len(payloads)} delegates but {len(graphs)} TOSA graphs")
    left = [(path, _signature(*([shape for shape, _ in side] for side in tosa_io(path.read_bytes()))))
            for path in graphs]
    matched = []
    for _, blob, _ in payloads:
        payload = unpack(blob)
        wanted = _signature([t.shape for t in payload.inputs], [t.shape for t in payload.outputs])
        index = next((i for i, (_, signature) in enumerate(left) if signature == wanted), None)
        if index is None:
            raise AssertionError(f"no TOSA graph has the IO shapes {wanted} of a delegate")
        matched.append(left.pop(index)[0])
    return matched


def _random(shape: tuple[int, ...], dtype: type, rng: np.random.Generator) -> np.ndarray:
    if dtype == np.bool_:
        return rng.integers(0, 2, size=shape).astype(np.bool_)
    if dtype == np.int32:  # integer side inputs (lengths, indices): small values
        return rng.integers(0, 32, size=shape).astype(np.int32)
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max + 1, size=shape).astype(dtype)


def delegate_mismatches(program: EtProgram, seeds: int = 2) -> list[int]:
    """Per delegate, how many output elements differ between the virtual NPU and the TOSA
    reference model, over ``seeds`` random inputs."""
    import tosa_reference_model

    from kiln import _runtime

    payloads = delegate_payloads(program.pte)
    differing = []
    for (backend, blob, specs), tosa_path in zip(payloads, match_tosa_graphs(payloads, program.tosa)):
        assert backend == "EthosUBackend", backend
        graph = tosa_path.read_bytes()
        input_types, output_types = tosa_io(graph)
        count = 0
        for seed in range(seeds):
            rng = np.random.default_rng(seed)
            inputs = [_random(shape, dtype, rng) for shape, dtype in input_types]
            outputs = [np.zeros(shape, dtype) for shape, dtype in output_types]
            _runtime.ethos_u_run_payload(blob, specs, inputs, outputs)
            references, status = tosa_reference_model.run(graph, inputs)
            assert status == tosa_reference_model.GraphStatus.TOSA_VALID, f"{tosa_path.name}: {status}"
            for got, reference in zip(outputs, references):
                expected = np.asarray(reference).view(got.dtype).reshape(got.shape)
                count += int(np.count_nonzero(got != expected))
        differing.append(count)
    return differing


def program_distance(program: EtProgram) -> list[float]:
    """Per output, the largest distance (in output steps) between Kiln running the whole
    program and ExecuTorch's quantized PyTorch model; NaN for outputs without a step."""
    from kiln.runtime import Runtime

    method = Runtime().load_program(program.pte).load_method("forward")
    got = method.execute([x.numpy() for x in program.inputs])
    distances = []
    for g, expected, step in zip(got, program.expected_outputs(), program.output_scales):
        g = np.asarray(g)
        if g.shape != expected.shape:
            raise AssertionError(f"output shape {g.shape}, ExecuTorch's model gives {expected.shape}")
        if not np.isfinite(step) or not np.issubdtype(g.dtype, np.floating):
            distances.append(float("nan") if not np.array_equal(g, expected) else 0.0)
            continue
        distances.append(float(np.max(np.abs(g.astype(np.float64) - expected.astype(np.float64)))) / step)
    return distances
