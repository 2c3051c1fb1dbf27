"""The delegate boundary: Python's copy rule (kiln.backends.arm.delegate_io) agrees with the
runtime's (backends/arm/runtime/io_layout.cpp), and every compile checks its delegates' IO.

Agreement is tested on real payloads run by the runtime's EthosUBackend on the virtual
NPU: a relu compiled by Vela, its payload IO shapes rewritten to many shapes of the same
size, called with tensors of many shapes. The runtime must accept exactly the pairs Python
accepts, and the result shows which copy it made on the way in and out.
"""

from __future__ import annotations

import dataclasses
import itertools
from types import ModuleType
from typing import Any

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import kiln
import kiln.runtime
from kiln import _runtime
from kiln.backends.arm import EthosUCompileSpec, EthosUPartitioner, EthosUQuantizer
from kiln.backends.arm.delegate_io import (
    BoundaryCopy, DelegateIoError, ProgramTensor, check_boundary, choose_boundary_copy, padded, with_tosa_io_shapes,
)
from kiln.backends.arm.payload import pack
from kiln.backends.arm.vela import compile_tosa

TARGET = "ethos-u55-128"


@pytest.fixture(scope="module")
def relu_payload(qdq: ModuleType) -> Any:
    """``shape -> (VelaResult, specs, zero point, TosaSubgraph)`` of a relu keeping its input's
    quantization: a CLAMP at the zero point, element by element."""
    from kiln.backends.arm.tosa import lower_to_tosa

    spec = EthosUCompileSpec(TARGET)
    cache: dict[tuple[int, ...], Any] = {}

    def get(shape: tuple[int, ...]) -> Any:
        if shape not in cache:
            case, floats = qdq._unary(F.relu, shape=shape, share_output=True)
            tosa = lower_to_tosa(qdq.export_graph(case, case.calibrate(*floats)), spec, name="relu")
            vela = compile_tosa(tosa.flatbuffer, spec, name="relu")
            cache[shape] = vela, spec.to_compile_specs(), case.in_qparams[0][1], tosa
        return cache[shape]

    return get


def _to_npu(x: np.ndarray, copy: BoundaryCopy) -> np.ndarray:
    return x.transpose(0, 2, 3, 1).reshape(-1) if copy == BoundaryCopy.PROGRAM_NCHW_NPU_NHWC else x.reshape(-1)


def _from_npu(flat: np.ndarray, shape: tuple[int, ...], copy: BoundaryCopy) -> np.ndarray:
    if copy == BoundaryCopy.PROGRAM_NCHW_NPU_NHWC:
        n, c, h, w = shape
        return flat.reshape(n, h, w, c).transpose(0, 3, 1, 2)
    return flat.reshape(shape)


SHAPES_210 = [(1, 5, 6, 7), (1, 6, 7, 5), (5, 6, 7), (210,), (1, 30, 7), (1, 5, 42), (2, 105), (1, 7, 5, 6)]
SHAPES_64 = [(1, 4, 4, 4), (4, 16), (64,), (1, 4, 16), (1, 16, 4)]


@pytest.mark.parametrize("npu_is_nhwc", [False, True])
@pytest.mark.parametrize("shapes", [SHAPES_210, SHAPES_64], ids=["210", "cube64"])
def test_python_rule_agrees_with_the_runtime(relu_payload: Any, shapes: list[tuple[int, ...]],
                                              npu_is_nhwc: bool) -> None:
    vela, specs, zero_point, _ = relu_payload(shapes[0])
    specs = [(k, bytes(v)) for k, v in specs] + ([("io_layout", b"nhwc")] if npu_is_nhwc else [])
    rng = np.random.default_rng(0)
    accepted = rejected = 0
    for npu_shape, in_shape, out_shape in itertools.product(shapes, shapes[:4], shapes[:4]):
        buffer = dataclasses.replace(vela.inputs[0], shape=padded(npu_shape))
        result = dataclasses.replace(vela, inputs=[buffer], outputs=[dataclasses.replace(vela.outputs[0],
                                                                                          shape=padded(npu_shape))])
        x = rng.integers(-128, 128, size=in_shape).astype(np.int8)
        out = np.zeros(out_shape, np.int8)
        try:  # the runtime checks the outputs first
            copy_out = choose_boundary_copy(ProgramTensor(out_shape, "int8"), buffer, npu_is_nhwc)
            copy_in = choose_boundary_copy(ProgramTensor(in_shape, "int8"), buffer, npu_is_nhwc)
        except DelegateIoError as error:
            with pytest.raises(kiln.runtime.KilnRuntimeError) as raised:
                _runtime.ethos_u_run_payload(pack(result), specs, [x], [out])
            assert raised.value.error_name == "DelegatePayloadIoMismatch"
            assert any(str(error) in line for line in raised.value.log), (str(error), raised.value.log)
            rejected += 1
            continue
        _runtime.ethos_u_run_payload(pack(result), specs, [x], [out])
        # The NPU clamps element by element: what comes back shows both copies.
        expected = _from_npu(np.maximum(_to_npu(x, copy_in), zero_point), out_shape, copy_out)
        assert np.array_equal(out, expected), (npu_shape, in_shape, out_shape, copy_in, copy_out)
        accepted += 1
    assert accepted and rejected


