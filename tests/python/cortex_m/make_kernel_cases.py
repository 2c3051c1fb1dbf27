"""Writes the per-operator test cases of Kiln's cortex_m:: kernels, with the outputs
ExecuTorch 1.5.1's Python reference implementations compute for them (run this file with
the ExecuTorch venv's python; it imports ExecuTorch and torch, never Kiln).

Every cortex_m:: operator gets cases with odd sizes, channel counts that are not
multiples of the vector widths (16 int8 lanes for Helium, 4 for the DSP extension),
padding, strides, dilation, and each activation clamp (none, ReLU, ReLU6, a narrow
hardtanh). The expected output of a case is the reference operator's
(`torch.ops.cortex_m.<op>`, backends/cortex_m/ops/operators.py), called with exactly
the arguments the kernel gets. PyTorch has no dilated int32 convolution, so for a
dilated case the reference gets the same filter with zeros between its taps (the same
sums) and dilation 1.

The case file (one per run; tests/cpp/kernels/cortex_m/kernel_cases.h reads it), little-endian:
    file   "KCMC", u32 version (1), u32 case count, u32 0, then the cases
    case   u32 record bytes (a multiple of 16, this field included), u16 name length,
           name, u16 operator length, operator (overload "out" implied), u8 tolerance
           (largest allowed difference from the expected output, in output steps),
           u8 argument count, the arguments, then the tensors' data, each at a
           16-aligned offset of the record
    arg    u8 tag, then: 0 None | 1 Int i64 | 2 Double f64 | 3 Bool u8 |
           4 IntList u32 n, i64[n] | 5 Tensor, 6 Output, 7 Zeros: u8 dtype
           (ScalarType code), u8 rank, i32 sizes[rank], u8 dim order[rank],
           u32 bytes, u32 offset of its data in the record (the expected output for
           6; no data for 7: a zero-filled buffer of that many bytes)

    python make_kernel_cases.py OUT_FILE [--list]
"""

from __future__ import annotations

import argparse
import logging
import math
import struct
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np
import torch

LOG = logging.getLogger("make_kernel_cases")

#: ScalarType codes (ExecuTorch's, which Kiln shares).
DTYPES = {torch.int8: 1, torch.int16: 2, torch.int32: 3, torch.int64: 4, torch.float32: 6}

NONE, INT, DOUBLE, BOOL, INT_LIST, TENSOR, OUTPUT, ZEROS = range(8)


@dataclass
class Zeros:
    """A scratch tensor: only its size reaches the case file."""

    nbytes: int


@dataclass
class Case:
    name: str
    op: str
    args: list[Any]
    expected: torch.Tensor
    tolerance: int = 0
    meta: dict[str, Any] = field(default_factory=dict)


def _dim_order(t: torch.Tensor) -> list[int]:
    return list(t.dim_order()) if t.dim() > 0 else []


def _tensor_entry(tag: int, t: torch.Tensor, data: bytes | None) -> tuple[bytes, bytes | None]:
    order = _dim_order(t)
    head = struct.pack("<BBB", tag, DTYPES[t.dtype], t.dim())
    head += struct.pack(f"<{t.dim()}i", *t.shape) + bytes(order)
    nbytes = t.numel() * t.element_size()
    return head + struct.pack("<I", nbytes), data


def _memory_bytes(t: torch.Tensor) -> bytes:
    """The tensor's bytes in memory order (its dim order)."""
    order = _dim_order(t)
    return t.permute(order).contiguous().numpy().tobytes() if order else t.contiguous().numpy().tobytes()


def encode(case: Case) -> bytes:
    name, op = case.name.encode(), case.op.encode()
    pieces: list[tuple[bytes, bytes | None]] = []
    for arg in [*case.args, ("out", case.expected)]:
        if isinstance(arg, tuple) and arg[0] == "out":
            pieces.append(_tensor_entry(OUTPUT, arg[1], _memory_bytes(arg[1])))
        elif arg is None:
            pieces.append((bytes([NONE]), None))
        elif isinstance(arg, bool):
            pieces.append((struct.pack("<BB", BOOL, int(arg)), None))
        elif isinstance(arg, int):
            pieces.append((struct.pack("<Bq", INT, arg), None))
        elif isinstance(arg, float):
            pieces.append((struct.pack("<Bd", DOUBLE, arg), None))
        elif isinstance(arg, (list, tuple)):
            pieces.append((struct.pack(f"<BI{len(arg)}q", INT_LIST, len(arg), *arg), None))
        elif isinstance(arg, Zeros):
            pieces.append((struct.pack("<BBBiBI", ZEROS, DTYPES[torch.int8], 1, arg.nbytes, 0, arg.nbytes), None))
        elif isinstance(arg, torch.Tensor):
            pieces.append(_tensor_entry(TENSOR, arg, _memory_bytes(arg)))
        else:
            raise TypeError(f"{case.name}: cannot encode argument {arg!r}")
    head = struct.pack("<H", len(name)) + name + struct.pack("<H", len(op)) + op
    head += struct.pack("<BB", case.tolerance, len(pieces))
    # Argument descriptors (tensors get their data offset once the layout is known).
    descriptor_bytes = 4 + len(head) + sum(len(p[0]) + (4 if p[0][0] in (TENSOR, OUTPUT, ZEROS) else 0)
                                           for p in pieces)
    offset = (descriptor_bytes + 15) // 16 * 16
    descriptors, blobs = b"", b""
    for entry, data in pieces:
        if entry[0] in (TENSOR, OUTPUT):
            descriptors += entry + struct.pack("<I", offset + len(blobs))
            blobs += data + bytes(-len(data) % 16)
        elif entry[0] == ZEROS:
            descriptors += entry + struct.pack("<I", 0)
        else:
            descriptors += entry
    body = head + descriptors
    body += bytes(offset - 4 - len(body))
    record = body + blobs
    return struct.pack("<I", 4 + len(record)) + record


