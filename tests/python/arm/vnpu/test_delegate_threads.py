"""Delegated programs run from several Python threads at once (the runtime releases the
GIL while executing): every output equals the single-threaded run's, and each thread's
NPU counters are its own program's, never the other thread's."""

from __future__ import annotations

import threading

import numpy as np
import pytest
import torch

import kiln
import kiln.models
from kiln import _runtime
from kiln.backends.arm import EthosUCompileSpec, EthosUPartitioner, EthosUQuantizer
from kiln.runtime import Runtime

ITERATIONS = 200


class ConvPool(torch.nn.Module):
    """All on the NPU, with a different operation count than smallcnn."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.pool = torch.nn.MaxPool2d(2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(torch.relu(self.conv(x)))


def _delegated(model: torch.nn.Module, inputs: tuple[torch.Tensor, ...]) -> bytes:
    spec = EthosUCompileSpec("ethos-u55-128")
    quantized = kiln.quantize(model.eval(), inputs, EthosUQuantizer(spec), [inputs], progress=False)
    program = kiln.export(quantized, inputs, partitioner=EthosUPartitioner(spec))
    assert program.compile_report is not None and program.compile_report.delegates
    return program.to_bytes()


@pytest.fixture(scope="module")
def programs() -> list[tuple[bytes, list[np.ndarray]]]:
    torch.manual_seed(0)
    smallcnn, smallcnn_inputs = kiln.models.get("smallcnn")
    conv_inputs = (torch.randn(1, 3, 16, 16),)
    return [
        (_delegated(smallcnn, smallcnn_inputs), [x.numpy() for x in smallcnn_inputs]),
        (_delegated(ConvPool(), conv_inputs), [x.numpy() for x in conv_inputs]),
    ]


@pytest.mark.slow
def test_threads_running_delegated_programs_do_not_collide(programs) -> None:
    references = []
    for program, inputs in programs:
        method = Runtime().load_program(program).load_method("forward")
        outputs = method.execute(inputs)
        references.append((outputs, _runtime.ethos_u_counters()))
    # The two programs' counters differ, so a thread reading the other's would show.
    assert references[0][1] != references[1][1]

    barrier = threading.Barrier(len(programs))
    results: list[list[tuple[list[np.ndarray], dict]]] = [[] for _ in programs]
    failures: list[BaseException] = []

    def work(k: int) -> None:
        try:
            program, inputs = programs[k]
            method = Runtime().load_program(program).load_method("forward")
            barrier.wait()
            for _ in range(ITERATIONS):
                outputs = method.execute(inputs)
                results[k].append((outputs, _runtime.ethos_u_counters()))
        except BaseException as error:  # reported below, with the thread's index
            failures.append(error)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(len(programs))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    assert not failures, failures
    for k, (expected_outputs, expected_counters) in enumerate(references):
        assert len(results[k]) == ITERATIONS
        for run, (outputs, counters) in enumerate(results[k]):
            for got, expected in zip(outputs, expected_outputs):
                np.testing.assert_array_equal(got, expected, err_msg=f"program {k}, run {run}")
            assert counters == expected_counters, f"program {k}, run {run}: counters mixed"
