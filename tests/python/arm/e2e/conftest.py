"""Shared compile results for the end-to-end tests (quantizing is the slow part:
each zoo model is quantized once and compiled for every target from that)."""

from __future__ import annotations

import logging

import pytest

import kiln
import kiln.models
from kiln.cli.aot import calibration_samples

CALIBRATION_SAMPLES = 2


@pytest.fixture(scope="session")
def quantized_zoo() -> dict:
    """name -> (model, inputs, quantized program); filled on first use of each model."""
    return {}


def quantized_model(cache: dict, name: str):
    if name not in cache:
        from kiln.backends.arm import EthosUCompileSpec, EthosUQuantizer

        logging.getLogger("torchao").setLevel(logging.ERROR)
        model, inputs = kiln.models.get(name)
        quantizer = EthosUQuantizer(EthosUCompileSpec("ethos-u55-128"))  # the same for every Ethos-U
        program = kiln.quantize(model, inputs, quantizer, calibration_samples(inputs, CALIBRATION_SAMPLES),
                                progress=False)
        cache[name] = (model, inputs, program)
    return cache[name]
