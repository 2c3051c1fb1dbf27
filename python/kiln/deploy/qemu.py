"""Running firmware in QEMU with a time bound, on the machine its board file names
(``qemu.machine``; by default the default board's: ``mps3-an547``, the Corstone-300).

The firmware prints on UART0 (QEMU's stdout with ``-nographic``) and ends with a
semihosting SYS_EXIT_EXTENDED call that becomes QEMU's exit status. ``-icount shift=0``
makes time deterministic: one instruction per virtual nanosecond, so the firmware's
tick counts are instruction counts.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from kiln.boards import DEFAULT_BOARD, load_board

#: What the firmware's exit statuses mean (examples/arm/platform/board.h).
EXIT_STATUS_MEANINGS = {
    0: "ok",
    1: "the runtime reported an error",
    2: "the outputs differ from the host runtime's",
    3: "processor fault",
    4: "abort",
}


class QemuTimeout(Exception):
    """The firmware did not finish within the time bound."""

    def __init__(self, seconds: float, output: str) -> None:
        super().__init__(f"QEMU did not finish within {seconds:g} s (the firmware hangs or the "
                         "model is too slow for the bound; raise it with --timeout)")
        self.seconds = seconds
        self.output = output


@dataclass(frozen=True)
class QemuResult:
    exit_code: int
    output: str
    seconds: float

    @property
    def meaning(self) -> str:
        return EXIT_STATUS_MEANINGS.get(self.exit_code, "unknown status")


def qemu_command(elf: Path, machine: str, qemu: str = "qemu-system-arm") -> list[str]:
    return [qemu, "-machine", machine, "-nographic", "-monitor", "none", "-serial", "stdio",
            "-semihosting-config", "enable=on,target=native", "-icount", "shift=0",
            "-kernel", str(elf)]


def default_machine() -> str:
    """The QEMU machine of the default board (kiln.boards.DEFAULT_BOARD)."""
    return load_board(DEFAULT_BOARD).qemu.machine


def run_firmware(elf: str | Path, timeout: float = 120.0, machine: str | None = None) -> QemuResult:
    """Runs ``elf`` to its exit on ``machine`` (default: the default board's). Raises
    QemuTimeout (with the output so far) after ``timeout`` s."""
    machine = machine or default_machine()
    qemu = shutil.which("qemu-system-arm")
    if qemu is None:
        raise FileNotFoundError("qemu-system-arm not found: apt-get install qemu-system-arm")
    command = qemu_command(Path(elf), machine, qemu)
    start = time.monotonic()
    try:
        completed = subprocess.run(command, capture_output=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired as expired:
        output = (expired.stdout or b"").decode("utf-8", "replace")
        raise QemuTimeout(timeout, output) from None
    output = completed.stdout.decode("utf-8", "replace") + completed.stderr.decode("utf-8", "replace")
    return QemuResult(completed.returncode, output, time.monotonic() - start)
