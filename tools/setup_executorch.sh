#!/usr/bin/env bash
# Creates the ExecuTorch 1.5.1 environment used by the interop tests and benchmarks
# (kept apart from Kiln's venv: ExecuTorch pulls many packages). Prints its python path.
# Environment: KILN_EXECUTORCH_VENV (default <repo>/.venv-executorch).
set -euo pipefail

KILN_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ET_VENV="${KILN_EXECUTORCH_VENV:-$KILN_ROOT/.venv-executorch}"

if ! "$ET_VENV/bin/python" -c "import executorch.runtime" >/dev/null 2>&1; then
  printf '\033[1m[kiln setup]\033[0m installing ExecuTorch 1.5.1 into %s\n' "$ET_VENV" >&2
  python3 -m venv "$ET_VENV"
  "$ET_VENV/bin/python" -m pip install -q --upgrade pip >&2
  # torch first: executorch has no torch pin and would otherwise pull a CUDA build.
  "$ET_VENV/bin/python" -m pip install -q "torch==2.13.0" >&2
  "$ET_VENV/bin/python" -m pip install -q "executorch==1.5.1" >&2
fi
# ExecuTorch's Arm (Ethos-U) flow, used to produce its delegated programs for the interop
# tests and the compile-time benchmark: the versions it was released with, installed with
# their dependencies so that pip reports no conflict: tosa-tools 2026.5.0 pins flatbuffers
# 25.2.10 and ml_dtypes 0.5.1 and wants numpy < 2.2, ExecuTorch numpy >= 2 (pandas 2.0.2).
if ! "$ET_VENV/bin/python" - >/dev/null 2>&1 <<'PY'
import importlib.metadata as m
import tosa_serializer, ethosu.vela  # noqa: F401
assert m.version("tosa-tools") == "2026.5.0" and m.version("ethos-u-vela") == "5.1.0"
assert m.version("flatbuffers") == "25.2.10" and m.version("ml_dtypes") == "0.5.1"
PY
then
  "$ET_VENV/bin/python" -m pip install -q "ethos-u-vela==5.1.0" "tosa-tools==2026.5.0" "ml_dtypes==0.5.1" \
    "numpy>=2.0.2,<2.2" "torch==2.13.0" >&2
fi
echo "$ET_VENV/bin/python"