def quantize_multiplier(scale: float) -> tuple[int, int]:
    """(Q31 multiplier, shift) with scale = multiplier * 2^(shift - 31)."""
    mantissa, exponent = math.frexp(scale)
    multiplier = round(mantissa * (1 << 31))
    if multiplier == 1 << 31:
        multiplier //= 2
        exponent += 1
    return multiplier, exponent


def int8(gen: torch.Generator, *shape: int, lo: int = -128, hi: int = 127) -> torch.Tensor:
    return torch.randint(lo, hi + 1, shape, generator=gen, dtype=torch.int8)


def channels_last(t: torch.Tensor) -> torch.Tensor:
    return t.contiguous(memory_format=torch.channels_last)


#: Activation clamps as (min, max) relative to the output zero point: none, ReLU,
#: ReLU6 at a typical scale, a narrow hardtanh.
CLAMPS = {"none": None, "relu": (0, None), "relu6": (0, 48), "hardtanh": (-20, 35)}


def clamp_range(kind: str, zero_point: int) -> tuple[int, int]:
    bounds = CLAMPS[kind]
    if bounds is None:
        return -128, 127
    lo = max(-128, zero_point + bounds[0])
    hi = 127 if bounds[1] is None else min(127, zero_point + bounds[1])
    return lo, hi


def per_channel_params(gen: torch.Generator, acc_std: float, channels: int,
                       spread: float = 40.0) -> tuple[torch.Tensor, torch.Tensor]:
    """Multipliers and shifts that spread each channel's outputs over `spread` steps of the
    int8 range (a small spread on a large accumulator gives only negative shifts, the
    vector kernels' short output stage)."""
    factors = 0.5 + 1.5 * torch.rand(channels, generator=gen, dtype=torch.float64)
    pairs = [quantize_multiplier(float(spread / max(acc_std, 1e-3) * f)) for f in factors]
    return (torch.tensor([p[0] for p in pairs], dtype=torch.int32),
            torch.tensor([p[1] for p in pairs], dtype=torch.int32))


def dilate_filter(w: torch.Tensor, dilation: tuple[int, int], spatial: tuple[int, int]) -> torch.Tensor:
    """`w` ([.., KH, KW, ..] at dims `spatial`) with dilation-1 zeros between taps."""
    dh, dw = dilation
    kh, kw = w.shape[spatial[0]], w.shape[spatial[1]]
    shape = list(w.shape)
    shape[spatial[0]], shape[spatial[1]] = (kh - 1) * dh + 1, (kw - 1) * dw + 1
    out = torch.zeros(shape, dtype=w.dtype)
    index = [slice(None)] * w.dim()
    index[spatial[0]], index[spatial[1]] = slice(None, None, dh), slice(None, None, dw)
    out[tuple(index)] = w
    return out


