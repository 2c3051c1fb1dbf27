"""How Kiln's console scripts fail: one line on stderr and a non-zero exit status.

* A bad command line: ``<prog>: error: <what> (see <prog> --help)``, exit 2.
* A user error -- a :class:`kiln.KilnError` (bad model, bad flag value, a program the
  runtime refuses) or an error the command marks as the user's: ``error: <message>``,
  exit 2 (or the error's own ``exit_code``).
* Anything else is Kiln's fault: ``error: internal error: <Type>: <message> (run with
  --debug for the traceback)``, exit 1.

``--debug`` prints the full traceback before the line.
"""

from __future__ import annotations

import argparse
import sys
import traceback
from typing import NoReturn, TextIO

EXIT_FAILURE = 1
EXIT_USER_ERROR = 2
EXIT_INTERRUPTED = 130


class OneLineArgumentParser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are one line (no usage dump)."""

    def error(self, message: str) -> NoReturn:
        hint = f" (see {self.prog} --help)" if self.add_help else ""
        self.exit(EXIT_USER_ERROR, f"{self.prog}: error: {message}{hint}\n")


def one_line(text: str) -> str:
    """The message on one line: its lines joined with "; "."""
    return "; ".join(line.strip() for line in str(text).splitlines() if line.strip())


def is_user_error(error: BaseException) -> bool:
    from kiln import KilnError

    return isinstance(error, KilnError)


def report_failure(error: BaseException, debug: bool, stream: TextIO | None = None) -> int:
    """Prints ``error`` as one line (after its traceback with ``debug``); returns the exit status."""
    stream = stream if stream is not None else sys.stderr
    if debug:
        traceback.print_exception(type(error), error, error.__traceback__, file=stream)
    if isinstance(error, KeyboardInterrupt):
        print("error: interrupted", file=stream)
        return EXIT_INTERRUPTED
    if is_user_error(error):
        print(f"error: {one_line(str(error))}", file=stream)
        return int(getattr(error, "exit_code", EXIT_USER_ERROR))
    message = one_line(str(error))
    hint = "" if debug else " (run with --debug for the traceback)"
    print(f"error: internal error: {type(error).__name__}{': ' + message if message else ''}{hint}", file=stream)
    return EXIT_FAILURE
