#!/usr/bin/env python3
"""Kernel code size of a selective build: all kernels vs a program's vs its dtypes.

    cmake -S tests/cpp/selective -B build/sel-size-arm -G Ninja -DCMAKE_BUILD_TYPE=MinSizeRel \
          -DCMAKE_TOOLCHAIN_FILE=tools/cmake/arm-none-eabi-gcc.cmake -DTARGET_CPU=cortex-m55 \
          -DKILN_SOURCE_DIR=$PWD -DPROGRAM=smallcnn.pte
    cmake --build build/sel-size-arm --target kiln_sel_sizes
    python tools/codegen/kernel_size.py build/sel-size-arm [--size arm-none-eabi-size]

Sizes are the `size` "text" totals (code + read-only data) of each registration
library's objects; the shared helpers (kiln_kernels_portable_util) are reported apart,
since a firmware links only the helpers its kernels call.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

#: Library (archive name without lib/.a) -> label, as tests/cpp/selective builds them.
VARIANTS = {
    "kiln_sel_all": "all portable kernels",
    "kiln_sel_program": "selective (program's ops)",
    "kiln_sel_dtypes": "selective + dtype-selective",
    "kiln_kernels_portable_util": "shared kernel helpers",
}


def archive_text_bytes(archive: Path, size_tool: str = "size") -> int:
    """Total "text" (code + read-only data) of the objects in a static library."""
    out = subprocess.run([size_tool, "-t", str(archive)], check=True, capture_output=True, text=True).stdout
    return int(out.strip().splitlines()[-1].split()[0])  # the (TOTALS) line


def kernel_sizes(build: Path, size_tool: str = "size") -> dict[str, int]:
    sizes = {}
    for name in VARIANTS:
        found = sorted(build.rglob(f"lib{name}.a"))
        if found:
            sizes[name] = archive_text_bytes(found[0], size_tool)
    return sizes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("build", type=Path, help="a build folder of tests/cpp/selective")
    parser.add_argument("--size", default="size", help="the size tool (arm-none-eabi-size for firmware)")
    args = parser.parse_args(argv)
    sizes = kernel_sizes(args.build, args.size)
    full = sizes.get("kiln_sel_all")
    for name, label in VARIANTS.items():
        if name in sizes:
            share = f"  {100 * sizes[name] / full:5.1f} %" if full and name != "kiln_kernels_portable_util" else ""
            print(f"{label:<30} {sizes[name]:>9,} B{share}")
    return 0 if sizes else 1


if __name__ == "__main__":
    sys.exit(main())
