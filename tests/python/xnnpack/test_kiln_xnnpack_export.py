"""Kiln's XNNPACK programs (``kiln.export(..., partitioner=XnnpackPartitioner())``) run in
ExecuTorch 1.5.1's runtime and its XnnpackBackend, the independent judge of the payload:

* fp32: ExecuTorch's outputs match eager PyTorch (1e-5 relative);
* int8 (``XnnpackQuantizer``): they match the quantized PyTorch model within one output
  step (MobileNetV2: a few steps, its ~50 requantizations round differently);
* what XNNPACK cannot run stays on the portable kernels, with the reason in the report.

Every model is compiled once per session and all programs run in one ExecuTorch process.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

import kiln.models

pytestmark = [pytest.mark.executorch, pytest.mark.slow]


def _programs_module():
    name = "kiln_test_xnnpack_programs"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, Path(__file__).with_name("xnnpack_programs.py"))
        module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
        sys.modules[name] = module
        spec.loader.exec_module(module)  # type: ignore[union-attr]
    return sys.modules[name]


programs = _programs_module()
FLAVOURS = ["fp32", "int8"]
# MobileNetV2's int8 outputs: XNNPACK requantizes in fixed point, PyTorch's reference in
# float; over ~50 layers the roundings add up to a few output steps.
DEEP_MODEL_STEPS = {"mv2": 12}


@pytest.fixture(scope="module")
def compiled(tmp_path_factory: pytest.TempPathFactory, executorch_python: Path) -> dict:
    items = []
    for name in programs.OP_MODELS:
        model, inputs = programs.op_model(name, programs.OP_MODELS)
        items += [programs.compile_model(name, model, inputs, flavour) for flavour in FLAVOURS]
    for name in programs.MIXED_MODELS:
        model, inputs = programs.op_model(name, programs.MIXED_MODELS)
        items += [programs.compile_model(name, model, inputs, flavour) for flavour in FLAVOURS]
    for name in programs.ZOO_MODELS:
        model, inputs = kiln.models.get(name)
        items += [programs.compile_model(name, model, inputs, flavour) for flavour in FLAVOURS]
    programs.run_in_executorch(items, tmp_path_factory.mktemp("kiln_xnnpack_programs"), executorch_python)
    return {item.key: item for item in items}


def _ran(item) -> list[np.ndarray]:
    assert not item.executorch_error, f"ExecuTorch could not run {item.key}:\n{item.executorch_error}"
    assert len(item.executorch) == len(item.expected)
    return item.executorch


def _check(item) -> None:
    for got, expected in zip(_ran(item), item.expected):
        assert got.shape == expected.shape and got.dtype == expected.dtype
        if item.flavour == "fp32":
            assert programs.max_relative_error(got, expected) <= 1e-5, item.key
        else:
            steps = float(np.abs(got.astype(np.float64) - expected).max()) / item.output_scale
            assert steps <= DEEP_MODEL_STEPS.get(item.name, 1) + 1e-3, f"{item.key}: {steps:.2f} steps apart"


@pytest.mark.parametrize("flavour", FLAVOURS)
@pytest.mark.parametrize("name", list(programs.OP_MODELS))
def test_operator_runs_in_executorch_xnnpack(compiled: dict, name: str, flavour: str) -> None:
    item = compiled[f"{name}_{flavour}"]
    report = item.program.compile_report.partition_report
    assert report.delegated_nodes > 0 and report.cpu_nodes == 0, report.table()
    assert {d.report.backend_id for d in item.program.compile_report.delegates} == {"XnnpackBackend"}
    _check(item)


@pytest.mark.parametrize("flavour", FLAVOURS)
@pytest.mark.parametrize("name", programs.ZOO_MODELS)
def test_zoo_model_runs_in_executorch_xnnpack(compiled: dict, name: str, flavour: str) -> None:
    item = compiled[f"{name}_{flavour}"]
    report = item.program.compile_report.partition_report
    assert report.cpu_nodes == 0, report.table()
    assert len(item.program.compile_report.delegates) == 1
    _check(item)


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_unsupported_operators_stay_on_cpu_with_reason(compiled: dict, flavour: str) -> None:
    item = compiled[f"cat_tanh_{flavour}"]
    report = item.program.compile_report.partition_report
    reasons = {d.operator.split(".")[0]: d.reason for d in report.rejections()}
    assert "concatenate" in reasons["aten::cat"] and "tanh" in reasons["aten::tanh"], report.table()
    assert report.delegated_nodes > 0
    if flavour == "fp32":
        # (ExecuTorch's pybindings have no quantized_decomposed CPU kernels for the int8 one.)
        _check(item)


def test_payload_has_executorch_xnnpack_header(compiled: dict) -> None:
    blob = compiled["conv2d_fp32"].program.compile_report.delegates[0].preprocessed.blob
    assert blob[:8] == b"\0\0\0\0XH00"
    flatbuffer_offset = int.from_bytes(blob[10:14], "little")
    constants_offset, constants_size = int.from_bytes(blob[18:22], "little"), int.from_bytes(blob[22:30], "little")
    assert blob[flatbuffer_offset + 4:flatbuffer_offset + 8] == b"XN01"
    assert constants_offset % 16 == 0 and constants_offset + constants_size == len(blob)
    assert constants_size >= (8 * 4 * 3 * 3 + 8) * 4  # the fp32 weights and bias


KILN_RUNTIME_CASES = ["conv2d", "depthwise_conv2d", "linear", "add_relu", "scale_shift_constants", "hardswish",
                      "max_pool2d", "global_average", "mean_hw", "softmax", "pad", "batch_norm", *programs.ZOO_MODELS]


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("flavour", FLAVOURS)
@pytest.mark.parametrize("name", KILN_RUNTIME_CASES)
def test_kiln_runtime_matches_executorch(compiled: dict, name: str, flavour: str, threads: int) -> None:
    """Kiln's runtime (its XnnpackBackend) runs the same program as ExecuTorch's, with the same
    outputs: bit-exact in int8, within float rounding (XNNPACK versions differ) in fp32."""
    from kiln.runtime import Runtime

    item = compiled[f"{name}_{flavour}"]
    reference = _ran(item)
    method = Runtime().load_program(item.program.to_bytes()).load_method("forward", threads=threads)
    outputs = [np.asarray(o) for o in method.execute(list(item.inputs))]
    for got, expected in zip(outputs, reference):
        assert got.shape == expected.shape and got.dtype == expected.dtype
        if flavour == "int8":
            np.testing.assert_array_equal(got, expected)
        else:
            assert programs.max_relative_error(got, expected) <= 1e-5, item.key


def test_kiln_runtime_runs_int8_program_with_cpu_parts(compiled: dict) -> None:
    """The int8 program whose concatenate and tanh stay on the portable kernels (ExecuTorch's
    pybindings lack those quantized CPU kernels, Kiln's runtime has them)."""
    from kiln.runtime import Runtime

    item = compiled["cat_tanh_int8"]
    method = Runtime().load_program(item.program.to_bytes()).load_method("forward")
    got = np.asarray(method.execute(list(item.inputs))[0])
    steps = float(np.abs(got.astype(np.float64) - item.expected[0]).max()) / item.output_scale
    assert got.shape == item.expected[0].shape and steps <= 1 + 1e-3
