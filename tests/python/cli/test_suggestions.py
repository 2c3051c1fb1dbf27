"""A mistyped target or model name gets the nearest real one as a suggestion: for targets
by family and MAC count (what the user most likely meant), not by spelling alone."""

from __future__ import annotations

import pytest

import kiln.models
from kiln.backends.arm import EthosUCompileSpec, TargetError
from kiln.targets import TARGETS, nearest_target


@pytest.mark.parametrize(
    "typed, meant",
    [
        ("ethos-u85-129", "ethos-u85-128"),  # spelling alone says ethos-u85-512
        ("ethos-u55-218", "ethos-u55-128"),  # the same digits in another order
        ("ethos-u85-2000", "ethos-u85-2048"),
        ("ethos-u55-100", "ethos-u55-128"),
        ("ethos-u65-500", "ethos-u65-512"),
        ("Ethos_U65_256", "ethos-u65-256"),
        ("u85-256", "ethos-u85-256"),
        ("ethos-u56-128", "ethos-u55-128"),  # no such family: the nearest one
        ("ethos-u55-16", "ethos-u55-32"),
    ],
)
def test_nearest_target(typed: str, meant: str) -> None:
    assert nearest_target(typed) == meant
    with pytest.raises(TargetError, match=f"Did you mean '{meant}'"):
        EthosUCompileSpec(typed)


def test_every_real_target_is_its_own_nearest() -> None:
    assert all(nearest_target(target) == target for target in TARGETS)


def test_no_suggestion_for_a_name_without_family_or_count() -> None:
    assert nearest_target("garbage") is None
    with pytest.raises(TargetError) as caught:
        EthosUCompileSpec("garbage")
    assert "Did you mean" not in str(caught.value) and "ethos-u85-2048" in str(caught.value)


@pytest.mark.parametrize(
    "typed, meant",
    [("mv3x", "mv3"), ("MV2", "mv2"), ("mobilenet_v2", "mv2"), ("MobileNetV3", "mv3"), ("resnet18", "resnet"),
     ("ds_cnn", "dscnn"), ("transformers", "transformer"), ("smallcnn2", "smallcnn")],
)
def test_closest_model_name(typed: str, meant: str) -> None:
    assert kiln.models.closest_name(typed) == meant
    with pytest.raises(kiln.models.UnknownModelError, match=f"did you mean '{meant}'"):
        kiln.models.describe(typed)


def test_no_model_suggestion_for_nonsense() -> None:
    assert kiln.models.closest_name("xyz") is None
