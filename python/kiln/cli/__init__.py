"""Kiln's console scripts, one module each (``kiln-run`` -> :mod:`kiln.cli.run`)."""
