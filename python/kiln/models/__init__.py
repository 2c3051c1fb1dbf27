"""Example models for Kiln's tests, benchmarks and quick start.

``kiln.models.get(name)`` returns ``(module_in_eval_mode, example_inputs)``. Every model
is deterministic (seeded) and has realistic activations: models with batch norm get
running statistics re-estimated from random batches, so outputs are O(0.1-10) rather
than the ~1e-9 that default statistics give (which would make every comparison
meaningless).
"""

from __future__ import annotations

import difflib
import importlib
import re
from typing import TYPE_CHECKING, Callable

from kiln import KilnError
from kiln.models.user_file import ModelFileError, load_model_from_file

if TYPE_CHECKING:
    import torch

    ModelFactory = Callable[[], tuple[torch.nn.Module, tuple[torch.Tensor, ...]]]

# name -> ("module:factory" under kiln.models, description). The modules (and torch) are
# imported when a model is built, so that listing and checking names is instant.
_REGISTRY: dict[str, tuple[str, str]] = {
    "add": ("basic:make_add", "x + y on two 1x3x8x8 tensors"),
    "softmax": ("basic:make_softmax", "softmax over the last dim of a 2x16 tensor"),
    "mlp": ("basic:make_mlp", "3-layer perceptron with ReLU, 1x64 -> 10"),
    "smallcnn": ("small_cnn:make_small_cnn", "two conv-bn-relu-maxpool stages, avg pool, linear; 1x3x32x32"),
    "resblock": ("small_cnn:make_res_block", "conv-bn-relu6 residual block with depthwise conv; 1x16x16x16"),
    "mv2": ("mobilenet_v2:make_mobilenet_v2", "MobileNetV2, width 1.0, 1x3x224x224, 1000 classes"),
    "resnet": ("resnet:make_resnet8", "ResNet-8 (MLPerf Tiny image classification), 1x3x32x32, 10 classes"),
    "dscnn": ("ds_cnn:make_ds_cnn", "DS-CNN keyword spotting, 1x1x49x10 MFCC input, 12 classes"),
    "autoencoder": ("autoencoder:make_autoencoder", "MLP autoencoder for anomaly detection (MLPerf Tiny), 1x640"),
    "mv3": ("mobilenet_v3:make_mobilenet_v3_small",
            "MobileNetV3-Small (hardswish, squeeze-excite), 1x3x96x96, 1000 classes"),
    "transformer": ("transformer:make_transformer",
                    "pre-norm transformer encoder block, 4 heads, GELU MLP; 1x16x64 (U85)"),
    "vww": ("mobilenet_v1:make_mobilenet_v1_vww",
            "MobileNetV1-0.25 visual wake words (MLPerf Tiny), 1x3x96x96, 2 classes"),
    "gru": ("recurrent:make_gru_kws", "GRU keyword spotter: 64 units over 49 MFCC frames, 1x49x10, 12 classes"),
    "lstm": ("recurrent:make_lstm_har", "LSTM activity recogniser: 32 units over 32 IMU steps, 1x32x6, 6 classes"),
    "conv1d": ("time_series:make_conv1d_har", "1-D conv time-series classifier, 1x3x128 accelerometer window, 6 classes"),
    "unet": ("unet:make_unet", "small U-Net: nearest upsampling, skip concatenations; 1x3x64x64 -> 1x2x64x64"),
    "decoder": ("decoder:make_conv_transpose_decoder",
                "transposed-conv decoder (DCGAN-style), 1x16 latent -> 1x1x32x32"),
    "vit": ("vit:make_vit", "vision transformer: 4x4 patches, 2 blocks, 4 heads; 1x3x32x32, 10 classes"),
    "senet": ("se_net:make_se_net", "residual CNN with squeeze-and-excitation (linear + sigmoid gates), 1x3x32x32"),
}


class UnknownModelError(KilnError, KeyError):
    """Raised for a model name that ``kiln.models`` does not know."""

    def __str__(self) -> str:  # KeyError quotes its message; keep it readable.
        return str(self.args[0])


def names() -> list[str]:
    """Names accepted by :func:`get`, in registration order."""
    return list(_REGISTRY)


def describe(name: str) -> str:
    """One line describing the model."""
    return _lookup(name)[1]


def get(name: str) -> tuple[torch.nn.Module, tuple[torch.Tensor, ...]]:
    """Builds the model ``name`` in eval mode and returns it with example inputs."""
    module_name, _, function = _lookup(name)[0].partition(":")
    factory: ModelFactory = getattr(importlib.import_module(f"kiln.models.{module_name}"), function)
    model, inputs = factory()
    return model.eval(), inputs


def is_model_file(spec: str) -> bool:
    """Whether ``spec`` names a user's model file (``path/to/file.py:ClassName``)."""
    return spec.endswith(".py") or ":" in spec


def load(spec: str) -> tuple[torch.nn.Module, tuple[torch.Tensor, ...]]:
    """A built-in model name, or ``path/to/file.py:ClassName`` (see user_file.py)."""
    if is_model_file(spec):
        return load_model_from_file(spec)
    return get(spec)


def _squeezed(text: str) -> str:
    """Lower case, letters and digits only: "MobileNet_V2" -> "mobilenetv2"."""
    return re.sub(r"[^a-z0-9]", "", text.lower())


def closest_name(name: str) -> str | None:
    """The built-in model ``name`` most likely means: by its name (``mv3x`` -> ``mv3``) or
    by the architecture its description starts with (``mobilenet_v2`` -> ``mv2``)."""
    wanted = _squeezed(name)
    if not wanted:
        return None
    spellings: dict[str, str] = {}
    for model, (_, description) in _REGISTRY.items():
        architecture = re.split(r"[ ,]", description)[0]  # "MobileNetV3-Small", "ResNet-8"
        for spelling in (model, architecture, architecture.split("-")[0]):
            spellings.setdefault(_squeezed(spelling), model)
    if wanted in spellings:
        return spellings[wanted]
    close = difflib.get_close_matches(wanted, list(spellings), n=1, cutoff=0.6)
    return spellings[close[0]] if close else None


def _lookup(name: str) -> tuple[str, str]:
    try:
        return _REGISTRY[name]
    except KeyError:
        guess = closest_name(name)
        hint = f" (did you mean {guess!r}?)" if guess else ""
        raise UnknownModelError(
            f"unknown model {name!r}{hint}; available: {', '.join(_REGISTRY)}, or path/to/file.py:ClassName"
        ) from None
