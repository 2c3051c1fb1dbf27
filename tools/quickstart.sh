#!/usr/bin/env bash
# The quick start: set up, compile MobileNetV2 to int8 for the Ethos-U55-128 NPU (or the
# target in KILN_TARGET, e.g. ethos-u85-128), run it on the host through Kiln's virtual
# Ethos-U (kiln-run), then build the Cortex-M55 firmware and run it on QEMU's mps3-an547
# (kiln-deploy: the Corstone-300 profile, Corstone-320 for an Ethos-U85), checking the
# firmware's outputs against the host runtime's bit for bit. Every failure is this script's
# exit status.
set -euo pipefail

KILN_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$KILN_ROOT"
# shellcheck disable=SC1091
. tools/setup.sh
OUT="${KILN_OUT:-$KILN_ROOT/out}"
TARGET="${KILN_TARGET:-ethos-u55-128}"
NAME="mv2_${TARGET//-/_}"
mkdir -p "$OUT"

step() { printf '\n\033[1m[kiln quickstart]\033[0m %s\n' "$*"; }

step "compile mv2: int8, delegated to $TARGET (TOSA + Vela), evaluated on the TOSA reference model"
kiln-aot --model_name mv2 --quantize --delegate --target "$TARGET" \
  --intermediates "$OUT/$NAME" --evaluate --output "$OUT/$NAME.pte"

step "run it on the host: Kiln's runtime, the NPU part on the virtual Ethos-U"
kiln-run "$OUT/$NAME.pte" --input "$OUT/$NAME/input_0.npy" --output-dir "$OUT/$NAME"
python - "$OUT/$NAME" <<'PY'
import sys, pathlib, numpy as np
d = pathlib.Path(sys.argv[1])
got, ref = np.load(d / "output_0.npy"), np.load(d / "reference_output_0.npy")
print(f"int8 program on the host vs fp32 PyTorch: top-1 class {got.argmax()} vs {ref.argmax()}, "
      f"max abs difference {float(np.abs(got - ref).max()):.3f} (logits up to {float(np.abs(ref).max()):.3f})")
PY

step "build the Cortex-M55 firmware and run it on QEMU (mps3-an547)"
kiln-deploy --model_name mv2 --quantize --delegate --target "$TARGET" --output_dir "$OUT/deploy"
