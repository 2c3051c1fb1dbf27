"""Tiny fake-quantized modules with explicit PT2E q/dq calls, for the TOSA/Vela tests.

Each case is a float ``body`` between ``dequantize_per_tensor`` of its int8 inputs and
``quantize_per_tensor`` of its result, with int8 per-channel weights dequantized by
``dequantize_per_channel`` - the reference form the lowering takes, built without
Kiln's quantizer so these tests do not depend on it. ``calibrate`` picks the
activation quantization from float sample inputs (min/max, asymmetric int8).

This file is loaded by the conftest files with importlib (no package, see COMMON.md).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import torch
import torch.nn.functional as F
import torchao.quantization.pt2e  # noqa: F401  (registers torch.ops.quantized_decomposed)

qd = torch.ops.quantized_decomposed


def affine_qparams(t: torch.Tensor) -> tuple[float, int]:
    """Asymmetric int8 parameters covering t's range (and 0)."""
    lo, hi = min(float(t.min()), 0.0), max(float(t.max()), 0.0)
    scale = max((hi - lo) / 255.0, 1e-6)
    zero_point = int(np.clip(round(-128 - lo / scale), -128, 127))
    return float(np.float32(scale)), zero_point


def dq(x: torch.Tensor, qparams: tuple[float, int]) -> torch.Tensor:
    return qd.dequantize_per_tensor(x, qparams[0], qparams[1], -128, 127, torch.int8)


def q(x: torch.Tensor, qparams: tuple[float, int]) -> torch.Tensor:
    return qd.quantize_per_tensor(x, qparams[0], qparams[1], -128, 127, torch.int8)


class QWeight(torch.nn.Module):
    """Symmetric per-output-channel int8 weights (what a PT2E quantizer produces); the output
    channels are ``axis`` (1 for transposed convolutions)."""

    def __init__(self, weight: torch.Tensor, per_tensor: bool = False, axis: int = 0) -> None:
        super().__init__()
        self.axis = axis
        dims = tuple(d for d in range(weight.dim()) if d != axis)
        amax = weight.abs().amax() if per_tensor else weight.abs().amax(dim=dims)
        scales = (torch.clamp(amax, min=1e-8) / 127.0).to(torch.float32).reshape(-1)
        if per_tensor:
            scales = scales.expand(weight.shape[axis]).clone()
        shape = [1] * weight.dim()
        shape[axis] = -1
        self.register_buffer("q", torch.clamp(torch.round(weight / scales.reshape(shape)), -127, 127).to(torch.int8))
        self.register_buffer("scales", scales)
        self.register_buffer("zero_points", torch.zeros_like(scales, dtype=torch.int64))

    def forward(self) -> torch.Tensor:
        return qd.dequantize_per_channel(self.q, self.scales, self.zero_points, self.axis, -127, 127, torch.int8)


class QCase(torch.nn.Module):
    """``forward(*int8) = quantize(body(*dequantize(int8)))``."""

    def __init__(self, body: Callable[..., torch.Tensor], share_output: bool = False,
                 **modules: torch.nn.Module) -> None:
        super().__init__()
        self.body_fn = body
        self.share_output = share_output  # output keeps the input's quantization (as for relu)
        for name, module in modules.items():
            self.add_module(name, module)
        self.in_qparams: list[tuple[float, int]] = []
        self.out_qparams: tuple[float, int] = (1.0, 0)

    def body(self, *xs: torch.Tensor) -> torch.Tensor:
        return self.body_fn(self, *xs)

    def calibrate(self, *floats: torch.Tensor) -> list[torch.Tensor]:
        """Sets the quantization from float samples; returns the int8 inputs."""
        self.in_qparams = [affine_qparams(x) for x in floats]
        ints = [q(x, p) for x, p in zip(floats, self.in_qparams)]
        with torch.no_grad():
            y = self.body(*[dq(x, p) for x, p in zip(ints, self.in_qparams)])
        self.out_qparams = self.in_qparams[0] if self.share_output else affine_qparams(y)
        return ints

    def forward(self, *xs: torch.Tensor) -> torch.Tensor:
        real = [dq(x, p) for x, p in zip(xs, self.in_qparams)]
        return q(self.body(*real), self.out_qparams)


