"""``XnnpackQuantizer``: the int8 scheme XNNPACK's int8 operators take.

* activations: int8 (qs8), one scale and zero point per tensor;
* weights: int8 (qc8), symmetric (zero point 0, range [-127, 127]), one scale per
  output channel;
* bias: int32 with scale = input scale x weight scale (per channel), zero point 0.

This is the scheme of ExecuTorch's ``XNNPACKQuantizer`` and the same one the
Ethos-U quantizer uses, so the annotation rules are shared: an activation after a
convolution, fully connected layer or addition is fused (one quantized output),
pooling and reshapes keep their input's qparams.

    program = kiln.quantize(model, (x,), XnnpackQuantizer(), calibration_samples)
    pte = kiln.export(program, partitioner=XnnpackPartitioner())
"""

from __future__ import annotations

from kiln.delegation.quantizer import ModuleScopedQuantizer, get_symmetric_quantization_config


class XnnpackQuantizer(ModuleScopedQuantizer):
    """Annotates a model for XNNPACK's int8 operators (``set_global``, ``set_module_type``,
    ``set_module_name`` and ``set_io`` work as on every :class:`kiln.delegation.quantizer.ModuleScopedQuantizer`)."""

    shared_averages = True  # its average-pool kernels work at the input's qparams

    def __init__(self, *, is_qat: bool = False) -> None:
        super().__init__(get_symmetric_quantization_config(is_qat=is_qat))
