"""How close a program's outputs must come to the reference, everywhere Kiln checks them.

* ``kiln-aot --evaluate`` runs the program on Kiln's runtime and compares each output with
  PyTorch's, as a share of the reference's largest magnitude: fp32 programs against eager
  PyTorch (``FLOAT_OUTPUT_LIMIT``), int8 programs against the quantized model
  (``INT8_OUTPUT_LIMIT``: a few output steps).
* Bundled programs (``kiln-deploy --bundleio``, ``kiln-run model.bpte``) pass when every
  element has ``|actual - expected| <= BUNDLE_ATOL + BUNDLE_RTOL * |expected|`` — the C++
  runners' defaults (tools/kiln_run, examples/arm/executor_runner), as ExecuTorch's.
"""

from __future__ import annotations

FLOAT_OUTPUT_LIMIT = 1e-4
INT8_OUTPUT_LIMIT = 1e-2
BUNDLE_RTOL = 1e-5
BUNDLE_ATOL = 1e-8