def export_graph(module: torch.nn.Module, inputs: Sequence[torch.Tensor]) -> torch.fx.GraphModule:
    """torch.export -> core ATen -> a standalone GraphModule (constants as get_attr)."""
    ep = torch.export.export(module.eval(), tuple(inputs)).run_decompositions()
    return ep.module(check_guards=False)


def cut_quantized(program: torch.export.ExportedProgram) -> torch.fx.GraphModule:
    """The delegated part of a quantized program: everything between the input
    quantize nodes and the output dequantize nodes, as a standalone GraphModule
    (a stand-in for 3C's partitioner, which makes the real cuts)."""
    gm = program.module(check_guards=False)
    graph = gm.graph
    first = next(iter(graph.nodes))
    for node in [n for n in graph.nodes if n.op == "placeholder"]:
        quantizes = [u for u in node.users if u.target == qd.quantize_per_tensor.default]
        assert len(quantizes) == 1 and len(node.users) == 1, f"input {node.name} is not quantized once"
        with graph.inserting_before(first):
            replacement = graph.placeholder(f"{node.name}_int8")
        replacement.meta["val"] = quantizes[0].meta["val"]
        quantizes[0].replace_all_uses_with(replacement)
        graph.erase_node(quantizes[0])
        graph.erase_node(node)
    output = graph.output_node()
    results = output.args[0] if isinstance(output.args[0], (tuple, list)) else (output.args[0],)
    outputs = []
    for result in results:
        assert result.target == qd.dequantize_per_tensor.default, f"output {result.name} is not dequantized"
        outputs.append(result.args[0])
    output.args = (tuple(outputs),)
    graph.eliminate_dead_code()
    gm.recompile()
    return gm


def dequantize_np(x: np.ndarray, qparams: tuple[float, int]) -> np.ndarray:
    return (x.astype(np.float32) - qparams[1]) * qparams[0]


# ----------------------------------------------------------------------------- cases
def _conv(groups: int = 1, stride: int = 1, padding: int = 1, bias: bool = True, act: str = "relu",
          cin: int = 4, cout: int = 8, k: int = 3, dilation: int = 1) -> tuple[QCase, list[torch.Tensor]]:
    torch.manual_seed(0)
    conv = torch.nn.Conv2d(cin, cout, k, stride, padding, dilation=dilation, groups=groups, bias=bias)
    activation = {"relu": F.relu, "relu6": lambda t: F.hardtanh(t, 0.0, 6.0), "none": lambda t: t}[act]

    def body(self: QCase, x: torch.Tensor) -> torch.Tensor:
        b = self.bias if hasattr(self, "bias") else None
        return activation(F.conv2d(x, self.w(), b, stride, padding, dilation, groups))

    case = QCase(body, w=QWeight(conv.weight.detach()))
    if bias:
        case.register_buffer("bias", conv.bias.detach().clone())
    return case, [torch.randn(1, cin, 9, 10)]


def _conv1d(groups: int = 1, stride: int = 1, padding: int = 1, cin: int = 4, cout: int = 8, k: int = 3,
            dilation: int = 1) -> tuple[QCase, list[torch.Tensor]]:
    torch.manual_seed(5)
    conv = torch.nn.Conv1d(cin, cout, k, stride, padding, dilation=dilation, groups=groups)
    case = QCase(lambda self, x: F.relu(F.conv1d(x, self.w(), self.bias, stride, padding, dilation, groups)),
                 w=QWeight(conv.weight.detach()))
    case.register_buffer("bias", conv.bias.detach().clone())
    return case, [torch.randn(1, cin, 20)]


def _conv_transpose(stride: int = 2, padding: int = 1, output_padding: int = 0, k: int = 4, one_d: bool = False,
                    cin: int = 6, cout: int = 4) -> tuple[QCase, list[torch.Tensor]]:
    torch.manual_seed(6)
    module = (torch.nn.ConvTranspose1d if one_d else torch.nn.ConvTranspose2d)(
        cin, cout, k, stride, padding, output_padding)
    function = F.conv_transpose1d if one_d else F.conv_transpose2d
    case = QCase(lambda self, x: function(x, self.w(), self.bias, stride, padding, output_padding),
                 w=QWeight(module.weight.detach(), axis=1))
    case.register_buffer("bias", module.bias.detach().clone())
    return case, [torch.randn(1, cin, 12) if one_d else torch.randn(1, cin, 5, 6)]


