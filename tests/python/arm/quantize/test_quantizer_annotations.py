"""EthosUQuantizer puts the right quantize/dequantize ops in the right places.

Expected values come from the float modules (weights, folded batch norms) and from
the definitions of the scheme (symmetric int8 weights, bias scale = in x w)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest
import torch
from torch import nn

import kiln
from kiln.backends.arm import EthosUCompileSpec, EthosUQuantizer

sys.path.insert(0, str(Path(__file__).parent))
qdq = importlib.import_module("qdq_graph")
sys.path.pop(0)

aten = torch.ops.aten
qd = torch.ops.quantized_decomposed


class BranchNet(nn.Module):
    """conv+relu and conv branches, cat, max pool, flatten, linear."""

    def __init__(self) -> None:
        super().__init__()
        self.conv_a = nn.Conv2d(3, 8, 3, padding=1)
        self.conv_b = nn.Conv2d(3, 8, 3, padding=1)
        self.relu = nn.ReLU()
        self.pool = nn.MaxPool2d(2)
        self.head = nn.Linear(16 * 4 * 4, 5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.cat([self.relu(self.conv_a(x)), self.conv_b(x)], dim=1)
        return self.head(self.pool(y).flatten(1))


def _samples(shape: tuple[int, ...], count: int = 4) -> list[tuple[torch.Tensor]]:
    generator = torch.Generator().manual_seed(3)
    return [(torch.randn(shape, generator=generator),) for _ in range(count)]


def _quantize(model: nn.Module, quantizer: EthosUQuantizer, shape=(1, 3, 8, 8)) -> torch.export.ExportedProgram:
    torch.manual_seed(0)
    samples = _samples(shape)
    return kiln.quantize(model.eval(), samples[0], quantizer, samples, progress=False)


@pytest.fixture(scope="module")
def branch() -> tuple[BranchNet, torch.export.ExportedProgram]:
    torch.manual_seed(0)
    model = BranchNet().eval()
    return model, _quantize(model, EthosUQuantizer(EthosUCompileSpec("ethos-u55-128")))


def test_exported_graph_has_module_stacks() -> None:
    graph = torch.export.export(BranchNet().eval(), (torch.randn(1, 3, 8, 8),)).graph
    convs = [n for n in graph.nodes if n.target == aten.conv2d.default]
    assert [list(n.meta["nn_module_stack"].values())[-1][0] for n in convs] == ["conv_a", "conv_b"]


def test_weights_are_int8_per_channel_symmetric(branch) -> None:
    model, program = branch
    assert len([n for n in qdq.nodes(program, qd.dequantize_per_channel.default) if n.args[-1] == torch.int8]) == 3
    conv_a, conv_b = qdq.nodes(program, aten.convolution.default)
    head = qdq.nodes(program, aten.addmm.default)[0].args[2].args[0]  # addmm(bias, x, permute(weight))
    for module, node in ((model.conv_a, conv_a.args[1]), (model.conv_b, conv_b.args[1]), (model.head, head)):
        assert node.target == qd.dequantize_per_channel.default
        weight, scale, zero_point = (qdq.constant(program, a) for a in node.args[:3])
        axis, qmin, qmax = node.args[3:6]
        assert weight.dtype == torch.int8 and (axis, qmin, qmax) == (0, -127, 127)
        assert int(weight.min()) >= -127 and torch.all(zero_point == 0)
        reference = module.weight.detach()
        per_channel_max = reference.abs().reshape(reference.shape[0], -1).amax(dim=1)
        torch.testing.assert_close(scale.float() * 127, per_channel_max, rtol=1e-5, atol=1e-7)
        assert (weight.reshape(weight.shape[0], -1).abs().amax(dim=1) == 127).all()
        dequantized = weight.float() * scale.float().reshape(-1, *[1] * (weight.dim() - 1))
        assert float((dequantized - reference).abs().max()) <= float(scale.max()) / 2 + 1e-7


def test_bias_is_int32_with_input_times_weight_scale(branch) -> None:
    _, program = branch
    conv = qdq.nodes(program, aten.convolution.default)[0]
    bias_dq, weight_dq = conv.args[2], conv.args[1]
    assert bias_dq.target == qd.dequantize_per_channel.default and bias_dq.args[-1] == torch.int32
    input_scale, _ = qdq.input_qparams(conv, 0)
    weight_scale = qdq.constant(program, weight_dq.args[1])
    torch.testing.assert_close(qdq.constant(program, bias_dq.args[1]).float(), input_scale * weight_scale.float())
    assert torch.all(qdq.constant(program, bias_dq.args[2]) == 0)


def test_relu_is_fused_into_the_conv_output(branch) -> None:
    _, program = branch
    relu = qdq.nodes(program, aten.relu.default)[0]
    assert relu.args[0].target == aten.convolution.default  # no quantize/dequantize in between
    assert not qdq.output_is_quantized(relu.args[0])
    # The relu output feeds the cat, so it carries the cat's shared qparams.
    assert qdq.output_qparams(relu) == qdq.output_qparams(qdq.nodes(program, aten.cat.default)[0])


def test_cat_pool_and_flatten_share_qparams(branch) -> None:
    _, program = branch
    cat = qdq.nodes(program, aten.cat.default)[0]
    cat_out = qdq.output_qparams(cat)
    assert qdq.list_input_qparams(cat) == [cat_out, cat_out]
    pool = qdq.nodes(program, aten.max_pool2d_with_indices.default)[0]
    assert qdq.input_qparams(pool) == qdq.output_qparams(pool) == cat_out
    view = qdq.nodes(program, aten.view.default)[0]
    assert qdq.input_qparams(view) == qdq.output_qparams(view) == cat_out


def test_set_module_type_none_leaves_linear_float() -> None:
    torch.manual_seed(0)
    quantizer = EthosUQuantizer().set_module_type(nn.Linear, None)
    program = _quantize(BranchNet(), quantizer)
    addmm = qdq.nodes(program, aten.addmm.default)[0]
    weight = addmm.args[2].args[0]  # permute(weight)
    assert weight.op == "placeholder" and qdq.constant(program, weight).dtype == torch.float32
    assert not qdq.output_is_quantized(addmm)
    assert len(qdq.nodes(program, qd.dequantize_per_channel.default)) == 4  # two convs: weight + bias


def test_set_module_name_none_leaves_that_module_float() -> None:
    torch.manual_seed(0)
    program = _quantize(BranchNet(), EthosUQuantizer().set_module_name("conv_b", None))
    conv_a, conv_b = qdq.nodes(program, aten.convolution.default)
    assert conv_a.args[1].target == qd.dequantize_per_channel.default
    assert conv_b.args[1].op == "placeholder" and conv_b.args[0].op == "placeholder"  # float x, float weight


def test_set_io_quantizes_inputs_and_outputs_around_float_ops() -> None:
    torch.manual_seed(0)
    quantizer = EthosUQuantizer().set_module_name("conv_a", None).set_module_name("conv_b", None)
    quantizer.set_module_type(nn.Linear, None)
    quantizer.set_io(quantizer.global_config)
    program = _quantize(BranchNet(), quantizer)
    x = next(n for n in program.graph.nodes if n.op == "placeholder" and n.name == "x")
    assert {u.target for u in x.users} == {qd.quantize_per_tensor.default}
    output = program.graph.output_node().args[0][0]
    assert output.target == qd.dequantize_per_tensor.default


class Heads(nn.Module):
    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        return torch.sigmoid(x), torch.tanh(x), torch.softmax(x, dim=-1)


def test_sigmoid_tanh_softmax_outputs_have_fixed_qparams() -> None:
    program = _quantize(Heads(), EthosUQuantizer(), shape=(1, 16))
    assert qdq.output_qparams(qdq.nodes(program, aten.sigmoid.default)[0]) == (1 / 256, -128)
    assert qdq.output_qparams(qdq.nodes(program, aten.tanh.default)[0]) == (1 / 128, 0)
    assert qdq.output_qparams(qdq.nodes(program, aten._softmax.default)[0]) == (1 / 256, -128)


class ConvBnHardswish(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, bias=False)
        self.bn = nn.BatchNorm2d(8)
        self.act = nn.Hardswish()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.act(self.bn(self.conv(x)))


def test_batch_norm_is_folded_and_hardswish_kept_whole() -> None:
    from kiln.models.calibration import reestimate_batchnorm

    torch.manual_seed(0)
    model = ConvBnHardswish()
    reestimate_batchnorm(model, (1, 3, 8, 8))
    program = _quantize(model, EthosUQuantizer())
    targets = {n.target for n in program.graph.nodes if n.op == "call_function"}
    assert not any("batch_norm" in str(t) for t in targets)
    assert aten.hardswish.default in targets
    conv = qdq.nodes(program, aten.convolution.default)[0]
    folded_scale = model.bn.weight / torch.sqrt(model.bn.running_var + model.bn.eps)
    folded = model.conv.weight * folded_scale.reshape(-1, 1, 1, 1)
    weight_scale = qdq.constant(program, conv.args[1].args[1])
    torch.testing.assert_close(weight_scale.float() * 127, folded.detach().abs().amax(dim=(1, 2, 3)))


class SqueezeExcite(nn.Module):
    """A squeeze-excite gate: its channel means feed small fully connected layers."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.reduce = nn.Conv2d(8, 4, 1)
        self.expand = nn.Conv2d(4, 8, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.relu(self.conv(x))
        gate = torch.sigmoid(self.expand(torch.relu(self.reduce(y.mean(dim=(2, 3), keepdim=True)))))
        return y * gate


def test_averages_get_their_own_step_on_the_ethos_u_and_share_it_on_the_cpu_backends() -> None:
    from kiln.backends.cortex_m import CortexMQuantizer

    torch.manual_seed(0)
    model = SqueezeExcite().eval()
    ethos_u = qdq.nodes(_quantize(model, EthosUQuantizer(EthosUCompileSpec("ethos-u55-128"))), aten.mean.dim)[0]
    # A mean's range is narrower than its input's: its own observer gives a finer step.
    assert qdq.output_qparams(ethos_u)[0] < qdq.input_qparams(ethos_u)[0]
    # CMSIS-NN's average pool works at its input's qparams.
    cortex_m = qdq.nodes(_quantize(model, CortexMQuantizer()), aten.mean.dim)[0]
    assert qdq.output_qparams(cortex_m) == qdq.input_qparams(cortex_m)
