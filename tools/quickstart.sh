#!/usr/bin/env bash
# The quick start: set up, compile MobileNetV2 to a .pte, run it on Kiln's C++ runtime
# (Python API and the kiln-run host runner) and compare with eager PyTorch.
set -euo pipefail

KILN_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$KILN_ROOT"
# shellcheck disable=SC1091
. tools/setup.sh
OUT="${KILN_OUT:-$KILN_ROOT/out}"
mkdir -p "$OUT"

kiln-aot --model_name mv2 --output "$OUT/mv2.pte" --intermediates "$OUT/mv2" --evaluate
kiln-run "$OUT/mv2.pte" --input "$OUT/mv2/input_0.npy" --output-dir "$OUT/mv2" --iterations 5
python - "$OUT/mv2" <<'PY'
import sys, pathlib, numpy as np
d = pathlib.Path(sys.argv[1])
got, ref = np.load(d / "output_0.npy"), np.load(d / "reference_output_0.npy")
err = float(np.abs(got - ref).max() / np.abs(ref).max())
print(f"kiln-run vs eager PyTorch: max abs error {err:.2e} of the output's max magnitude, "
      f"top-1 {'agrees' if got.argmax() == ref.argmax() else 'DIFFERS'}")
sys.exit(0 if err <= 1e-4 else 1)
PY
