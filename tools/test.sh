#!/usr/bin/env bash
# Runs every Kiln test: C++ (GoogleTest, consumer project) in the release build and
# under AddressSanitizer + UndefinedBehaviorSanitizer, the Cortex-M55 firmware tests in
# QEMU (arm-baremetal preset), the libFuzzer targets for KILN_FUZZ_SECONDS each
# (fuzz preset; default 60; the XNNPACK payload's for half of it), then the Python tests
# (AOT, kernels against eager PyTorch, runtime API, Ethos-U flow and virtual NPU,
# ExecuTorch 1.5.1 interop and XNNPACK programs).
# Extra arguments go to pytest (e.g. tools/test.sh -k softmax); KILN_TEST_WORKERS=1 runs
# the Python tests in one process.
set -euo pipefail

KILN_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$KILN_ROOT"
# shellcheck disable=SC1091
. tools/setup.sh
KILN_EXECUTORCH_PYTHON="$(bash tools/setup_executorch.sh)"
export KILN_EXECUTORCH_PYTHON
KILN_MODEL_EXPLORER_PYTHON="$(bash tools/setup_model_explorer.sh)"
export KILN_MODEL_EXPLORER_PYTHON
export CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}"

# arm-baremetal builds its test programs with kiln-aot, so it needs the venv (active here).
# The fuzz preset writes its seeds with kiln-aot's Python too.
for preset in host host-debug arm-baremetal fuzz; do
  printf '\033[1m[kiln test]\033[0m C++ tests, preset %s\n' "$preset"
  cmake --preset "$preset" -DKILN_FUZZ_SECONDS="${KILN_FUZZ_SECONDS:-60}" >/dev/null
  cmake --build --preset "$preset"
  # One test process per core (the fuzzers too: each is a single process).
  ctest --preset "$preset" -j "$(nproc)"
  # The Cortex-M kernel cases (ExecuTorch's reference outputs) are made once, by host.
  if [ "$preset" = host ]; then export KILN_CORTEX_M_CASES_PREBUILT="$KILN_ROOT/build/host/cortex_m_cases/cases.bin"; fi
done
# The Cortex-M kernels' DSP flavour on a Cortex-M4 and a Cortex-M33 in QEMU: the kernel
# case firmware only (about a minute for both).
for preset in arm-baremetal-m4 arm-baremetal-m33; do
  printf '\033[1m[kiln test]\033[0m C++ tests, preset %s\n' "$preset"
  cmake --preset "$preset" >/dev/null
  cmake --build --preset "$preset"
  ctest --preset "$preset" -j "$(nproc)"
done

# In parallel (pytest-xdist), one worker per core unless KILN_TEST_WORKERS says otherwise;
# loadgroup keeps each test file on one worker (tests/python/conftest.py groups them).
printf '\033[1m[kiln test]\033[0m Python tests\n'
python -m pytest -n "${KILN_TEST_WORKERS:-$(nproc)}" --dist loadgroup --durations=25 tests/python "$@"
