"""ETDumps recorded by kiln-run and the Python runtime: one profiling event per instruction,
intermediate values equal to eager PyTorch's, a full buffer that stops and counts drops,
and named errors for truncated or foreign files."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from kiln.devtools import Etdump, EtdumpError, Inspector, record_etdump
from kiln.program import Program
from kiln.runtime import Runtime


def test_kiln_run_records_every_instruction_and_its_output(smallcnn, cli, tmp_path: Path) -> None:
    done = cli("run", smallcnn.pte, "--input", smallcnn.input_files[0], "--iterations", "2", "--output-dir", "out",
               "--etdump", "dumps/run.etdp", "--debug-buffer", "dumps/run.bin", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    dump = Etdump.load(tmp_path / "dumps" / "run.etdp", tmp_path / "dumps" / "run.bin")
    instructions = Program.load(smallcnn.pte).method("forward").num_instructions
    assert [run.name for run in dump.runs] == ["Execute", "Execute"]
    for run in dump.runs:
        timed = [e for e in run.profile_events if e.instruction >= 0]
        assert [e.instruction for e in timed] == list(range(instructions))
        assert all(e.end >= e.start for e in run.profile_events)
        execute = next(e for e in run.profile_events if e.name == "Method::execute")
        assert all(execute.start <= e.start and e.end <= execute.end for e in timed)
    values = dump.runs[0].debug_events
    # The last kernel's output is the method's output; the first is the first convolution's.
    np.testing.assert_array_equal(values[-1].data, np.load(tmp_path / "out" / "output_0.npy"))
    with torch.no_grad():
        first_conv = smallcnn.model.features[0](smallcnn.inputs[0]).numpy()
    assert values[0].name == "aten::convolution.out"
    np.testing.assert_allclose(values[0].data, first_conv, rtol=1e-4, atol=1e-5)


def test_full_buffer_stops_recording_and_counts_drops(smallcnn, cli, tmp_path: Path) -> None:
    done = cli("run", smallcnn.pte, "--iterations", "50", "--etdump", "small.etdp", "--etdump-bytes", "8192",
               cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    line = next(l for l in done.stdout.splitlines() if l.startswith("etdump:"))
    recorded, dropped = int(line.split()[1]), int(line.split(",")[1].split()[0])
    assert dropped > 0 and recorded > 0
    dump = Etdump.load(tmp_path / "small.etdp")
    assert sum(len(run.events) for run in dump.runs) + len(dump.runs) >= recorded
    # Recording stopped at a run boundary or inside one, never past the buffer: every
    # event that is there is whole.
    assert all(e.end >= e.start for run in dump.runs for e in run.profile_events if e.end)


def test_python_runtime_records_an_etdump(smallcnn) -> None:
    method = Runtime().load_program(smallcnn.pte).load_method("forward")
    with record_etdump(method, intermediates=True) as recording:
        outputs = method.execute([smallcnn.inputs[0]])
    method.execute([smallcnn.inputs[0]])  # after the block: not recorded
    dump = recording.etdump
    assert len(dump.runs) == 1 and recording.dropped_events == 0
    np.testing.assert_array_equal(dump.runs[0].debug_events[-1].data, outputs[0].numpy())
    rows = Inspector(dump, Program.load(smallcnn.pte)).rows
    assert rows and all(len(row.durations) == 1 for row in rows)


@pytest.mark.parametrize("damage", ["short", "cut", "foreign"])
def test_damaged_etdump_gets_a_named_error(smallcnn, cli, tmp_path: Path, damage: str) -> None:
    assert cli("run", smallcnn.pte, "--etdump", "good.etdp", cwd=tmp_path).returncode == 0
    good = (tmp_path / "good.etdp").read_bytes()
    data = {"short": good[:9], "cut": good[: len(good) // 2], "foreign": smallcnn.pte.read_bytes()}[damage]
    (tmp_path / "bad.etdp").write_bytes(data)
    expected = {"short": "too short", "cut": "truncated", "foreign": "this is a .pte program"}[damage]
    with pytest.raises(EtdumpError, match=expected):
        Etdump.load(tmp_path / "bad.etdp")
    done = cli("inspector", "bad.etdp", cwd=tmp_path)
    assert done.returncode == 2
    assert expected in done.stderr and len(done.stderr.strip().splitlines()) == 1
