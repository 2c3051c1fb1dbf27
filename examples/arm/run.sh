#!/usr/bin/env bash
# Compile a model, build the Cortex-M55 firmware, run it in QEMU (Corstone-300) and check
# its outputs against the host runtime's, bit for bit: kiln-deploy, for people who like
# a script. Every failure is this script's exit status.
#
#   examples/arm/run.sh --model_name smallcnn
#   examples/arm/run.sh --model_name mv2 --quantize --delegate --target ethos-u55-128
#
# Needs the Kiln venv (tools/setup.sh) and the Arm tools:
#   apt-get install gcc-arm-none-eabi libnewlib-arm-none-eabi libstdc++-arm-none-eabi-dev qemu-system-arm
set -euo pipefail

KILN_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
PYTHON="${KILN_PYTHON:-}"
if [ -z "$PYTHON" ]; then
  if [ -n "${VIRTUAL_ENV:-}" ]; then PYTHON="$VIRTUAL_ENV/bin/python"; else PYTHON="$KILN_ROOT/.venv/bin/python"; fi
fi
if [ ! -x "$PYTHON" ]; then
  echo "error: no Kiln Python at $PYTHON; run tools/setup.sh or set KILN_PYTHON" >&2
  exit 2
fi
exec "$PYTHON" -m kiln.cli.deploy --source-dir "$KILN_ROOT" "$@"
