"""The exception every failure of Kiln's runtime is reported with."""

from __future__ import annotations

from kiln import KilnError


class KilnRuntimeError(KilnError, RuntimeError):
    """A ``kiln::Error`` from the C++ runtime (or a check the Python wrapper makes first).

    The message starts with the error's name, e.g.
    ``InputShapeMismatch (0x50): input 0 has sizes [1, 4]; ... [while setting input 0 ...]``,
    and quotes the runtime's last log message for the failing call.
    """

    def __init__(
        self, error_name: str, error_code: int, log: list[str] | None = None, context: str = ""
    ) -> None:
        self.error_name = error_name
        self.error_code = int(error_code)
        #: Every error message the runtime logged during the failing call, oldest first.
        self.log: list[str] = list(log or [])
        #: What the runtime was asked to do, e.g. "loading method 'forward'".
        self.context = context
        reason = self.log[-1] if self.log else "no log message"
        message = f"{error_name} (0x{self.error_code:02x}): {reason}"
        if context:
            message += f" [while {context}]"
        # Earlier messages often carry the details ("operator X is not registered").
        for line in self.log[:-1]:
            message += f"\n  runtime: {line}"
        super().__init__(message)

    def __reduce__(self) -> tuple[type, tuple[str, int, list[str], str]]:
        # Keeps the attributes when the error crosses a process boundary (pickle).
        return (type(self), (self.error_name, self.error_code, self.log, self.context))
