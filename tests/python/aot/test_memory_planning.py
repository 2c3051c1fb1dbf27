"""Memory planning: live tensors never share bytes; reuse makes the buffer smaller
than the sum of the tensors; inputs/outputs can be left to the caller."""

from __future__ import annotations

import random

import pytest
import torch

import kiln
from kiln.memory import Lifetime, PlanRequest, align_up, compute_lifetimes, place, plan_memory
from kiln.ir.method_graph import Int, KernelCall, MethodGraph, TensorRole, TensorValue
from kiln.serialize import program_generated as pte
from kiln.serialize import read_pte


def assert_no_live_overlap(requests: list[PlanRequest], offsets: list[int], sizes: list[int]) -> None:
    for i, a in enumerate(requests):
        assert offsets[i] % 16 == 0
        assert offsets[i] + a.size <= sizes[a.mem_id]
        for j in range(i + 1, len(requests)):
            b = requests[j]
            if a.mem_id != b.mem_id or not a.lifetime.overlaps(b.lifetime) or not a.size or not b.size:
                continue
            disjoint = offsets[i] + a.size <= offsets[j] or offsets[j] + b.size <= offsets[i]
            assert disjoint, f"requests {i} and {j} are live together and overlap"


@pytest.mark.parametrize("seed", range(60))
def test_random_requests_never_overlap(seed: int) -> None:
    rng = random.Random(seed)
    steps = rng.randint(1, 40)
    requests = []
    for _ in range(rng.randint(1, 60)):
        first = rng.randrange(steps)
        requests.append(
            PlanRequest(
                size=rng.choice([0, 1, 3, 16, 17, 100, 1000, rng.randint(1, 5000)]),
                lifetime=Lifetime(first, rng.randint(first, steps - 1)),
                mem_id=rng.choice([1, 1, 1, 2, 3]),
            )
        )
    offsets, sizes = place(requests)
    assert_no_live_overlap(requests, offsets, sizes)
    for mem_id in range(1, len(sizes)):
        total = sum(align_up(r.size, 16) for r in requests if r.mem_id == mem_id)
        assert sizes[mem_id] <= total


def random_method(seed: int) -> MethodGraph:
    """A random DAG of two-input calls over random shapes; some outputs, some unused."""
    rng = random.Random(seed)

    def tensor(name: str, role: TensorRole) -> TensorValue:
        shape = tuple(rng.randint(1, 9) for _ in range(rng.randint(0, 3)))
        return TensorValue(name, 6, 4, shape, role)

    inputs = [tensor(f"in{i}", TensorRole.INPUT) for i in range(rng.randint(1, 3))]
    weight = tensor("w", TensorRole.CONSTANT)
    weight.data = bytes(weight.nbytes)
    available = list(inputs)
    calls = []
    for step in range(rng.randint(1, 30)):
        out = tensor(f"t{step}", TensorRole.ACTIVATION)
        a, b = rng.choice(available), rng.choice(available + [weight])
        calls.append(KernelCall("aten::add.out", [a, b, Int(1), out, out], [out]))
        available.append(out)
    outputs = rng.sample(available, k=min(len(available), rng.randint(1, 3)))
    for t in outputs:
        t.is_output = True
    return MethodGraph("forward", inputs, outputs, calls)


@pytest.mark.parametrize("seed", range(60))
def test_random_graphs_plan_without_overlap(seed: int) -> None:
    method = random_method(seed)
    plan = plan_memory(method)
    lifetimes = compute_lifetimes(method)
    planned = [t for t in method.tensors() if t.allocation is not None]
    assert all(t.role is not TensorRole.CONSTANT for t in planned)
    assert len(planned) == plan.planned == len([t for t in method.tensors() if t.role is not TensorRole.CONSTANT])
    requests = [PlanRequest(t.nbytes, lifetimes[id(t)], t.allocation.mem_id) for t in planned]
    assert_no_live_overlap(requests, [t.allocation.offset for t in planned], method.planned_buffer_sizes)
    assert method.planned_buffer_sizes[1] <= plan.total_tensor_bytes
    # A call's inputs stay live while it writes its output.
    for step, call in enumerate(method.calls):
        for read in call.tensors_read():
            if read.role is not TensorRole.CONSTANT:
                assert lifetimes[id(read)].last >= step
        for written in call.outputs:
            assert lifetimes[id(written)].first <= step


