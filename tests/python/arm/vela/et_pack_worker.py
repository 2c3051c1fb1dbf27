"""Runs ExecuTorch's own Ethos-U payload packer on a Vela .npz (run with the ExecuTorch venv).

Usage: python et_pack_worker.py VELA_NPZ OUTPUT_BLOB

ExecuTorch's ``vela_compile`` runs Vela and packs its raw output; here its Vela call is
replaced by copying the given .npz to where Vela would have written it, so the bytes
come from ExecuTorch's packing code alone (the reference for Kiln's payload.pack).
"""

from __future__ import annotations

import shutil
import sys
import types
from pathlib import Path


def main() -> None:
    npz, output = Path(sys.argv[1]), Path(sys.argv[2])
    from executorch.backends.arm import arm_vela

    def fake_vela_main(args: list[str]) -> None:
        out_dir = Path(next(a for a in args if a.startswith("--output-dir=")).split("=", 1)[1])
        out_dir.mkdir(parents=True, exist_ok=True)
        shutil.copy(npz, out_dir / "out_vela.npz")

    arm_vela.vela = types.SimpleNamespace(main=fake_vela_main)
    arm_vela.has_vela = True
    result = arm_vela.vela_compile(b"unused", ["--accelerator-config=ethos-u55-128"])
    output.write_bytes(result.processed_bytes)


if __name__ == "__main__":
    main()
