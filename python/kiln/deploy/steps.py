"""Long deployment steps, quietly: their output goes to a log file, the terminal gets one
line per step (with a spinner and the build's progress on a terminal) and the time it took.

    steps = StepPrinter(total=3)
    with steps.step("building the firmware") as step:
        code = run_logged(["cmake", "--build", ...], log_path, on_line=step.ninja_progress)
"""

from __future__ import annotations

import re
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO

_NINJA_PROGRESS = re.compile(r"^\[(\d+)/(\d+)\]")
_SPINNER = "|/-\\"


class Step:
    """One running step: what it shows after its text while it runs."""

    def __init__(self) -> None:
        self.detail = ""

    def ninja_progress(self, line: str) -> None:
        """Shows ``[done/total]`` from a Ninja status line."""
        if match := _NINJA_PROGRESS.match(line):
            self.detail = f"[{match.group(1)}/{match.group(2)}]"


class StepPrinter:
    """Prints ``[kiln-deploy] i/n text ... 12.3 s``; on a terminal the line spins while
    the step runs. Elsewhere (logs, CI, tests) each step is printed once, when it starts,
    and its time when it ends."""

    def __init__(self, total: int, prefix: str = "[kiln-deploy]", stream: TextIO | None = None) -> None:
        self.total, self.index, self.prefix = total, 0, prefix
        self.stream = stream if stream is not None else sys.stdout
        self.interactive = self.stream.isatty()

    def note(self, text: str) -> None:
        """A line that is not a step (e.g. which sources are built)."""
        print(f"{self.prefix} {text}", file=self.stream, flush=True)

    @contextmanager
    def step(self, text: str) -> Iterator[Step]:
        self.index += 1
        head = f"{self.prefix} {self.index}/{self.total} {text}"
        step, start, done = Step(), time.monotonic(), threading.Event()
        spinner = None
        if self.interactive:
            spinner = threading.Thread(target=self._spin, args=(head, step, start, done), daemon=True)
            spinner.start()
        else:
            print(f"{head} ...", end="", file=self.stream, flush=True)
        outcome = "failed"
        try:
            yield step
            outcome = f"{time.monotonic() - start:.1f} s"
        finally:
            done.set()
            if spinner is not None:
                spinner.join()
                print(f"\r\033[K{head} ... {outcome}", file=self.stream, flush=True)
            else:
                print(f" {outcome}", file=self.stream, flush=True)

    def _spin(self, head: str, step: Step, start: float, done: threading.Event) -> None:
        turn = 0
        while not done.wait(0.2):
            turn += 1
            elapsed = time.monotonic() - start
            detail = f" {step.detail}" if step.detail else ""
            print(f"\r\033[K{head} {_SPINNER[turn % 4]} {elapsed:.0f} s{detail}", end="", file=self.stream,
                  flush=True)


def run_logged(command: Sequence[str], log_path: Path, cwd: Path | None = None,
               on_line: Callable[[str], None] | None = None) -> int:
    """Runs ``command`` with its stdout and stderr appended to ``log_path`` (after a line
    naming the command); ``on_line`` sees each line. Returns the exit status."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with log_path.open("a", encoding="utf-8") as log:
        log.write(f"$ {' '.join(str(part) for part in command)}\n")
        log.flush()
        with subprocess.Popen([str(part) for part in command], cwd=cwd, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, text=True,
                              errors="replace") as process:
            assert process.stdout is not None
            for line in process.stdout:
                log.write(line)
                if on_line is not None:
                    on_line(line)
        return process.returncode


#: What, after Ninja's "FAILED: <output>" line, says why: the linker's region overflow (names
#: the region and the bytes), a compiler's or Kiln's "error:" line, a CMake error.
_FAILED_REASONS = ("overflowed by", "error:", "CMake Error")


def first_error_line(log_path: Path, markers: Sequence[str] = ("error:", "CMake Error", "FAILED:")) -> str | None:
    """The first line of the log that reports an error (what the user needs first). For a
    Ninja ``FAILED:`` line, the line below it that says why, when there is one."""
    try:
        lines = log_path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    for index, line in enumerate(lines):
        if any(marker in line for marker in markers):
            if line.startswith("FAILED:"):
                index = _failure_reason(lines, index)
                line = lines[index]
            text = line.strip()
            # "CMake Error at file:line (message):" has its message on the next lines.
            following = [rest.strip() for rest in lines[index + 1:index + 4] if rest.strip()]
            if text.endswith(":") and following:
                text += " " + following[0]
            return text
    return None


def _failure_reason(lines: Sequence[str], failed: int) -> int:
    """The index of the line that explains Ninja's ``FAILED:`` line at ``failed`` (the lines
    up to Ninja's next status line), or ``failed`` itself."""
    end = next((i for i in range(failed + 1, len(lines)) if _NINJA_PROGRESS.match(lines[i])
                or lines[i].startswith(("FAILED:", "ninja: "))), len(lines))
    for reason in _FAILED_REASONS:
        for index in range(failed + 1, end):
            if reason in lines[index]:
                return index
    return failed


def last_error_line(text: str) -> str | None:
    """The last ``error: ...`` line of a Kiln command's output, without the prefix."""
    for line in reversed(text.splitlines()):
        if line.startswith("error: "):
            return line[len("error: "):].strip()
    return None