def test_outputs_live_to_the_end_and_inputs_from_the_start() -> None:
    method = random_method(7)
    lifetimes = compute_lifetimes(method)
    last = len(method.calls) - 1
    for t in method.outputs:
        assert lifetimes[id(t)].last == last
    for t in method.inputs:
        assert lifetimes[id(t)].first == 0


def test_real_model_reuses_memory(small_cnn) -> None:
    model, inputs = small_cnn
    method = kiln.export.lower_edge_program(kiln.export_to_edge(model, inputs))
    activations = [t for t in method.tensors() if t.role is not TensorRole.CONSTANT]
    total = sum(align_up(t.nbytes, 16) for t in activations)
    assert method.planned_buffer_sizes[1] < total
    # The largest activation must fit.
    assert method.planned_buffer_sizes[1] >= max(t.nbytes for t in activations)


def tensors_of(program: kiln.Program) -> tuple[list, list, list]:
    program_t, _ = read_pte(program.to_bytes())
    plan = program_t.executionPlan[0]
    values = [v.val for v in plan.values]
    return plan, [values[int(i)] for i in plan.inputs], [values[int(i)] for i in plan.outputs]


@pytest.mark.parametrize("plan_inputs, plan_outputs", [(True, True), (False, True), (True, False), (False, False)])
def test_unplanned_io_has_no_allocation(small_cnn, plan_inputs: bool, plan_outputs: bool) -> None:
    model, inputs = small_cnn
    program = kiln.export(model, inputs, plan_inputs=plan_inputs, plan_outputs=plan_outputs)
    plan, ins, outs = tensors_of(program)
    assert all((t.allocationInfo is not None) == plan_inputs for t in ins)
    assert all((t.allocationInfo is not None) == plan_outputs for t in outs)
    for value in plan.values:
        if value.valType == pte.KernelTypes.Tensor and value.val.allocationInfo is not None:
            assert value.val.allocationInfo.memoryId == 1
            assert value.val.allocationInfo.memoryOffsetLow % 16 == 0


class ReturnsInput(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return x, x + 1


@pytest.mark.parametrize("plan_inputs, plan_outputs", [(True, True), (True, False), (False, True)])
def test_output_that_is_an_input(plan_inputs: bool, plan_outputs: bool) -> None:
    program = kiln.export(ReturnsInput(), (torch.randn(4),), plan_inputs=plan_inputs, plan_outputs=plan_outputs)
    plan, ins, outs = tensors_of(program)
    assert int(plan.outputs[0]) == int(plan.inputs[0])
    # Planned only when both inputs and outputs are planned.
    assert (outs[0].allocationInfo is not None) == (plan_inputs and plan_outputs)


def test_tensors_in_another_memory_get_their_own_buffer(small_cnn) -> None:
    model, inputs = small_cnn
    method = kiln.passes.to_out_variants(kiln.export_to_edge(model, inputs))
    first_call_output = method.calls[0].outputs[0]
    first_call_output.mem_id = 2
    plan_memory(method)
    assert len(method.planned_buffer_sizes) == 3
    assert method.planned_buffer_sizes[2] == align_up(first_call_output.nbytes, 16)
    assert first_call_output.allocation.mem_id == 2 and first_call_output.allocation.offset == 0


def test_invalid_requests_are_rejected() -> None:
    with pytest.raises(kiln.MemoryPlanningError, match="mem_id 0"):
        place([PlanRequest(16, Lifetime(0, 1), mem_id=0)])
    with pytest.raises(kiln.MemoryPlanningError, match="power of two"):
        place([PlanRequest(16, Lifetime(0, 1))], alignment=12)
