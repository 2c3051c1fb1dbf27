#!/usr/bin/env bash
# Compile a model, build the Cortex-M55 firmware, run it in QEMU (the board's machine:
# Corstone-300's mps3-an547 by default) and check its outputs against the host runtime's,
# bit for bit: kiln-deploy, for people who like a script. Runs from any folder: relative
# paths are the caller's; the firmware is built from this checkout's sources (kiln-deploy
# --source-dir, which a --source-dir given here overrides). Every failure is this script's
# exit status.
#
#   path/to/kiln/examples/arm/run.sh --model_name smallcnn
#   path/to/kiln/examples/arm/run.sh --model_name mv2 --quantize --delegate --target ethos-u55-128
#   path/to/kiln/examples/arm/run.sh --model_name smallcnn --board my_board.json --build-only
#   path/to/kiln/examples/arm/run.sh --model_name=mv2 --target=ethos-u55-128 --output=out \
#       --aot_arm_compiler_flags="--delegate --quantize --intermediates out/aot --evaluate"
#
# The last form is how ExecuTorch's examples/arm/run.sh is called. Flags: kiln-deploy --help.
# Python: $KILN_PYTHON, else this checkout's .venv (tools/setup.sh), else the active venv.
# Needs the Arm tools:
#   apt-get install gcc-arm-none-eabi libnewlib-arm-none-eabi libstdc++-arm-none-eabi-dev qemu-system-arm
set -euo pipefail

KILN_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
PYTHON="${KILN_PYTHON:-}"
if [ -z "$PYTHON" ]; then
  # This checkout's venv first: its kiln package matches the sources built here.
  if [ -x "$KILN_ROOT/.venv/bin/python" ]; then PYTHON="$KILN_ROOT/.venv/bin/python"
  elif [ -n "${VIRTUAL_ENV:-}" ]; then PYTHON="$VIRTUAL_ENV/bin/python"
  else PYTHON="$KILN_ROOT/.venv/bin/python"; fi
fi
if [ ! -x "$PYTHON" ]; then
  echo "error: no Kiln Python at $PYTHON; run $KILN_ROOT/tools/setup.sh or set KILN_PYTHON" >&2
  exit 2
fi
exec "$PYTHON" -m kiln.cli.deploy --source-dir "$KILN_ROOT" "$@"
