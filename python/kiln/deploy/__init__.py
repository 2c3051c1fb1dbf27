"""Deploying a model to a Cortex-M: compile, build firmware, run it in QEMU, check it.

``kiln-deploy --model_name add`` (kiln/cli/deploy.py) chains the steps:

1. :mod:`kiln.deploy.prepare` -- ``kiln-aot`` compiles the model to a ``.pte``; the
   memory manifest (:mod:`kiln.memory.manifest`) and the host runtime's outputs for the
   example inputs are written next to it;
2. :mod:`kiln.deploy.firmware` -- CMake (preset ``arm-baremetal``) builds the runner
   firmware with the program, its inputs and the expected outputs embedded;
3. :mod:`kiln.deploy.qemu` -- QEMU's ``mps3-an547`` (Corstone-300) runs it with a time
   bound; :mod:`kiln.deploy.firmware_log` reads the outputs back from the UART log and
   they are compared, bit for bit, with the host runtime's.

Import the step modules themselves (``kiln.deploy.prepare`` ...); this package imports
nothing, so that ``python -m kiln.deploy.<step>`` runs each without side effects.
"""
