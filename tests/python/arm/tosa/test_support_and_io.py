"""is_lowerable answers for the partitioner, lowering errors, and the recorded boundary."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from kiln.backends.arm.tosa import TosaLoweringError, TosaReferenceError, is_lowerable, lower_to_tosa


def _node(graph: torch.fx.GraphModule, name: str) -> torch.fx.Node:
    return next(n for n in graph.graph.nodes if n.name == name)


def test_quantized_operators_are_lowerable(lowered_case, u55_spec) -> None:
    for case, names in (("conv_relu", ["convolution", "relu", "dequantize_per_tensor", "quantize_per_tensor"]),
                        ("hardswish", None), ("max_pool", ["max_pool2d_with_indices", "getitem"])):
        _, _, graph, _ = lowered_case(case)
        nodes = [n for n in graph.graph.nodes if n.op == "call_function"] if names is None else \
            [_node(graph, name) for name in names]
        for node in nodes:
            assert is_lowerable(node, u55_spec) == (True, ""), node.name


def test_an_operator_without_a_lowering_stays_on_the_cpu_with_a_reason(qdq, u55_spec) -> None:
    case, floats = qdq.QCase(lambda self, x: torch.cumsum(x, dim=-1)), [torch.randn(1, 10)]
    graph = qdq.export_graph(case, case.calibrate(*floats))
    node = next(n for n in graph.graph.nodes if "cumsum" in str(n.target))
    ok, reason = is_lowerable(node, u55_spec)
    assert not ok and "cumsum" in reason
    with pytest.raises(TosaLoweringError, match=node.name):
        lower_to_tosa(graph, u55_spec, name="soft")


def test_is_lowerable_judges_the_operator_alone(u55_spec) -> None:
    """A float add is a lowerable operator; that its inputs are not quantized is the
    partitioner's concern (group_problem), not is_lowerable's."""
    class Add(torch.nn.Module):
        def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
            return a + b

    graph = torch.export.export(Add(), (torch.randn(2), torch.randn(2))).module(check_guards=False)
    node = next(n for n in graph.graph.nodes if n.op == "call_function" and "add" in str(n.target))
    assert is_lowerable(node, u55_spec) == (True, "")


def test_linear_with_a_constant_placeholder_weight_is_a_fully_connected_layer(u55_spec) -> None:
    """The partitioner's graphs hold weights as placeholders: with them named as
    constants, addmm(bias, x, permute(weight)) is a fully connected layer."""
    program = torch.export.export(torch.nn.Linear(6, 3), (torch.randn(2, 6),)).run_decompositions()
    graph = program.graph_module.graph
    addmm = next(n for n in graph.nodes if n.target == torch.ops.aten.addmm.default)
    constants = {n for n in graph.nodes if n.op == "placeholder" and n.name.startswith("p_")}
    constants |= {n for n in graph.nodes if n.op == "call_function" and set(n.all_input_nodes) <= constants}
    assert is_lowerable(addmm, u55_spec, constants) == (True, "")
    ok, reason = is_lowerable(addmm, u55_spec)  # weight not known constant: a matmul with a bias
    assert not ok and "bias" in reason


@pytest.mark.parametrize("padding, dilation", [(1, 1), (0, 2)])
def test_large_stride_with_padding_or_dilation_is_u85_only(qdq, u55_spec, padding: int, dilation: int) -> None:
    """Vela's "stride > 3 only with dilation 1 and VALID padding" holds for U55/U65;
    Vela compiles the U85 case."""
    from kiln.backends.arm import EthosUCompileSpec
    from kiln.backends.arm.vela import compile_tosa

    case, floats = qdq._conv(stride=4, padding=padding, dilation=dilation, act="none")
    graph = qdq.export_graph(case, case.calibrate(*floats))
    conv = next(n for n in graph.graph.nodes if n.target == torch.ops.aten.convolution.default)
    ok, reason = is_lowerable(conv, u55_spec)
    assert not ok and "stride [4, 4] > 3 on ethos-u55" in reason
    u85 = EthosUCompileSpec("ethos-u85-256")
    assert is_lowerable(conv, u85) == (True, "")
    compiled = compile_tosa(lower_to_tosa(graph, u85, name="stride4").flatbuffer, u85, name="stride4")
    assert compiled.npu_cycles > 0


def test_unknown_operator_names_itself(qdq, u55_spec) -> None:
    case, floats = qdq.QCase(lambda self, x: torch.cumsum(x, dim=1)), [torch.randn(1, 6)]
    graph = qdq.export_graph(case, case.calibrate(*floats))
    node = next(n for n in graph.graph.nodes if "cumsum" in str(n.target))
    ok, reason = is_lowerable(node, u55_spec)
    assert not ok and "cumsum" in reason
    with pytest.raises(TosaLoweringError, match="cumsum"):
        lower_to_tosa(graph, u55_spec, name="cum")


def test_boundary_records_layout_and_transpose_bytes(lowered_case, u55_spec) -> None:
    _, _, graph, subgraph = lowered_case("conv_relu")
    (io,) = subgraph.inputs
    assert (io.shape, io.tosa_shape, io.dtype) == ((1, 4, 9, 10), (1, 9, 10, 4), "int8")
    assert io.needs_transpose and io.transpose_bytes == 4 * 9 * 10
    assert io.scale > 0 and -128 <= io.zero_point <= 127
    nhwc = lower_to_tosa(graph, u55_spec, nhwc_io=True, name="conv_nhwc")
    assert nhwc.flatbuffer == subgraph.flatbuffer  # same graph, only the boundary bookkeeping differs
    assert not nhwc.inputs[0].needs_transpose and nhwc.transpose_bytes == 0


def test_no_transpose_when_bytes_do_not_move(lowered_case) -> None:
    _, _, _, pooled = lowered_case("mean_hw")  # output [1, 8, 1, 1]: NCHW bytes == NHWC bytes
    assert pooled.outputs[0].shape == (1, 8, 1, 1) and not pooled.outputs[0].needs_transpose
    _, _, _, flat = lowered_case("global_pool_flatten")  # rank 2: no layout change at all
    assert flat.outputs[0].tosa_shape == (1, 8) and flat.outputs[0].transpose_bytes == 0


def test_run_reference_checks_its_inputs(lowered_case) -> None:
    _, ints, _, subgraph = lowered_case("conv_relu")
    with pytest.raises(TosaReferenceError, match="int8"):
        subgraph.run_reference([ints[0].numpy().astype(np.int16)])
    with pytest.raises(TosaReferenceError, match="0 inputs given"):
        subgraph.run_reference([])
