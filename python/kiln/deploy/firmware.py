"""Step 2 of a deployment: building the runner firmware with CMake (preset arm-baremetal).

The firmware for one program is the ``kiln_firmware`` target of examples/arm, configured
with the program, its memory header, inputs and expected outputs
(``-DKILN_FIRMWARE_PTE=...``). Each target CPU gets its own build folder under the
deployment's output, so repeated deployments only rebuild what changed.
"""

from __future__ import annotations

import logging
import shutil
import subprocess
from pathlib import Path

import kiln
from kiln.deploy.prepare import DeployError, PreparedProgram

logger = logging.getLogger("kiln.deploy")

#: Configure presets by target CPU (CMakePresets.json).
PRESETS = {"cortex-m55": "arm-baremetal", "cortex-m85": "arm-baremetal-m85"}


def find_source_dir() -> Path:
    """The Kiln checkout this package runs from (an editable install), for CMake."""
    for parent in Path(kiln.__file__).resolve().parents:
        if (parent / "CMakePresets.json").is_file() and (parent / "examples" / "arm").is_dir():
            return parent
    raise DeployError("kiln-deploy builds firmware from a Kiln source checkout; none was found "
                      "above the kiln package. Pass --source-dir <checkout>.")


def _run(command: list[str], what: str, cwd: Path) -> None:
    logger.info("%s: %s", what, " ".join(command))
    completed = subprocess.run(command, cwd=cwd, check=False)
    if completed.returncode != 0:
        raise DeployError(f"{what} failed with exit code {completed.returncode}: {' '.join(command)}",
                          completed.returncode)


def build_firmware(prepared: PreparedProgram, build_dir: Path, source_dir: Path | None = None,
                   cpu: str = "cortex-m55", ethos_u: bool = False, jobs: int = 2) -> Path:
    """Configures and builds the firmware; returns the ELF's path."""
    if shutil.which("arm-none-eabi-gcc") is None:
        raise DeployError("arm-none-eabi-gcc not found: apt-get install gcc-arm-none-eabi "
                          "libnewlib-arm-none-eabi libstdc++-arm-none-eabi-dev")
    if cpu not in PRESETS:
        raise DeployError(f"no firmware preset for {cpu}; choose one of {', '.join(PRESETS)}", 2)
    source = source_dir or find_source_dir()
    configure = [
        "cmake", "--preset", PRESETS[cpu], "-B", str(build_dir),
        "-DKILN_BUILD_FIRMWARE_TESTS=OFF",
        f"-DKILN_BUILD_ETHOS_U={'ON' if ethos_u else 'OFF'}",
        f"-DKILN_FIRMWARE_PTE={prepared.pte.resolve()}",
        f"-DKILN_FIRMWARE_MEMORY_HEADER={prepared.memory_header.resolve()}",
        "-DKILN_FIRMWARE_INPUTS=" + ";".join(str(p.resolve()) for p in prepared.inputs),
        "-DKILN_FIRMWARE_EXPECTED_OUTPUTS=" + ";".join(str(p.resolve()) for p in prepared.expected_outputs),
    ]
    _run(configure, "configuring the firmware (CMake)", source)
    _run(["cmake", "--build", str(build_dir), "--target", "kiln_firmware", "-j", str(jobs)],
         "building the firmware", source)
    elf = build_dir / "examples" / "arm" / "kiln_firmware.elf"
    if not elf.is_file():
        raise DeployError(f"the build finished but {elf} is missing")
    return elf
