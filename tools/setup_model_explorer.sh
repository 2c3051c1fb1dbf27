#!/usr/bin/env bash
# Creates the Model Explorer environment used by the test that opens Kiln's .pte files with
# ExecuTorch's PTE adapter (pte-adapter-model-explorer, the adapter behind
# executorch-extension-model-explorer). Kept apart from Kiln's venv: the adapter needs
# flatbuffers > 25.9, and tosa-tools, which Kiln's compiler needs, pins flatbuffers 25.2.10,
# so the two cannot share one environment without a dependency conflict. Prints its python.
# Environment: KILN_MODEL_EXPLORER_VENV (default <repo>/.venv-model-explorer).
set -euo pipefail

KILN_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ME_VENV="${KILN_MODEL_EXPLORER_VENV:-$KILN_ROOT/.venv-model-explorer}"

if ! "$ME_VENV/bin/python" -c "import pte_adapter_model_explorer.main" >/dev/null 2>&1; then
  printf '\033[1m[kiln setup]\033[0m installing Model Explorer and its PTE adapter into %s\n' "$ME_VENV" >&2
  python3 -m venv "$ME_VENV"
  "$ME_VENV/bin/python" -m pip install -q --upgrade pip >&2
  "$ME_VENV/bin/python" -m pip install -q "pte-adapter-model-explorer==0.2.0" >&2
fi
echo "$ME_VENV/bin/python"
