"""Deploying a model to a Cortex-M: compile, build firmware, run it in QEMU, check it.

``kiln-deploy --model_name add`` (kiln/cli/deploy.py) chains the steps:

1. :mod:`kiln.deploy.prepare` -- ``kiln-aot`` compiles the model to a ``.pte``; the
   memory manifest (:mod:`kiln.memory.manifest`) and the host runtime's outputs for the
   example inputs are written next to it;
2. :mod:`kiln.deploy.firmware` -- CMake (preset ``arm-baremetal``) builds the runner
   firmware with the program, its inputs and the expected outputs embedded;
3. :mod:`kiln.deploy.qemu` -- the board's QEMU machine (``mps3-an547``, the Corstone-300,
   by default) runs it with a time bound; :mod:`kiln.deploy.firmware_log` reads the outputs
   back from the UART log and they are compared, bit for bit, with the host runtime's. Or,
   with ``--build-only`` or for a board no QEMU machine runs, :mod:`kiln.deploy.image`
   writes the image to flash and the note of how to run it.

The board is a board file (:mod:`kiln.boards`): its memory sizes set the manifest's budgets,
and the firmware build takes its linker script and definitions from it.

Import the step modules themselves (``kiln.deploy.prepare`` ...); this package imports
nothing, so that ``python -m kiln.deploy.<step>`` runs each without side effects.
"""
