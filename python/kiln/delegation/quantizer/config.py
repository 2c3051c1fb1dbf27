"""Quantization configurations: which observer or fake-quantizer measures each tensor.

The Ethos-U's integer data path (TOSA 1.0 INT profile) wants

* int8 weights, symmetric (zero point 0), one scale per output channel, range
  [-127, 127]: -128 is left out so that negating a weight never overflows and the
  range stays symmetric, as TFLite and ExecuTorch's Arm quantizer do;
* int8 activations, asymmetric (any zero point), one scale per tensor, [-128, 127];
* int32 bias with scale = input scale x weight scale (per channel) and zero point 0,
  so that the bias adds straight into the int32 accumulator. Its qparams are derived
  from the input and weight observers, never observed.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Literal

import torch
from torch.fx import Node
from torchao.quantization.pt2e import (
    FakeQuantize,
    FusedMovingAvgObsFakeQuantize,
    HistogramObserver,
    MinMaxObserver,
    MovingAverageMinMaxObserver,
    PerChannelMinMaxObserver,
)
from torchao.quantization.pt2e.quantizer import (
    DerivedQuantizationSpec,
    FixedQParamsQuantizationSpec,
    QuantizationSpec,
)

ACTIVATION_QMIN, ACTIVATION_QMAX = -128, 127
WEIGHT_QMIN, WEIGHT_QMAX = -127, 127
_EPS = 2.0**-16  # smallest scale an observer may return; keeps all-zero tensors quantizable

ObserverKind = Literal["minmax", "moving_average", "histogram"]


class FiniteHistogramObserver(HistogramObserver):
    """The histogram observer, except on a tensor with infinite or NaN values: there it
    keeps min/max ranges (torchao's would drop those values and clamp them silently), so the
    infinite scale is refused by name, naming the node, as with the min/max observer."""

    def __init__(self, *args, **kwargs) -> None:  # type: ignore[no-untyped-def]
        super().__init__(*args, **kwargs)
        self.non_finite = False

    def forward(self, x_orig: torch.Tensor) -> torch.Tensor:
        if not self.non_finite and (x_orig.numel() == 0 or bool(torch.isfinite(x_orig).all())):
            return super().forward(x_orig)
        self.non_finite = True
        low, high = torch.aminmax(x_orig.detach())
        self.min_val.copy_(torch.minimum(self.min_val, low))
        self.max_val.copy_(torch.maximum(self.max_val, high))
        return x_orig

    def calculate_qparams(self):  # type: ignore[no-untyped-def]
        if self.non_finite:
            return self._calculate_qparams(self.min_val, self.max_val)
        return super().calculate_qparams()


def _activation_observer(observer: ObserverKind, is_qat: bool, *, eps: float) -> Any:
    """The activation observer (or, for QAT, moving-average fake quantizer) for ``observer``."""
    if is_qat:
        return FusedMovingAvgObsFakeQuantize.with_args(eps=eps)
    return {
        "minmax": MinMaxObserver,
        "moving_average": MovingAverageMinMaxObserver,
        "histogram": FiniteHistogramObserver,
    }[observer].with_args(eps=eps)


@dataclass(frozen=True)
class QuantizationConfig:
    """How the activations and weights of one region of the model are quantized.

    Pass it to :meth:`EthosUQuantizer.set_global`, ``set_module_type``,
    ``set_module_name`` or ``set_io``. ``None`` in those places means "leave float".
    """

    activation: QuantizationSpec
    weight: QuantizationSpec
    is_qat: bool = False

    def weight_spec(self, node: Node) -> QuantizationSpec:
        """The weight spec of conv/linear ``node``: per-channel scales along its output
        channels (axis 1 for transposed convolutions, whose weights are [IC, OC, ...])."""
        from kiln.delegation.quantizer.patterns import OUTPUT_CHANNELS_AXIS_1

        if node.target in OUTPUT_CHANNELS_AXIS_1 and self.weight.ch_axis != 1:
            # The observer is built with the spec's fields, ch_axis included (over any
            # constructor default): torchao's prepare passes them as keyword arguments.
            return dataclasses.replace(self.weight, ch_axis=1)
        return self.weight

    def bias_spec(self, node: Node) -> DerivedQuantizationSpec:
        """int32 bias of conv/linear ``node``: scale = input scale x weight scale, zero point 0."""
        input_node, weight_node = node.args[0], node.args[1]
        per_channel = self.weight.qscheme in (torch.per_channel_symmetric, torch.per_channel_affine)
        return DerivedQuantizationSpec(
            derived_from=[(input_node, node), (weight_node, node)],  # type: ignore[list-item]
            derive_qparams_fn=_bias_qparams,
            dtype=torch.int32,
            quant_min=torch.iinfo(torch.int32).min,
            quant_max=torch.iinfo(torch.int32).max,
            qscheme=torch.per_channel_symmetric if per_channel else torch.per_tensor_symmetric,
            ch_axis=0,
        )


def _bias_qparams(observers: list[torch.nn.Module]) -> tuple[torch.Tensor, torch.Tensor]:
    if len(observers) != 2:
        raise ValueError(f"bias qparams derive from [input, weight] observers, got {len(observers)}")
    input_scale, _ = observers[0].calculate_qparams()  # type: ignore[operator]
    weight_scale, _ = observers[1].calculate_qparams()  # type: ignore[operator]
    scale = (input_scale * weight_scale).to(torch.float32)
    return scale, torch.zeros_like(scale, dtype=torch.int32)


def get_symmetric_quantization_config(
    *,
    per_channel: bool = True,
    is_qat: bool = False,
    observer: ObserverKind = "histogram",
) -> QuantizationConfig:
    """The Ethos-U default: int8 per-channel symmetric weights, int8 affine activations.

    ``observer`` chooses how activation ranges are measured during calibration:
    ``"histogram"`` (the default, as in ExecuTorch's Arm quantizer: ranges that minimise
    the quantization error, clipping rare outliers), ``"minmax"`` (exact min/max over all
    samples, a little faster), ``"moving_average"`` (robust to outlier batches). The
    histogram's tighter ranges give finer steps inside the network: the int8 program lands
    closer to the quantized PyTorch model (MobileNetV2 on ethos-u55-128: at most 10 output
    steps, 1.82 on average, against 11 and 1.92 with min/max; MobileNetV3: 10 and 0.65
    against 17 and 0.96). QAT always uses a moving-average fake quantizer for activations.
    """
    activation_ctr = _activation_observer(observer, is_qat, eps=_EPS)
    activation = QuantizationSpec(
        dtype=torch.int8,
        quant_min=ACTIVATION_QMIN,
        quant_max=ACTIVATION_QMAX,
        qscheme=torch.per_tensor_affine,
        observer_or_fake_quant_ctr=activation_ctr,
    )
    weight_qscheme = torch.per_channel_symmetric if per_channel else torch.per_tensor_symmetric
    weight_observer = PerChannelMinMaxObserver if per_channel else MinMaxObserver
    if is_qat:
        weight_ctr = FakeQuantize.with_args(
            observer=weight_observer, quant_min=WEIGHT_QMIN, quant_max=WEIGHT_QMAX,
            dtype=torch.qint8, qscheme=weight_qscheme, eps=_EPS,
            **({"ch_axis": 0} if per_channel else {}),
        )
    else:
        weight_ctr = weight_observer.with_args(eps=_EPS)
    weight = QuantizationSpec(
        dtype=torch.int8,
        quant_min=WEIGHT_QMIN,
        quant_max=WEIGHT_QMAX,
        qscheme=weight_qscheme,
        ch_axis=0,
        observer_or_fake_quant_ctr=weight_ctr,
    )
    return QuantizationConfig(activation=activation, weight=weight, is_qat=is_qat)


def fixed_output_spec(low: float, high: float, dtype: torch.dtype = torch.int8) -> FixedQParamsQuantizationSpec:
    """int8 spec covering exactly [low, high] (for functions with a known output range).

    Sigmoid and softmax ([0, 1]) get scale 1/256 and zero point -128, tanh ([-1, 1])
    scale 1/128 and zero point 0: the whole int8 range is used and no calibration
    sample can squeeze it. ``dtype=torch.int16``: the symmetric 16-bit spec that covers
    [low, high] (scale max(|low|, |high|) / 32767, zero point 0).
    """
    if dtype == torch.int16:
        return FixedQParamsQuantizationSpec(
            dtype=torch.int16, scale=max(abs(low), abs(high)) / ACTIVATION16_QMAX, zero_point=0,
            quant_min=ACTIVATION16_QMIN, quant_max=ACTIVATION16_QMAX, qscheme=torch.per_tensor_symmetric)
    scale = (high - low) / (ACTIVATION_QMAX - ACTIVATION_QMIN + 1)
    zero_point = int(round(ACTIVATION_QMIN - low / scale))
    return FixedQParamsQuantizationSpec(
        dtype=torch.int8,
        scale=scale,
        zero_point=zero_point,
        quant_min=ACTIVATION_QMIN,
        quant_max=ACTIVATION_QMAX,
        qscheme=torch.per_tensor_affine,
    )


# 16-bit activations are symmetric: TOSA 1.0 takes a zero point of 0 for int16 inputs of
# CONV2D, MATMUL and RESCALE, and -32768 is left out so that the range is symmetric.
ACTIVATION16_QMIN, ACTIVATION16_QMAX = -32767, 32767
# int8's smallest scale (2**-16) would cap a 16-bit tensor's range below 0.5 at a coarser
# step than its codes allow. The floor still matters for tensors that calibrate to (almost)
# nothing, such as a recurrent layer's zero initial state: the bias of the layer's recurrent
# product is quantized once, at the zero state's scale times the weights' (about 2e-3), for
# every time step, so the floor bounds that bias to 2**31 x floor x 2e-3: 2**-30 saturated a
# GRU's, 2**-24 (0.26) an LSTM's (its a16w8 error was 14 times its int8 error); 2**-20 allows
# biases up to 4 and still quantizes ranges down to 0.03 at full resolution.
_EPS16 = 2.0**-20


def get_a16w8_quantization_config(
    *,
    per_channel: bool = True,
    is_qat: bool = False,
    observer: ObserverKind = "minmax",
) -> QuantizationConfig:
    """a16w8: int16 symmetric per-tensor activations, int8 per-channel symmetric weights.

    The weights and the int32 bias (input scale x weight scale) are those of
    :func:`get_symmetric_quantization_config`; the Ethos-U accumulates int16 x int8
    products in 48 (U55/U65) or 64 (U85) bits. Operators that the Ethos-U lowering cannot
    run in 16 bits keep int8 activations (:mod:`kiln.backends.arm.quantizer.precision`).
    """
    int8 = get_symmetric_quantization_config(per_channel=per_channel, is_qat=is_qat, observer=observer)
    activation_ctr = _activation_observer(observer, is_qat, eps=_EPS16)
    activation = QuantizationSpec(
        dtype=torch.int16,
        quant_min=ACTIVATION16_QMIN,
        quant_max=ACTIVATION16_QMAX,
        qscheme=torch.per_tensor_symmetric,
        observer_or_fake_quant_ctr=activation_ctr,
    )
    return dataclasses.replace(int8, activation=activation)


def is_int16(config: QuantizationConfig | None) -> bool:
    """True for a config with 16-bit activations."""
    return config is not None and config.activation.dtype == torch.int16