def test_other_dtypes_and_sizes_are_refused_by_both(relu_payload: Any) -> None:
    vela, specs, _, _ = relu_payload((1, 5, 6, 7))
    specs = [(k, bytes(v)) for k, v in specs]
    for x in (np.zeros((1, 5, 6, 7), np.int16), np.zeros((1, 5, 6, 6), np.int8)):
        dtype = {np.dtype(np.int8): "int8", np.dtype(np.int16): "int16"}[x.dtype]
        with pytest.raises(DelegateIoError) as python:
            choose_boundary_copy(ProgramTensor(x.shape, dtype), vela.inputs[0], True)
        with pytest.raises(kiln.runtime.KilnRuntimeError) as runtime:
            _runtime.ethos_u_run_payload(pack(vela), specs, [x], [np.zeros((1, 5, 6, 7), np.int8)])
        assert any(str(python.value) in line for line in runtime.value.log), runtime.value.log


def test_boundary_check_refuses_a_layout_the_runtime_would_misread(relu_payload: Any) -> None:
    """With NHWC program tensors (``nhwc_io``) a [1, 4, 4, 4] buffer reads both ways and the
    runtime, told the NPU is NHWC, would permute: the check says so at compile time."""
    vela, _, _, tosa = relu_payload((1, 4, 4, 4))
    fixed = with_tosa_io_shapes(vela, tosa)
    check_boundary(tosa, fixed, nhwc_io=False)
    with pytest.raises(DelegateIoError, match="input 0 .*reads both ways"):
        check_boundary(tosa, fixed, nhwc_io=True)
    _, _, _, wide = relu_payload((1, 5, 6, 7))
    check_boundary(wide, with_tosa_io_shapes(relu_payload((1, 5, 6, 7))[0], wide), nhwc_io=True)


def test_vela_io_shapes_become_the_tosa_shapes(qdq: ModuleType) -> None:
    """Vela folds a RESHAPE at an input into the input's shape ([1, 16, 32] viewed as
    [1, 16, 4, 8] comes back as (1, 1, 1, 16, 4, 8)); the payload carries the TOSA shape."""
    from kiln.backends.arm.tosa import lower_to_tosa

    case, floats = qdq.QCase(lambda self, x: F.relu(x.view(1, 16, 4, 8) * 2.0)), [torch.randn(1, 16, 32)]
    tosa = lower_to_tosa(qdq.export_graph(case, case.calibrate(*floats)), EthosUCompileSpec(TARGET), name="view")
    vela = compile_tosa(tosa.flatbuffer, EthosUCompileSpec(TARGET), name="view")
    assert vela.inputs[0].shape == (1, 1, 1, 16, 4, 8)  # what Vela reports
    fixed = with_tosa_io_shapes(vela, tosa)
    assert fixed.inputs[0].shape == (1, 1, 1, 1, 16, 32)
    assert fixed.outputs[0].shape == padded(tosa.outputs[0].tosa_shape)
    assert (fixed.inputs[0].offset, fixed.inputs[0].region) == (vela.inputs[0].offset, vela.inputs[0].region)
    broken = dataclasses.replace(vela, inputs=[dataclasses.replace(vela.inputs[0], shape=(1, 1, 1, 16, 4, 7))])
    with pytest.raises(DelegateIoError, match="does not hold the TOSA tensor"):
        with_tosa_io_shapes(broken, tosa)


class ViewedInput(torch.nn.Module):
    """An attention-style view of the input into heads, the shape that once compiled and
    then could not run (DelegatePayloadIoMismatch)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, tokens, dim = x.shape
        return torch.relu(x.view(batch, tokens, 4, dim // 4) * 2.0)


def test_a_program_with_a_viewed_input_compiles_and_runs(tmp_path) -> None:
    generator = torch.Generator().manual_seed(0)
    inputs = (torch.randn(1, 16, 32, generator=generator),)
    spec = EthosUCompileSpec(TARGET)
    quantized = kiln.quantize(ViewedInput(), inputs, EthosUQuantizer(spec), [inputs], progress=False)
    program = kiln.export(quantized, partitioner=EthosUPartitioner(spec))
    assert len(program.compile_report.delegates) == 1
    method = kiln.runtime.Runtime().load_program(program.to_bytes()).load_method("forward")
    (result,) = method.execute([inputs[0].numpy()])
    np.testing.assert_array_equal(np.asarray(result), quantized.module()(*inputs).numpy())
