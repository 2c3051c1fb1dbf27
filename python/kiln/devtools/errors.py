"""Errors of kiln.devtools: each names the file and what is wrong with it."""

from __future__ import annotations

from kiln import KilnError


class DevtoolsFileError(KilnError):
    """A devtools file (ETDump, bundled program, debug info) is truncated, foreign or corrupt."""


class EtdumpError(DevtoolsFileError):
    """An ETDump cannot be read: too short for its size prefix, not an "ED00" file, or corrupt."""


class BundledProgramError(DevtoolsFileError):
    """A bundled program cannot be read or written: not a "BP08" file, truncated, corrupt, or
    test cases that do not fit the program's method."""


class DebugInfoError(DevtoolsFileError):
    """A program's debug-info file (``<name>.debug.json``) is missing a field or is not JSON."""
