"""``kiln-deploy``: compile, build the Cortex-M55 firmware, run it in QEMU, check it
against the host runtime (implemented in kiln.deploy.cli)."""

from kiln.deploy.cli import main

__all__ = ["main"]
