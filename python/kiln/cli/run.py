"""``kiln-run``: the installed host runner (``kiln/bin/kiln_executor_runner``).

The console script replaces itself with the C++ runner, passing every argument on, so
that timings, exit codes and output are the runner's own (see
tools/kiln_run/kiln_run.cpp: 0 ok, 1 runtime or file error, 2 bad command line).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

RUNNER_NAME = "kiln_executor_runner"

#: Exit code when the runner binary is not installed (the runner itself uses 0-2).
EXIT_RUNNER_MISSING = 3


def runner_path() -> Path:
    """Where the wheel installs the runner: kiln/bin/ inside the package. The package may
    span several directories (an editable install adds the source tree), so each is
    searched; the first directory is named when the runner is nowhere."""
    import kiln

    directories = [Path(entry) for entry in kiln.__path__]
    for directory in directories:
        candidate = directory / "bin" / RUNNER_NAME
        if candidate.is_file():
            return candidate
    return directories[0] / "bin" / RUNNER_NAME


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    runner = runner_path()
    if not os.access(runner, os.X_OK):
        print(
            f"kiln-run: the host runner {runner} is not installed. It is built with the "
            "package (KILN_BUILD_HOST_RUNNER=ON): reinstall with "
            "`pip install --no-build-isolation <kiln source dir>`.",
            file=sys.stderr,
        )
        return EXIT_RUNNER_MISSING
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(runner, [str(runner), *args])
    return 0  # not reached: execv replaces this process


if __name__ == "__main__":
    sys.exit(main())
