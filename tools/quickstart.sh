#!/usr/bin/env bash
# The quick start: set up, compile MobileNetV2 to int8 for the Ethos-U55-128 NPU, run it on
# the host through Kiln's virtual Ethos-U (kiln-run), then build the Cortex-M55 firmware and
# run it on QEMU's Corstone-300 (kiln-deploy), checking the firmware's outputs against the
# host runtime's bit for bit. Every failure is this script's exit status.
set -euo pipefail

KILN_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$KILN_ROOT"
# shellcheck disable=SC1091
. tools/setup.sh
OUT="${KILN_OUT:-$KILN_ROOT/out}"
TARGET=ethos-u55-128
mkdir -p "$OUT"

step() { printf '\n\033[1m[kiln quickstart]\033[0m %s\n' "$*"; }

step "compile mv2: int8, delegated to $TARGET (TOSA + Vela), evaluated on the TOSA reference model"
kiln-aot --model_name mv2 --quantize --delegate --target "$TARGET" \
  --intermediates "$OUT/mv2_u55" --evaluate --output "$OUT/mv2_u55.pte"

step "run it on the host: Kiln's runtime, the NPU part on the virtual Ethos-U"
kiln-run "$OUT/mv2_u55.pte" --input "$OUT/mv2_u55/input_0.npy" --output-dir "$OUT/mv2_u55"
python - "$OUT/mv2_u55" <<'PY'
import sys, pathlib, numpy as np
d = pathlib.Path(sys.argv[1])
got, ref = np.load(d / "output_0.npy"), np.load(d / "reference_output_0.npy")
print(f"int8 program on the host vs fp32 PyTorch: top-1 class {got.argmax()} vs {ref.argmax()}, "
      f"max abs difference {float(np.abs(got - ref).max()):.3f} (logits up to {float(np.abs(ref).max()):.3f})")
PY

step "build the Cortex-M55 firmware and run it on QEMU (mps3-an547, Corstone-300)"
kiln-deploy --model_name mv2 --quantize --delegate --target "$TARGET" --output_dir "$OUT/deploy"
