"""``python -m kiln.aot_compiler``: the same as the ``kiln-aot`` command."""

import sys

from kiln.cli.aot import main

if __name__ == "__main__":
    sys.exit(main())