def _linear(rank: int = 2, act: str = "none") -> tuple[QCase, list[torch.Tensor]]:
    torch.manual_seed(1)
    fc = torch.nn.Linear(16, 10)
    activation = {"relu": F.relu, "none": lambda t: t}[act]
    case = QCase(lambda self, x: activation(F.linear(x, self.w(), self.bias)), w=QWeight(fc.weight.detach()))
    case.register_buffer("bias", fc.bias.detach().clone())
    shape = (3, 16) if rank == 2 else (2, 5, 16)
    return case, [torch.randn(*shape)]


def _binary(op: Callable[[torch.Tensor, torch.Tensor], torch.Tensor], broadcast: bool = False
            ) -> tuple[QCase, list[torch.Tensor]]:
    torch.manual_seed(2)
    other = (1, 6, 1, 1) if broadcast else (1, 6, 5, 7)
    return QCase(lambda self, a, b: op(a, b)), [torch.randn(1, 6, 5, 7) * 2, torch.rand(*other)]


def _unary(fn: Callable[[torch.Tensor], torch.Tensor], scale: float = 3.0, shape: Sequence[int] = (1, 5, 6, 7),
           share_output: bool = False) -> tuple[QCase, list[torch.Tensor]]:
    torch.manual_seed(3)
    return QCase(lambda self, x: fn(x), share_output=share_output), [torch.randn(*shape) * scale]


def _upsample_decomposed(mode: str, factor: int, shape: Sequence[int] = (1, 3, 4, 5),
                         align_corners: bool = False) -> tuple[QCase, list[torch.Tensor]]:
    """F.interpolate as the quantization flow's ATen IR has it: index reads with arange-computed
    indices (and, for bilinear, blending weights), from PyTorch's own decompositions."""
    from torch._decomp import decompositions

    size = [shape[2] * factor, shape[3] * factor]
    if mode == "nearest":
        def body(self: QCase, t: torch.Tensor) -> torch.Tensor:
            return decompositions.upsample_nearest2d(t, size)
    else:
        def body(self: QCase, t: torch.Tensor) -> torch.Tensor:
            return decompositions.upsample_bilinear2d(t, size, align_corners)
    torch.manual_seed(7)
    return QCase(body, share_output=True), [torch.randn(*shape) * 2]


class QGather(torch.nn.Module):
    """``quantize(table[ids])`` of an int8 table quantized per tensor, its result in the
    table's quantization; ``ids`` are int32 (what the NPU's GATHER reads)."""

    def __init__(self, table: torch.Tensor, select: bool = False) -> None:
        super().__init__()
        self.select = select
        self.qparams = affine_qparams(table)
        self.register_buffer("table", q(table, self.qparams))

    def calibrate(self, ids: torch.Tensor) -> list[torch.Tensor]:
        return [ids]

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        table = dq(self.table, self.qparams)
        rows = torch.index_select(table, 0, ids) if self.select else F.embedding(ids, table)
        return q(rows, self.qparams)


def _gather(select: bool = False) -> tuple[QGather, list[torch.Tensor]]:
    torch.manual_seed(8)
    ids = torch.randint(0, 40, (7,) if select else (2, 5), dtype=torch.int32)
    return QGather(torch.randn(40, 12), select), [ids]


