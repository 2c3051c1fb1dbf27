"""The .pte bytes: header, alignment, segment bounds, constants, round trips."""

from __future__ import annotations

import struct

import numpy as np
import pytest
import torch

import kiln
from kiln.serialize import program_generated as pte
from kiln.serialize import read_pte


def header_fields(data: bytes) -> tuple[int, int, int, int]:
    """(length, program_size, segment_base_offset, segment_data_size) read by hand."""
    assert data[8:12] == b"eh00"
    return struct.unpack_from("<IQQQ", data, 12)


def test_header_and_segment_layout(example) -> None:
    _, model, inputs = example
    data = kiln.export(model, inputs).to_bytes()

    assert data[4:8] == b"ET12"
    length, program_size, segment_base, segment_size = header_fields(data)
    assert length == 32
    # The root table lies inside the program part; segments start at a 128 multiple after it.
    (root_offset,) = struct.unpack_from("<I", data, 0)
    assert 40 <= root_offset < program_size
    assert segment_base % 128 == 0
    assert program_size <= segment_base < program_size + 128
    assert segment_base + segment_size == len(data)

    program = pte.Program.GetRootAs(data, 0)
    assert program.Version() == 0
    for i in range(program.SegmentsLength()):
        segment = program.Segments(i)
        assert segment.Offset() % 128 == 0
        assert segment.Offset() + segment.Size() <= segment_size


def test_constants_are_aligned_and_hold_the_parameters(small_cnn) -> None:
    model, inputs = small_cnn
    data = kiln.export(model, inputs).to_bytes()
    program, segments = read_pte(data)
    constant_segment = program.constantSegment
    offsets = [int(o) for o in constant_segment.offsets]
    blob = segments[constant_segment.segmentIndex]
    assert offsets[0] == 0
    assert all(offset % 16 == 0 for offset in offsets)

    # Every parameter of the model appears, byte for byte, at its tensor's offset.
    plan = program.executionPlan[0]
    constants = [v.val for v in plan.values if v.valType == pte.KernelTypes.Tensor and v.val.dataBufferIdx > 0]
    for tensor in constants:
        assert tensor.allocationInfo is None
    found = 0
    for name, parameter in model.named_parameters():
        expected = parameter.detach().contiguous().numpy().tobytes()
        matches = [
            t for t in constants
            if tuple(t.sizes) == tuple(parameter.shape)
            and blob[offsets[t.dataBufferIdx] : offsets[t.dataBufferIdx] + len(expected)] == expected
        ]  # fmt: skip
        assert matches, f"parameter {name} not found in the constant segment"
        found += 1
    assert found == len(list(model.parameters()))


def test_round_trip_through_generated_reader(example) -> None:
    _, model, inputs = example
    program = kiln.export(model, inputs)
    data = program.to_bytes()
    again = kiln.Program.from_bytes(data)
    assert again.method_names == ["forward"]
    assert again.operators == program.operators
    assert again.methods == program.methods
    assert again.constant_bytes == program.constant_bytes
    # Unpacking and packing again with the object API gives the same bytes.
    program_t, segments = read_pte(data)
    assert kiln.Program(program_t, segments).to_bytes() == data


def test_save_and_load(tmp_path, small_cnn) -> None:
    model, inputs = small_cnn
    program = kiln.export(model, inputs)
    path = program.save(tmp_path / "nested" / "cnn.pte")
    loaded = kiln.Program.load(path)
    assert path.read_bytes() == program.to_bytes()
    assert loaded.planned_buffer_sizes == program.planned_buffer_sizes
    assert loaded.producer == f"kiln {kiln.__version__}"


def test_summary_counts_operators(mv2_block) -> None:
    model, inputs = mv2_block
    program = kiln.export(model, inputs)
    info = program.method("forward")
    convolutions = sum(isinstance(m, torch.nn.Conv2d) for m in model.modules())
    batch_norms = sum(isinstance(m, torch.nn.BatchNorm2d) for m in model.modules())
    assert info.operator_counts["aten::convolution.out"] == convolutions
    assert info.operator_counts["aten::_native_batch_norm_legit_no_training.out"] == batch_norms
    assert info.num_instructions == sum(info.operator_counts.values())
    text = program.summary()
    assert "aten::hardtanh.out" in text
    assert f"{program.planned_buffer_sizes[0]:,} bytes" in text
    assert info.inputs[0].shape == tuple(inputs[0].shape)


def test_container_metadata_is_the_pytree_spec(small_cnn) -> None:
    model, inputs = small_cnn
    program = pte.Program.GetRootAs(kiln.export(model, inputs).to_bytes(), 0)
    meta = program.ExecutionPlan(0).ContainerMetaType()
    exported = torch.export.export(model, inputs)
    spec_in = torch.utils._pytree.treespec_dumps(exported.call_spec.in_spec)
    spec_out = torch.utils._pytree.treespec_dumps(exported.call_spec.out_spec)
    assert meta.EncodedInpStr().decode() == spec_in
    assert meta.EncodedOutStr().decode() == spec_out


@pytest.mark.parametrize(
    "corrupt, message",
    [
        (lambda d: d[:4] + b"XX12" + d[8:], "identifier"),
        (lambda d: d[: len(d) - 100], "outside the file"),
        (lambda d: d[:12] + struct.pack("<I", 4) + d[16:], "header length"),
    ],
)
def test_corrupt_files_raise_serialization_error(small_cnn, corrupt, message) -> None:
    model, inputs = small_cnn
    data = kiln.export(model, inputs).to_bytes()
    with pytest.raises(kiln.SerializationError, match=message):
        kiln.Program.from_bytes(corrupt(data))


def test_identical_constants_are_stored_once() -> None:
    class TwoSameWeights(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.a = torch.nn.Parameter(torch.full((64,), 0.5))
            self.b = torch.nn.Parameter(torch.full((64,), 0.5))

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return x * self.a + x * self.b

    program = kiln.export(TwoSameWeights(), (torch.randn(64),))
    program_t, segments = read_pte(program.to_bytes())
    assert len(program_t.constantSegment.offsets) == 2  # reserved entry + one tensor
    stored = np.frombuffer(segments[0][:256], dtype=np.float32)
    assert np.all(stored == 0.5)
