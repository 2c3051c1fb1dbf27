"""Shared compile results for the end-to-end tests (quantizing is the slow part:
each zoo model is quantized once and compiled for every target from that; each
(model, target) program is compiled once per session)."""

from __future__ import annotations

import logging

import pytest

import kiln
import kiln.models
from kiln.cli.aot import calibration_samples

CALIBRATION_SAMPLES = 2


@pytest.fixture(scope="session")
def quantized_zoo() -> dict:
    """name -> (model, inputs, quantized program) and (name, target) -> delegated
    program; filled on first use of each."""
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


def delegated_program(cache: dict, name: str, target: str) -> kiln.Program:
    """The zoo model ``name`` quantized and compiled with Ethos-U delegates for ``target``."""
    if (name, target) not in cache:
        from kiln.backends.arm import EthosUCompileSpec
        from kiln.backends.arm.partitioner import EthosUPartitioner

        _, _, quantized = quantized_model(cache, name)
        cache[name, target] = kiln.export(quantized, partitioner=EthosUPartitioner(EthosUCompileSpec(target)))
    return cache[name, target]