def conv_scratch_bytes(depth: int, direct: bool) -> int:
    """The scratch memory Kiln's compiler gives a convolution whose product has `depth` (the
    rule of python/kiln/backends/cortex_m/lowering.py, restated here because this file
    never imports Kiln): with it the kernels take their fastest path. Cases that give less
    (64 bytes) check that the kernels make do, as with a program ExecuTorch sized for
    CMSIS-NN."""
    windows = (6 * depth + 15) // 16 * 16
    return (0 if direct else windows) + max(3 * ((depth + 15) // 16) * 16, 4 * ((depth + 3) // 4) * 4)


def _acc_std(x: torch.Tensor, w_oihw: torch.Tensor, offset: int, stride, padding, dilation, groups: int) -> float:
    acc = torch.nn.functional.conv2d(x.double() + offset, w_oihw.double(), stride=stride, padding=padding,
                                     dilation=dilation, groups=groups)
    return float(acc.std()) if acc.numel() > 1 else float(acc.abs().mean()) + 1.0


def conv_cases(gen: torch.Generator) -> list[Case]:
    """quantized_conv2d (channels-last NCHW) and quantized_conv2d_nhwc."""
    ops = torch.ops.cortex_m
    cases = []
    # (name, n, cin, h, w, cout, kernel, stride, padding, dilation, groups, bias, clamp, nhwc)
    specs = [
        ("3x3 s2 p1 3->13 relu", 1, 3, 23, 19, 13, (3, 3), (2, 2), (1, 1), (1, 1), 1, True, "relu", False),
        ("3x5 s(1,2) p(1,2) dil(2,1) 17->19", 1, 17, 11, 13, 19, (3, 5), (1, 2), (1, 2), (2, 1), 1, False, "none", False),
        ("1x1 19->37 batch 2 relu6", 2, 19, 7, 5, 37, (1, 1), (1, 1), (0, 0), (1, 1), 1, True, "relu6", False),
        ("1x1 33->4 hardtanh", 1, 33, 5, 9, 4, (1, 1), (1, 1), (0, 0), (1, 1), 1, True, "hardtanh", False),
        ("1x1 96->24 (mv2 pointwise)", 1, 96, 6, 7, 24, (1, 1), (1, 1), (0, 0), (1, 1), 1, True, "none", False),
        ("1x1 s2 21->7", 1, 21, 9, 9, 7, (1, 1), (2, 2), (0, 0), (1, 1), 1, True, "none", False),
        ("grouped 3 12->18 3x3 p1", 1, 12, 6, 7, 18, (3, 3), (1, 1), (1, 1), (1, 1), 3, True, "none", False),
        ("5x5 s3 p2 dil 2 5->9", 1, 5, 17, 15, 9, (5, 5), (3, 3), (2, 2), (2, 2), 1, True, "relu", False),
        ("nhwc 3x3 p1 5->7", 1, 5, 8, 6, 7, (3, 3), (1, 1), (1, 1), (1, 1), 1, True, "none", True),
        ("nhwc 1x1 35->17 relu", 1, 35, 3, 5, 17, (1, 1), (1, 1), (0, 0), (1, 1), 1, False, "relu", True),
        # Depth 16 and 8 (the shallow product path), an odd column count, 7 rows (not a
        # multiple of the three Helium interleaves).
        ("1x1 16->21 shallow", 1, 16, 1, 7, 21, (1, 1), (1, 1), (0, 0), (1, 1), 1, True, "relu6", False),
        ("1x1 8->5 shallow", 1, 8, 3, 3, 5, (1, 1), (1, 1), (0, 0), (1, 1), 1, True, "none", False),
        # 3x3 over 16 channels (depth 144: whole chunks), right shifts only.
        ("3x3 p1 16->32 right shifts", 1, 16, 7, 6, 32, (3, 3), (1, 1), (1, 1), (1, 1), 1, True, "none", False),
        ("5x5 s2 p2 24->10", 1, 24, 9, 8, 10, (5, 5), (2, 2), (2, 2), (1, 1), 1, True, "relu", False),
    ]
    for name, n, cin, h, w, cout, k, s, p, d, g, has_bias, clamp, nhwc in specs:
        x = int8(gen, n, cin, h, w)
        weight = int8(gen, cout, k[0], k[1], cin // g, lo=-127)  # OHWI
        input_zp = int(torch.randint(-30, 30, (1,), generator=gen))
        output_zp = int(torch.randint(-20, 20, (1,), generator=gen))
        w_oihw = weight.permute(0, 3, 1, 2).to(torch.int32)
        std = _acc_std(x, w_oihw, -input_zp, s, p, d, g)
        mult, shift = per_channel_params(gen, std, cout, 4.0 if "right shifts" in name else 40.0)
        bias = torch.randint(-4000, 4000, (cout,), generator=gen, dtype=torch.int32) if has_bias else None
        lo, hi = clamp_range(clamp, output_zp)
        ref_weight = dilate_filter(weight, d, (1, 2)) if d != (1, 1) else weight
        expected = ops.quantized_conv2d(channels_last(x), ref_weight, bias, list(s), list(p), [1, 1], -input_zp,
                                        output_zp, mult, shift, lo, hi, torch.empty(0, dtype=torch.int8))
        direct = k == (1, 1) and s == (1, 1) and p == (0, 0) and g == 1
        # Every other case gets the compiler's scratch size, the rest 64 bytes.
        scratch = conv_scratch_bytes(k[0] * k[1] * (cin // g), direct) if len(cases) % 2 == 0 else 64
        args = [channels_last(x), weight, bias, list(s), list(p), list(d), -input_zp, output_zp, mult, shift, lo, hi,
                Zeros(scratch)]
        op = "cortex_m::quantized_conv2d"
        if nhwc:
            args[0] = x.permute(0, 2, 3, 1).contiguous()
            expected = expected.permute(0, 2, 3, 1).contiguous()
            op = "cortex_m::quantized_conv2d_nhwc"
        cases.append(Case(f"conv2d {name}", op, args, channels_last(expected) if not nhwc else expected))
    return cases


def depthwise_cases(gen: torch.Generator) -> list[Case]:
    ops = torch.ops.cortex_m
    cases = []
    # (name, n, cin, h, w, multiplier, kernel, stride, padding, dilation, bias, clamp, nhwc)
    specs = [
        ("3x3 p1 c19", 1, 19, 9, 11, 1, (3, 3), (1, 1), (1, 1), (1, 1), True, "none", False),
        ("5x5 s2 p2 c37 relu6", 1, 37, 13, 10, 1, (5, 5), (2, 2), (2, 2), (1, 1), True, "relu6", False),
        ("3x3 dil 2 p2 c21", 1, 21, 10, 9, 1, (3, 3), (1, 1), (2, 2), (2, 2), False, "none", False),
        ("3x3 multiplier 2 c5->10 relu", 1, 5, 7, 6, 2, (3, 3), (1, 1), (1, 1), (1, 1), True, "relu", False),
        ("3x3 s2 c3 batch 2 hardtanh", 2, 3, 9, 9, 1, (3, 3), (2, 2), (0, 0), (1, 1), True, "hardtanh", False),
        ("3x3 p1 c96 (mv2)", 1, 96, 7, 6, 1, (3, 3), (1, 1), (1, 1), (1, 1), True, "none", False),
        ("1x7 p(0,3) c33", 1, 33, 4, 12, 1, (1, 7), (1, 1), (0, 3), (1, 1), True, "none", False),
        ("nhwc 3x3 s2 p1 c17", 1, 17, 8, 7, 1, (3, 3), (2, 2), (1, 1), (1, 1), True, "relu", True),
        # Two whole blocks of sixteen and a tail of eight; both strides; right shifts only.
        ("3x3 p1 c40 right shifts", 1, 40, 7, 9, 1, (3, 3), (1, 1), (1, 1), (1, 1), True, "relu6", False),
        ("3x3 s2 p1 c32", 1, 32, 9, 8, 1, (3, 3), (2, 2), (1, 1), (1, 1), True, "none", False),
        ("3x3 no padding c16", 1, 16, 6, 7, 1, (3, 3), (1, 1), (0, 0), (1, 1), False, "none", False),
        ("3x3 multiplier 3 c12->36 s2 p1", 1, 12, 7, 8, 3, (3, 3), (2, 2), (1, 1), (1, 1), True, "none", False),
        ("5x5 s2 p2 c24", 1, 24, 9, 10, 1, (5, 5), (2, 2), (2, 2), (1, 1), True, "hardtanh", False),
    ]
    for name, n, cin, h, w, dm, k, s, p, d, has_bias, clamp, nhwc in specs:
        cout = cin * dm
        x = int8(gen, n, cin, h, w)
        weight = int8(gen, 1, k[0], k[1], cout, lo=-127)  # 1HWC
        input_zp = int(torch.randint(-30, 30, (1,), generator=gen))
        output_zp = int(torch.randint(-20, 20, (1,), generator=gen))
        std = _acc_std(x, weight.permute(3, 0, 1, 2).to(torch.int32), -input_zp, s, p, d, cin)
        mult, shift = per_channel_params(gen, std, cout, 4.0 if "right shifts" in name else 40.0)
        bias = torch.randint(-3000, 3000, (cout,), generator=gen, dtype=torch.int32) if has_bias else None
        lo, hi = clamp_range(clamp, output_zp)
        ref_weight = dilate_filter(weight, d, (1, 2)) if d != (1, 1) else weight
        expected = ops.quantized_depthwise_conv2d(channels_last(x), ref_weight, bias, list(s), list(p), [1, 1], dm,
                                                  -input_zp, output_zp, mult, shift, lo, hi,
                                                  torch.empty(0, dtype=torch.int8))
        args = [channels_last(x), weight, bias, list(s), list(p), list(d), dm, -input_zp, output_zp, mult, shift, lo,
                hi, Zeros(64)]
        op = "cortex_m::quantized_depthwise_conv2d"
        if nhwc:
            args[0] = x.permute(0, 2, 3, 1).contiguous()
            expected = expected.permute(0, 2, 3, 1).contiguous()
            op = "cortex_m::quantized_depthwise_conv2d_nhwc"
        cases.append(Case(f"depthwise {name}", op, args, expected if nhwc else channels_last(expected)))
    return cases


def transpose_conv_cases(gen: torch.Generator) -> list[Case]:
    ops = torch.ops.cortex_m
    cases = []
    # (name, cin, h, w, cout, kernel, stride, padding, output_padding, bias, clamp, nhwc)
    specs = [
        ("3x3 s2 p1 op1 6->5", 6, 5, 4, 5, (3, 3), (2, 2), (1, 1), (1, 1), True, "none", False),
        ("2x2 s2 19->3 relu", 19, 3, 5, 3, (2, 2), (2, 2), (0, 0), (0, 0), False, "relu", False),
        ("nhwc 3x3 s1 p1 7->9", 7, 4, 5, 9, (3, 3), (1, 1), (1, 1), (0, 0), True, "none", True),
        ("4x4 s2 p1 16->8 relu (DCGAN)", 16, 4, 4, 8, (4, 4), (2, 2), (1, 1), (0, 0), True, "relu", False),
    ]
    for name, cin, h, w, cout, k, s, p, op_pad, has_bias, clamp, nhwc in specs:
        x = int8(gen, 1, cin, h, w)
        weight = int8(gen, cout, k[0], k[1], cin, lo=-127)  # OHWI
        input_zp = int(torch.randint(-30, 30, (1,), generator=gen))
        output_zp = int(torch.randint(-20, 20, (1,), generator=gen))
        acc = torch.nn.functional.conv_transpose2d(x.double() - input_zp, weight.permute(3, 0, 1, 2).double(),
                                                   stride=s, padding=p, output_padding=op_pad)
        mult, shift = per_channel_params(gen, float(acc.std()), cout)
        bias = torch.randint(-3000, 3000, (cout,), generator=gen, dtype=torch.int32) if has_bias else None
        lo, hi = clamp_range(clamp, output_zp)
        scratch = conv_scratch_bytes(k[0] * k[1] * cin, False) if len(cases) % 2 == 0 else 64
        args = [channels_last(x), weight, bias, list(s), list(p), list(op_pad), [1, 1], -input_zp, output_zp, mult,
                shift, lo, hi, Zeros(scratch), Zeros(64)]
        expected = ops.quantized_transpose_conv2d(*args[:13], torch.empty(0, dtype=torch.int8),
                                                  torch.empty(0, dtype=torch.int8))
        op = "cortex_m::quantized_transpose_conv2d"
        if nhwc:
            args[0] = x.permute(0, 2, 3, 1).contiguous()
            expected = expected.permute(0, 2, 3, 1).contiguous()
            op = "cortex_m::quantized_transpose_conv2d_nhwc"
        cases.append(Case(f"transpose_conv2d {name}", op, args, expected if nhwc else channels_last(expected)))
    return cases


def linear_cases(gen: torch.Generator) -> list[Case]:
    ops = torch.ops.cortex_m
    cases = []
    # (name, input shape, features, bias/kernel_sum, clamp)
    specs = [("3x37->29 bias", (3, 37), 29, "bias", "none"), ("5x17->9 kernel_sum relu", (5, 17), 9, "kernel_sum", "relu"),
             ("1x5x19->13 bias hardtanh", (1, 5, 19), 13, "bias", "hardtanh"),
             ("1x1280->100 kernel_sum (mv2 classifier)", (1, 1280), 100, "kernel_sum", "none"),
             ("2x3->1 no bias relu6", (2, 3), 1, "none", "relu6"),
             # Five columns a loop and a tail (23 = 4 x 5 + 3), with and without a depth tail.
             ("1x160->23 kernel_sum", (1, 160), 23, "kernel_sum", "none"),
             ("1x150->23 kernel_sum", (1, 150), 23, "kernel_sum", "relu"),
             ("1x200->23 bias", (1, 200), 23, "bias", "none"),
             ("3x40->7 kernel_sum filter offset", (3, 40), 7, "kernel_sum offset", "none"),
             ("2x40->7 bias filter offset", (2, 40), 7, "bias offset", "hardtanh")]
    for name, shape, features, kind, clamp in specs:
        x = int8(gen, *shape)
        weights = int8(gen, features, shape[-1], lo=-127)
        input_zp = int(torch.randint(-30, 30, (1,), generator=gen))
        output_zp = int(torch.randint(-20, 20, (1,), generator=gen))
        bias = torch.randint(-3000, 3000, (features,), generator=gen, dtype=torch.int32)
        acc = (x.double().reshape(-1, shape[-1]) - input_zp) @ weights.double().T
        mult, shift = quantize_multiplier(40.0 / max(float(acc.std()) if acc.numel() > 1 else 50.0, 1.0))
        lo, hi = clamp_range(clamp, output_zp)
        filter_offset = 3 if "offset" in kind else 0
        kernel_sum = None
        if kind.startswith("kernel_sum"):
            # bias + input_offset * sum(w + filter_offset): what ExecuTorch folds.
            w_sum = (weights.to(torch.int32) + filter_offset).sum(dim=1)
            kernel_sum = (bias - input_zp * w_sum).to(torch.int32)
        use_bias = bias if kind.startswith("bias") else None
        args = [x, weights, use_bias, kernel_sum, -input_zp, filter_offset, output_zp, [mult], [shift], hi, lo]
        expected = ops.quantized_linear(*args)
        cases.append(Case(f"linear {name}", "cortex_m::quantized_linear", args, expected))
    return cases


def elementwise_cases(gen: torch.Generator) -> list[Case]:
    ops = torch.ops.cortex_m
    cases = []
    shapes = [("4-D channels-last 2x7x5x3", (2, 7, 5, 3), "same"), ("1-D 37", (37,), "same"),
              ("channel broadcast 1x19x3x5", (1, 19, 3, 5), "channel"), ("2-D 5x33", (5, 33), "same")]
    for name, shape, kind in shapes:
        a = int8(gen, *shape)
        b = int8(gen, 1, shape[1], 1, 1) if kind == "channel" else int8(gen, *shape)
        if len(shape) == 4:
            a, b = channels_last(a), channels_last(b)
        zp = [int(v) for v in torch.randint(-40, 40, (3,), generator=gen)]
        # add: the scales of CMSIS-NN's add (inputs to a common scale, left shift 20).
        s_a, s_b, s_out = 0.05, 0.07, 0.09
        twice = 2 * max(s_a, s_b)
        ma, sha = quantize_multiplier(s_a / twice)
        mb, shb = quantize_multiplier(s_b / twice)
        mo, sho = quantize_multiplier(twice / ((1 << 20) * s_out))
        for clamp in ("none", "relu") if kind == "same" else ("hardtanh",):
            lo, hi = clamp_range(clamp, zp[2])
            args = [a, zp[0], ma, sha, b, zp[1], mb, shb, zp[2], mo, sho, lo, hi]
            expected = ops.quantized_add(*args)
            if a.dim() == 4:
                expected = channels_last(expected)
            cases.append(Case(f"add {name} {clamp}", "cortex_m::quantized_add", args, expected))
        # a - b: ExecuTorch's lowering of sub negates the second operand's multiplier.
        args = [a, zp[0], ma, sha, b, zp[1], -mb, shb, zp[2], mo, sho, -128, 127]
        expected = ops.quantized_add(*args)
        cases.append(Case(f"add (a - b) {name}", "cortex_m::quantized_add", args,
                          channels_last(expected) if a.dim() == 4 else expected))
        mm, shm = quantize_multiplier(0.05 * 0.07 / 0.2)
        args = [a, zp[0], b, zp[1], zp[2], mm, shm]
        expected = ops.quantized_mul(*args)
        cases.append(Case(f"mul {name}", "cortex_m::quantized_mul", args,
                          channels_last(expected) if a.dim() == 4 else expected))
        if kind == "same":
            args = [a, zp[0], b, zp[1], zp[2], 0.05 / (0.07 * 0.02)]
            expected = ops.quantized_div(*args)
            cases.append(Case(f"div {name}", "cortex_m::quantized_div", args,
                              channels_last(expected) if a.dim() == 4 else expected))
            for which in ("minimum", "maximum"):
                expected = getattr(ops, which)(a, b)
                cases.append(Case(f"{which} {name}", f"cortex_m::{which}", [a, b],
                                  channels_last(expected) if a.dim() == 4 else expected))
        lut = int8(gen, 256)
        expected = ops.quantized_activation(a, lut)
        cases.append(Case(f"activation {name}", "cortex_m::quantized_activation", [a, lut],
                          channels_last(expected) if a.dim() == 4 else expected))
    scalar = int8(gen, 1)
    a = int8(gen, 3, 29)
    for which in ("minimum", "maximum"):
        cases.append(Case(f"{which} scalar", f"cortex_m::{which}", [a, scalar], getattr(ops, which)(a, scalar)))
    return cases


def matmul_softmax_cases(gen: torch.Generator) -> list[Case]:
    from executorch.backends.cortex_m.passes.aten_to_cortex_m_pass import _compute_softmax_params

    ops = torch.ops.cortex_m
    cases = []
    for name, b, m, n, k in [("2x7x19 @ 13", 2, 7, 13, 19), ("1x1x33 @ 17", 1, 1, 17, 33), ("3x5x4 @ 3", 3, 5, 3, 4)]:
        lhs, rhs = int8(gen, b, m, k), int8(gen, b, n, k)
        lz, rz, oz = (int(v) for v in torch.randint(-20, 20, (3,), generator=gen))
        acc = torch.bmm(lhs.double() - lz, (rhs.double() - rz).transpose(1, 2))
        mult, shift = quantize_multiplier(40.0 / max(float(acc.std()), 1.0))
        args = [lhs, -lz, rhs, -rz, oz, mult, shift, Zeros(64)]
        expected = ops.quantized_batch_matmul(*args[:7], torch.empty(0, dtype=torch.int8))
        cases.append(Case(f"batch_matmul {name}", "cortex_m::quantized_batch_matmul", args, expected))
    for name, shape, scale in [("3x11", (3, 11), 0.1), ("2x5x37", (2, 5, 37), 0.05), ("1x100", (1, 100), 0.2)]:
        x = int8(gen, *shape)
        zp = int(torch.randint(-10, 10, (1,), generator=gen))
        # The parameters ExecuTorch's pass gives arm_softmax_s8 for this input scale.
        mult, shift, diff_min = _compute_softmax_params(scale)
        args = [x, -1, zp, -128, mult, shift, diff_min]
        expected = ops.softmax(*args)
        # ExecuTorch's reference computes in float what CMSIS-NN computes in fixed point.
        cases.append(Case(f"softmax {name}", "cortex_m::softmax", args, expected, tolerance=1))
    return cases


def layout_cases(gen: torch.Generator) -> list[Case]:
    ops = torch.ops.cortex_m
    cases = []
    for name, shape, perm in [("4-D 2x3x5x7 (0,2,3,1)", (2, 3, 5, 7), [0, 2, 3, 1]),
                              ("4-D 1x9x4x3 (0,3,1,2)", (1, 9, 4, 3), [0, 3, 1, 2]),
                              ("3-D 5x17x3 (2,0,1)", (5, 17, 3), [2, 0, 1]), ("2-D 13x19 (1,0)", (13, 19), [1, 0])]:
        x = int8(gen, *shape)
        cases.append(Case(f"transpose {name}", "cortex_m::transpose", [x, perm], ops.transpose(x, perm)))
    for name, shape, pre, post, cl in [("4-D channels-last 1x5x3x4", (1, 5, 3, 4), [0, 1, 2, 0], [0, 2, 1, 3], True),
                                       ("4-D 2x3x4x5", (2, 3, 4, 5), [1, 0, 2, 1], [0, 1, 0, 2], False),
                                       ("2-D 7x9", (7, 9), [0, 0, 1, 2], [0, 0, 3, 0], False)]:
        x = int8(gen, *shape)
        if cl:
            x = channels_last(x)
        value = int(torch.randint(-128, 128, (1,), generator=gen))
        expected = ops.pad(x, pre, post, value)
        cases.append(Case(f"pad {name}", "cortex_m::pad", [x, pre, post, value],
                          channels_last(expected) if cl else expected.contiguous()))
    return cases


def pool_cases(gen: torch.Generator) -> list[Case]:
    ops = torch.ops.cortex_m
    cases = []
    # avg: (name, n, c, h, w, kernel, stride, padding, ceil, nhwc)
    for name, n, c, h, w, k, s, p, ceil, nhwc in [
            ("2x2 s2 ceil c11", 1, 11, 7, 9, [2, 2], [2, 2], [0, 0], True, False),
            ("3x3 s1 p1 c19", 1, 19, 6, 5, [3, 3], [1, 1], [1, 1], False, False),
            ("global 7x7 c37 batch 2", 2, 37, 7, 7, [7, 7], [1, 1], [0, 0], False, False),
            ("nhwc 3x2 s(2,1) c5", 1, 5, 8, 6, [3, 2], [2, 1], [0, 0], False, True)]:
        x = int8(gen, n, c, h, w)
        zp = int(torch.randint(-20, 20, (1,), generator=gen))
        mult, shift = quantize_multiplier(0.05)
        xin = x.permute(0, 2, 3, 1).contiguous() if nhwc else channels_last(x)
        args = [xin, k, s, p, ceil, zp, mult, shift, Zeros(256)]
        op = "cortex_m::quantized_avg_pool2d_nhwc" if nhwc else "cortex_m::quantized_avg_pool2d"
        expected = (ops.quantized_avg_pool2d_nhwc if nhwc else ops.quantized_avg_pool2d)(
            *args[:8], torch.empty(0, dtype=torch.int8))
        # The reference averages in float; CMSIS-NN rounds ties of the integer average.
        cases.append(Case(f"avg_pool2d {name}", op, args, expected if nhwc else channels_last(expected),
                          tolerance=1))
    for name, n, c, h, w, k, s, p, clamp, nhwc in [
            ("3x3 s2 p1 c13", 1, 13, 11, 9, [3, 3], [2, 2], [1, 1], "none", False),
            ("2x2 s2 c37 relu batch 2", 2, 37, 6, 8, [2, 2], [2, 2], [0, 0], "relu", False),
            ("3x1 s1 p(1,0) c3 hardtanh", 1, 3, 5, 4, [3, 1], [1, 1], [1, 0], "hardtanh", False),
            ("nhwc 3x3 s1 c21", 1, 21, 5, 6, [3, 3], [1, 1], [0, 0], "relu6", True)]:
        x = int8(gen, n, c, h, w)
        zp = int(torch.randint(-20, 20, (1,), generator=gen))
        lo, hi = clamp_range(clamp, zp)
        xin = x.permute(0, 2, 3, 1).contiguous() if nhwc else channels_last(x)
        args = [xin, k, s, p, [1, 1], False, zp, zp, lo, hi]
        fn = ops.quantized_max_pool2d_nhwc if nhwc else ops.quantized_max_pool2d
        expected = fn(*args)
        op = "cortex_m::quantized_max_pool2d_nhwc" if nhwc else "cortex_m::quantized_max_pool2d"
        cases.append(Case(f"max_pool2d {name}", op, args, expected.contiguous() if nhwc else channels_last(expected)))
    return cases


def quantize_cases(gen: torch.Generator) -> list[Case]:
    ops = torch.ops.cortex_m
    cases = []
    for name, shape, scale, zp in [("1-D 37", (37,), 0.031, 3), ("2-D 5x19", (5, 19), 0.2, -17),
                                   ("4-D 1x3x5x7", (1, 3, 5, 7), 0.0123, 0)]:
        x = torch.randn(shape, generator=gen) * 2.0
        expected = ops.quantize_per_tensor(x, scale, zp, -128, 127, torch.int8)
        cases.append(Case(f"quantize_per_tensor {name}", "cortex_m::quantize_per_tensor",
                          [x, scale, zp, -128, 127, DTYPES[torch.int8]], expected))
        q = int8(gen, *shape)
        expected = ops.dequantize_per_tensor(q, scale, zp, -128, 127, torch.int8)
        cases.append(Case(f"dequantize_per_tensor {name}", "cortex_m::dequantize_per_tensor",
                          [q, scale, zp, -128, 127, DTYPES[torch.int8]], expected))
    return cases


def layer_norm_cases(gen: torch.Generator) -> list[Case]:
    """Kiln's own kiln::quantized_layer_norm (no ExecuTorch reference): the expected output
    is PyTorch's layer norm of the dequantized input, quantized; the kernel computes the
    mean and variance from integer sums, so a value may land one step away."""
    cases = []
    for name, shape, affine, clamp in [("2x5x64 affine", (2, 5, 64), True, "none"),
                                       ("3x37 no affine relu", (3, 37), False, "relu")]:
        x = int8(gen, *shape)
        in_zp, out_zp = int(torch.randint(-20, 20, (1,), generator=gen)), 3
        in_scale, out_scale, eps = 0.05, 0.03, 1e-5
        n = shape[-1]
        weight = (1.0 + 0.3 * torch.randn(n, generator=gen)) if affine else None
        bias = (0.2 * torch.randn(n, generator=gen)) if affine else None
        real = (x.to(torch.float32) - in_zp) * in_scale
        y = torch.nn.functional.layer_norm(real, (n,), weight, bias, eps)
        lo, hi = clamp_range(clamp, out_zp)
        expected = torch.clamp(torch.round(y * (1.0 / out_scale)) + out_zp, lo, hi).to(torch.int8)
        args = [x, in_zp, in_scale, weight, bias, eps, out_zp, out_scale, lo, hi]
        cases.append(Case(f"layer_norm {name}", "kiln::quantized_layer_norm", args, expected, tolerance=1))
    return cases


MAKERS: list[Callable[[torch.Generator], list[Case]]] = [
    conv_cases, depthwise_cases, transpose_conv_cases, linear_cases, elementwise_cases, matmul_softmax_cases,
    layout_cases, pool_cases, quantize_cases, layer_norm_cases]


def make_cases() -> list[Case]:
    # The reference implementations register torch.ops.cortex_m; the pass manager
    # import resolves their circular imports first.
    import executorch.backends.cortex_m.passes.cortex_m_pass_manager  # noqa: F401
    import executorch.backends.cortex_m.ops.operators  # noqa: F401

    gen = torch.Generator().manual_seed(20261124)
    cases = [case for maker in MAKERS for case in maker(gen)]
    for case in cases:
        assert case.expected.dtype in DTYPES, case.name
        assert case.op.startswith(("cortex_m::", "kiln::")), case.name
    return cases


def write_cases(cases: list[Case], path: Path) -> None:
    records = b"".join(encode(c) for c in cases)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"KCMC" + struct.pack("<III", 1, len(cases), 0) + records)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--list", action="store_true", help="print the cases' names")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    cases = make_cases()
    write_cases(cases, args.out)
    if args.list:
        for case in cases:
            print(f"{case.op:45s} {case.name}")
    ops = sorted({c.op for c in cases})
    LOG.info("%d cases of %d operators -> %s (%d bytes)", len(cases), len(ops), args.out, args.out.stat().st_size)
    return 0


if __name__ == "__main__":
    sys.exit(main())