class QLengthsMask(torch.nn.Module):
    """Mask logic from an int32 ``lengths`` input, as speech models pad a batch: every
    comparison (Tensor and Scalar), logical operator, any/all along the frames, and where
    choosing between an int8 tensor, zeros and earlier choices; the result in the tensor's
    quantization. ``x``: (utterances, frames) int8, ``lengths``: (utterances,) int32."""

    def calibrate(self, x: torch.Tensor, lengths: torch.Tensor) -> list[torch.Tensor]:
        self.qparams = affine_qparams(x)
        return [q(x, self.qparams), lengths]

    def forward(self, x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        utterances, frames = x.shape
        at = torch.arange(frames, dtype=torch.int32).expand(utterances, frames)
        length = lengths.unsqueeze(1)
        padding = at >= length  # ge.Tensor
        edge = torch.logical_or(torch.eq(at, length), torch.logical_and(torch.ne(at, 2), torch.lt(at, 1)))
        late = torch.logical_and(torch.gt(at, length), torch.le(at, frames - 2))  # gt.Tensor, le.Scalar
        odd = torch.logical_or(torch.le(length, at), torch.logical_and(torch.lt(length, at), torch.ne(at, length)))
        middle = torch.logical_and(torch.ge(at, 2), torch.gt(at, 0))  # ge.Scalar, gt.Scalar
        flipped = torch.logical_not(torch.logical_or(torch.logical_and(odd, middle), torch.eq(at, 5)))
        short = padding.any(dim=1, keepdim=True)  # utterances shorter than the frames
        full = torch.logical_not(padding).all(dim=1, keepdim=True)
        real = dq(x, self.qparams)
        kept = dq(q(torch.where(padding, torch.zeros_like(real), real), self.qparams), self.qparams)
        kept = dq(q(torch.where(torch.logical_or(edge, late), kept, real), self.qparams), self.qparams)
        return q(torch.where(torch.logical_and(flipped, torch.logical_or(short, full)), kept, real), self.qparams)


def _lengths_mask() -> tuple[QLengthsMask, list[torch.Tensor]]:
    torch.manual_seed(9)
    # Lengths from none to past the frames, both ends included (whole rows hidden and kept).
    lengths = torch.tensor([0, 3, 8, 9, 1, 5], dtype=torch.int32)
    return QLengthsMask(), [torch.randn(6, 8) * 2, lengths]


def _layer_norm(shape: Sequence[int], affine: bool = True) -> tuple[QCase, list[torch.Tensor]]:
    torch.manual_seed(4)
    n = shape[-1]
    case = QCase(lambda self, x: F.layer_norm(x, (n,), getattr(self, "weight", None), getattr(self, "bias", None)))
    if affine:
        case.register_buffer("weight", torch.rand(n) * 1.5 + 0.25)
        case.register_buffer("bias", torch.randn(n) * 0.5)
    # Rows with different offsets and spreads, so the statistics differ per row.
    return case, [torch.randn(*shape) * torch.rand(*shape[:-1], 1) * 4 + torch.randn(*shape[:-1], 1)]


CASES: dict[str, Callable[[], tuple[QCase, list[torch.Tensor]]]] = {
    "conv_relu": lambda: _conv(),
    "conv_stride2_nobias": lambda: _conv(stride=2, bias=False, act="none"),
    "conv_relu6_dilated": lambda: _conv(act="relu6", dilation=2, padding=2),
    "conv_1x1": lambda: _conv(k=1, padding=0, act="none"),
    "conv_1x1_stride2_crop": lambda: _conv(k=1, padding=0, stride=2, act="none"),
    "depthwise": lambda: _conv(groups=4, cin=4, cout=4, act="relu6"),
    "depthwise_multiplier2": lambda: _conv(groups=4, cin=4, cout=8, stride=2),
    "grouped_conv": lambda: _conv(groups=2, cin=4, cout=6),
    "linear": lambda: _linear(),
    "linear_rank3_relu": lambda: _linear(rank=3, act="relu"),
    "add": lambda: _binary(torch.add),
    "add_broadcast": lambda: _binary(torch.add, broadcast=True),
    "sub": lambda: _binary(torch.sub),
    "mul": lambda: _binary(torch.mul),
    "relu": lambda: _unary(F.relu),
    "relu_shared_qparams": lambda: _unary(F.relu, share_output=True),
    "relu6_shared_qparams": lambda: _unary(lambda t: F.hardtanh(t, 0.0, 6.0), scale=5.0, share_output=True),
    "bmm": lambda: (QCase(lambda self, a, b: torch.bmm(a, b)), [torch.randn(2, 4, 8), torch.randn(2, 8, 3)]),
    "hardtanh": lambda: _unary(lambda t: F.hardtanh(t, -1.0, 2.5)),
    "sigmoid": lambda: _unary(torch.sigmoid),
    "tanh": lambda: _unary(torch.tanh),
    "hardswish": lambda: _unary(F.hardswish),
    "max_pool": lambda: _unary(lambda t: F.max_pool2d(t, 3, 2, 1), shape=(1, 4, 9, 9)),
    "avg_pool": lambda: _unary(lambda t: F.avg_pool2d(t, 2, 2), shape=(1, 4, 8, 8)),
    "avg_pool_padded": lambda: _unary(lambda t: F.avg_pool2d(t, 3, 1, 1), shape=(1, 4, 6, 6)),
    "mean_hw": lambda: _unary(lambda t: t.mean(dim=(2, 3), keepdim=True), shape=(1, 8, 7, 7)),
    "global_pool_flatten": lambda: _unary(lambda t: torch.flatten(t.mean(dim=(-1, -2)), 1), shape=(1, 8, 7, 7)),
    "concat": lambda: _binary(lambda a, b: torch.cat([a, b], dim=1)),
    "flatten": lambda: _unary(lambda t: torch.flatten(t, 1), shape=(1, 3, 4, 5)),
    "permute": lambda: _unary(lambda t: t.permute(0, 2, 1, 3), shape=(1, 3, 4, 5)),
    "view_rank3": lambda: _unary(lambda t: t.reshape(1, 12, 5), shape=(1, 3, 4, 5)),
    # as_strided that only restrides a row-major tensor: a reshape. The second is what
    # torch.export makes of a channels-last model's global pool.
    "as_strided_reshape": lambda: _unary(lambda t: torch.as_strided(t, (1, 12, 5), (60, 5, 1)), shape=(1, 3, 4, 5)),
    "global_pool_restrided": lambda: _unary(
        lambda t: torch.flatten(torch.as_strided(t.mean(dim=(-1, -2), keepdim=True), (1, 8, 1, 1), (8, 1, 8, 8)), 1),
        shape=(1, 8, 7, 7)),
    "pad": lambda: _unary(lambda t: F.pad(t, (1, 2, 0, 1)), shape=(1, 3, 4, 5)),
    "upsample_nearest": lambda: _unary(lambda t: F.interpolate(t, scale_factor=2, mode="nearest"),
                                       shape=(1, 3, 4, 5)),
    "upsample_nearest_4x": lambda: _unary(lambda t: F.interpolate(t, scale_factor=4, mode="nearest"),
                                          shape=(1, 2, 3, 4)),
    "clamp": lambda: _unary(lambda t: torch.clamp(t, -2.0, 1.5)),
    "elu": lambda: _unary(F.elu),
    "gelu": lambda: _unary(F.gelu),
    "hardsigmoid": lambda: _unary(F.hardsigmoid),
    "leaky_relu": lambda: _unary(lambda t: F.leaky_relu(t, 0.1)),
    "mm": lambda: (QCase(lambda self, a, b: torch.mm(a, b)), [torch.randn(6, 8), torch.randn(8, 5)]),
    "expand_to_own_shape": lambda: _unary(lambda t: F.relu(t.expand(1, 5, 6, 7))),
    "expand_broadcast": lambda: _unary(lambda t: F.relu(t.expand(1, 5, 6, 7)), shape=(1, 5, 1, 7)),
    # A quantized constant in the input's shape (how a zero fill of a mask is made): folded.
    "full_like_added": lambda: _unary(lambda t: t + dq(q(torch.full_like(t, 0.5), (0.01, 0)), (0.01, 0))),
    "unsqueeze_squeeze": lambda: _unary(lambda t: t.unsqueeze(1).squeeze(1).squeeze(0), shape=(1, 3, 4, 5)),
    "adaptive_avg_pool": lambda: _unary(lambda t: F.adaptive_avg_pool2d(t, 2), shape=(1, 8, 6, 6)),
    "softmax": lambda: _unary(lambda t: F.softmax(t, dim=-1), shape=(2, 10)),
    "softmax_attention_scores": lambda: _unary(lambda t: F.softmax(t, dim=-1), scale=2.0, shape=(1, 4, 16, 16)),
    "softmax_channels": lambda: _unary(lambda t: F.softmax(t, dim=1), scale=4.0, shape=(1, 8, 5, 5)),
    "log_softmax": lambda: _unary(lambda t: F.log_softmax(t, dim=-1), scale=3.0, shape=(2, 10)),
    "log_softmax_classes": lambda: _unary(lambda t: F.log_softmax(t, dim=1), scale=4.0, shape=(1, 12, 32)),
    "log_softmax_batch": lambda: _unary(lambda t: F.log_softmax(t, dim=-1), scale=0.5, shape=(3, 4, 8, 20)),
    "conv1d": lambda: _conv1d(),
    "conv1d_depthwise_stride2": lambda: _conv1d(groups=4, cout=4, stride=2, padding=2, k=5),
    "conv1d_dilated_1x1": lambda: _conv1d(k=1, padding=0, cout=6),
    "conv_transpose": lambda: _conv_transpose(),
    "conv_transpose_stride1": lambda: _conv_transpose(stride=1, k=3),
    "conv_transpose_output_padding": lambda: _conv_transpose(k=3, output_padding=1),
    "conv_transpose1d": lambda: _conv_transpose(one_d=True),
    "max_pool1d": lambda: _unary(lambda t: F.max_pool1d(t, 3, 2, 1), shape=(1, 4, 15), share_output=True),
    "avg_pool1d": lambda: _unary(lambda t: F.avg_pool1d(t, 2), shape=(1, 4, 16)),
    "mean_last_dim": lambda: _unary(lambda t: t.mean(dim=-1), shape=(1, 6, 10)),
    "mean_channels_keepdim": lambda: _unary(lambda t: t.mean(dim=1, keepdim=True), shape=(1, 8, 5, 6)),
    "mean_height": lambda: _unary(lambda t: t.mean(dim=2), shape=(1, 3, 5, 6)),
    "sum_tokens": lambda: _unary(lambda t: t.sum(dim=1), shape=(2, 7, 5)),
    "slice_channels": lambda: _unary(lambda t: t[:, 1:3], shape=(1, 4, 5, 6), share_output=True),
    "slice_last_dim": lambda: _unary(lambda t: t[..., 2:7], shape=(2, 3, 10), share_output=True),
    "select_first_token": lambda: _unary(lambda t: t[:, 0], shape=(1, 5, 8), share_output=True),
    "chunk_mul": lambda: _unary(lambda t: torch.mul(*t.chunk(2, dim=1)), shape=(1, 6, 4, 4)),
    "split_reorder": lambda: _unary(lambda t: torch.cat(t.split([1, 2, 3], dim=-1)[::-1], dim=-1),
                                    shape=(1, 4, 6), share_output=True),
    "upsample_nearest_index_form": lambda: _upsample_decomposed("nearest", 2),
    "upsample_nearest_index_form_4x": lambda: _upsample_decomposed("nearest", 4, shape=(1, 2, 3, 3)),
    "upsample_bilinear_index_form": lambda: _upsample_decomposed("bilinear", 2),
    "upsample_bilinear_aligned_index_form": lambda: _upsample_decomposed("bilinear", 3, align_corners=True),
    "upsample_bilinear": lambda: _unary(lambda t: F.interpolate(t, scale_factor=2, mode="bilinear"),
                                       shape=(1, 3, 4, 5), share_output=True),
    "upsample_bilinear_3x": lambda: _unary(lambda t: F.interpolate(t, scale_factor=3, mode="bilinear"),
                                          shape=(1, 2, 3, 4), share_output=True),
    "embedding": lambda: _gather(),
    "index_select_rows": lambda: _gather(select=True),
    "permute_rank5": lambda: _unary(lambda t: t.reshape(1, 2, 3, 4, 5).permute(0, 2, 4, 3, 1), shape=(2, 3, 4, 5),
                                    share_output=True),
    "patchify_rank6": lambda: _unary(lambda t: t.reshape(1, 3, 2, 4, 2, 4).permute(0, 2, 4, 3, 5, 1).reshape(1, 4, 48),
                                     shape=(1, 3, 8, 8), share_output=True),
    "layer_norm": lambda: _layer_norm((1, 6, 32)),
    "layer_norm_plain_rows": lambda: _layer_norm((4, 16), affine=False),
    "layer_norm_rank4": lambda: _layer_norm((1, 3, 4, 24)),
    "lengths_mask": _lengths_mask,
}

# Cases only Ethos-U85 runs (Vela compiles them for U85 and not for U55/U65): lowered for
# ethos-u85-256; the others for ethos-u55-128 (and they compile for every target).
U85_ONLY = frozenset({
    "upsample_bilinear_3x", "upsample_bilinear_aligned_index_form", "embedding", "index_select_rows",
    "lengths_mask",
})


def lowering_target(name: str) -> str:
    """The target a case is lowered for in the tests."""
    return "ethos-u85-256" if name in U85_ONLY else "ethos-u55-128"


def names_for(family: str) -> list[str]:
    """The cases a target family runs ("ethos-u55", "ethos-u65", "ethos-u85")."""
    return sorted(name for name in CASES if family == "ethos-u85" or name not in U85_ONLY)
