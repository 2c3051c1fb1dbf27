"""Firmware size and instruction counts on the Corstone-300 (Cortex-M55, -Os).

    cmake --preset arm-baremetal && cmake --build --preset arm-baremetal
    python benchmarks/firmware_size.py [--build build/arm-baremetal] [--elf NAME=path.elf ...]

For each firmware: code (.text with read-only data and the vector table), .data, .bss
(DTCM: .bss + newlib heap + stack), the embedded program, and the pools the memory
manifest sized (SRAM/DDR). For the runtime alone (examples/arm/runtime_only: the
executor with no kernel) also the bytes each Kiln library contributes, from the linker
map. Then every firmware with a program runs once in QEMU (-icount shift=0) and its
inference's instruction count is read from the log.

Then the kernel code of a selective build: the .text (code + read-only data)
of every portable kernel vs only a program's kernels vs those compiled for only the
program's dtypes, for smallcnn (fp32, CPU) and mv2 (int8, delegated to the Ethos-U55-128:
only its CPU ops remain). Each program's three registration libraries are built for the
Cortex-M55 (-Os) with tests/cpp/selective and measured with arm-none-eabi-size
(tools/codegen/kernel_size.py). Programs are made with kiln-aot into --work-dir unless
given (--program smallcnn=X.pte --program mv2=Y.pte); --no-kernels skips the table.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))

sys.path.insert(0, str(ROOT / "tools" / "codegen"))

from kernel_size import kernel_sizes  # noqa: E402
from kiln.deploy.firmware_log import parse_firmware_log  # noqa: E402
from kiln.deploy.qemu import run_firmware  # noqa: E402

SIZE_TOOL = "arm-none-eabi-size"

# ELFs of the arm-baremetal build, relative to its folder.
DEFAULT_FIRMWARES = {
    "runtime only (no kernels)": "examples/arm/kiln_runtime_only.elf",
    "add, CPU (portable kernels)": "tests/firmware/firmware_add.elf",
    "smallcnn fp32, CPU": "tests/firmware/firmware_smallcnn.elf",
    "smallcnn fp32, CPU, selective+dtypes": "tests/firmware/firmware_smallcnn_selective.elf",
    "smallcnn int8, Ethos-U55 delegate": "tests/firmware/firmware_smallcnn_u55.elf",
}


@dataclass
class Sizes:
    code: int
    data: int
    bss: int
    program: int
    sram_pools: int
    ddr_pools: int


def section_sizes(elf: Path) -> Sizes:
    out = subprocess.run(["arm-none-eabi-size", "-A", str(elf)], check=True, capture_output=True,
                         text=True).stdout
    sizes: dict[str, int] = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1].isdigit():
            sizes[parts[0]] = int(parts[1])
    return Sizes(
        code=sizes.get(".vectors", 0) + sizes.get(".text", 0) + sizes.get(".ARM.exidx", 0),
        data=sizes.get(".data", 0),
        bss=sizes.get(".bss", 0) + sizes.get(".heap", 0) + sizes.get(".stack", 0),
        program=sizes.get(".kiln_program", 0),
        sram_pools=sizes.get(".kiln_sram", 0),
        ddr_pools=sizes.get(".kiln_ddr", 0),
    )


_MAP_ENTRY = re.compile(r"^\s*(0x[0-9a-f]+)\s+(0x[0-9a-f]+)\s+(\S+)$")
_MAP_NAME = re.compile(r"^ (\.\S+)(?:\s+(0x[0-9a-f]+)\s+(0x[0-9a-f]+)\s+(\S+))?$")


def library_contributions(map_file: Path) -> dict[str, dict[str, int]]:
    """{archive or object group: {"text": bytes, "rodata": bytes, "data": bytes}} from a GNU
    ld map file. Input sections are counted before the linker merges equal strings, so
    "rodata" is a slight over-estimate."""
    totals: dict[str, dict[str, int]] = defaultdict(lambda: {"text": 0, "rodata": 0, "data": 0})
    in_memory_map = False
    pending: str | None = None
    for line in map_file.read_text().splitlines():
        if line.startswith("Linker script and memory map"):
            in_memory_map = True
            continue
        if not in_memory_map or line.startswith(" *"):
            continue
        name = match = None
        if m := _MAP_NAME.match(line):
            name = m.group(1)
            if m.group(2) is None:
                pending = name
                continue
            address, size, owner = m.group(2), m.group(3), m.group(4)
        elif pending and (m := _MAP_ENTRY.match(line)):
            name, (address, size, owner) = pending, m.groups()
        else:
            pending = None
            continue
        pending = None
        if int(address, 16) == 0 and not name.startswith(".vectors"):
            continue  # discarded or debug
        kind = ("text" if name.startswith((".text", ".vectors", ".ARM.exidx")) else
                "rodata" if name.startswith(".rodata") else
                "data" if name.startswith((".data", ".bss")) else None)
        if kind is None:
            continue
        group = _group_of(owner)
        totals[group][kind] += int(size, 16)
    return dict(totals)


def linked_kernel_code(elf: Path) -> int:
    """Bytes of kernel code + read-only data the linker kept in `elf` (0 without a map)."""
    map_file = elf.with_name(elf.name + ".map")
    if not map_file.is_file():
        return 0
    kernels = library_contributions(map_file).get("portable kernels", {"text": 0, "rodata": 0})
    return kernels["text"] + kernels["rodata"]


def _group_of(owner: str) -> str:
    if "libkiln_runtime.a" in owner:
        return "kiln runtime (libkiln_runtime.a)"
    if "libkiln_kernels_portable.a" in owner or "libkiln_kernels_portable_util.a" in owner:
        return "portable kernels"
    if "_kernels.a" in owner or "libkiln_kernels_selected.a" in owner:
        return "portable kernels"  # a selective build's (kiln_add_firmware SELECTIVE)
    if "kiln_arm_platform" in owner:
        return "board support (examples/arm/platform)"
    if "kiln_arm_runner" in owner or "memory_pools" in owner:
        return "runner"
    if "vnpu" in owner or "ethos_u" in owner:
        return "Ethos-U delegate + virtual NPU"
    if "libc" in owner or "libm" in owner or "libg" in owner or "libnosys" in owner:
        return "newlib (libc, libm)"
    if "libgcc" in owner:
        return "libgcc"
    return "other"


# Programs of the kernel code table: label -> kiln-aot arguments.
KERNEL_PROGRAMS = {
    "smallcnn": ["--model_name", "smallcnn"],
    "mv2": ["--model_name", "mv2", "--quantize", "--delegate", "--target", "ethos-u55-128"],
}
KERNEL_PROGRAM_LABELS = {
    "smallcnn": "smallcnn fp32, CPU",
    "mv2": "mv2 int8, Ethos-U55-128 delegate",
}


@dataclass
class KernelCode:
    """.text (code + read-only data) bytes of the portable kernels in a Cortex-M55 build."""

    operators: int
    all_ops: int
    selective: int
    dtype_selective: int
    helpers: int


def program_for(label: str, given: dict[str, Path], work: Path) -> Path:
    """The program of `label`: the one given on the command line, else one kiln-aot made
    into `work` (kept, so that a second run reuses it)."""
    if label in given:
        return given[label]
    program = work / f"{label}.pte"
    if not program.is_file():
        work.mkdir(parents=True, exist_ok=True)
        print(f"kiln-aot {' '.join(KERNEL_PROGRAMS[label])} -> {program} ...", flush=True)
        subprocess.run([sys.executable, "-m", "kiln.cli.aot", *KERNEL_PROGRAMS[label], "--output", str(program)],
                       check=True, cwd=work)
    return program


def kernel_code(program: Path, build: Path, jobs: int) -> KernelCode:
    """Builds tests/cpp/selective for `program` (all / the program's / its dtypes' kernels)
    with the arm-none-eabi toolchain and measures the three libraries."""
    configure = [
        "cmake", "-S", str(ROOT / "tests" / "cpp" / "selective"), "-B", str(build), "-G", "Ninja",
        "-DCMAKE_BUILD_TYPE=MinSizeRel", f"-DCMAKE_TOOLCHAIN_FILE={ROOT / 'tools/cmake/arm-none-eabi-gcc.cmake'}",
        "-DTARGET_CPU=cortex-m55", f"-DKILN_SOURCE_DIR={ROOT}", f"-DPROGRAM={program.resolve()}",
        f"-DPython3_EXECUTABLE={sys.executable}",
    ]
    for command in (configure, ["cmake", "--build", str(build), "--target", "kiln_sel_sizes", "-j", str(jobs)]):
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(command)} failed:\n{done.stdout[-3000:]}{done.stderr[-3000:]}")
    sizes = kernel_sizes(build, SIZE_TOOL)
    registration = next(build.rglob("kiln_sel_program_registration/register_sel_program_kernels.cpp"))
    operators = registration.read_text().count('{"')
    return KernelCode(operators=operators, all_ops=sizes["kiln_sel_all"], selective=sizes["kiln_sel_program"],
                      dtype_selective=sizes["kiln_sel_dtypes"], helpers=sizes["kiln_kernels_portable_util"])


def print_kernel_code_table(codes: dict[str, KernelCode]) -> None:
    print("\nKernel code of a selective build (portable kernels, .text incl. read-only data, bytes; "
          "Cortex-M55, -Os):")
    header = (f"{'program':<34} {'ops':>4} {'all ops':>9} {'selective':>10} {'share':>6} "
              f"{'+dtype-sel.':>11} {'share':>6} {'helpers':>8}")
    print(header)
    print("-" * len(header))
    for label, c in codes.items():
        print(f"{KERNEL_PROGRAM_LABELS.get(label, label):<34} {c.operators:>4} {c.all_ops:>9,} {c.selective:>10,} "
              f"{100 * c.selective / c.all_ops:>5.1f}% {c.dtype_selective:>11,} "
              f"{100 * c.dtype_selective / c.all_ops:>5.1f}% {c.helpers:>8,}")
    print("(ops: operators the program calls on the CPU; shares are of 'all ops'; helpers: the shared "
          "kernel helpers (kiln_kernels_portable_util), counted apart: the linker keeps only those "
          "the kernels call)")
    if "mv2" in codes:
        c = codes["mv2"]
        kernels = c.dtype_selective / c.all_ops
        with_helpers = (c.dtype_selective + c.helpers) / (c.all_ops + c.helpers)
        verdict = "meets" if kernels <= 0.10 else "misses"
        print(f"  -> the mv2-delegated firmware carries {100 * kernels:.1f} % of the all-ops kernel code "
              f"({verdict} the <= 10 % goal); {100 * with_helpers:.1f} % if every shared helper were linked")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--build", type=Path, default=ROOT / "build" / "arm-baremetal")
    parser.add_argument("--elf", action="append", default=[], metavar="NAME=PATH",
                        help="another firmware to measure (e.g. the mv2 one kiln-deploy built)")
    parser.add_argument("--no-run", action="store_true", help="sizes only, no QEMU runs")
    parser.add_argument("--no-kernels", action="store_true", help="skip the selective-build kernel code table")
    parser.add_argument("--program", action="append", default=[], metavar="LABEL=PATH",
                        help=f"reuse a program for the kernel table ({', '.join(KERNEL_PROGRAMS)}); "
                             "else kiln-aot makes it (mv2 delegated: 1-2 minutes)")
    parser.add_argument("--work-dir", type=Path, default=ROOT / "build" / "firmware-size",
                        help="where made programs and the kernel builds go")
    parser.add_argument("-j", "--jobs", type=int, default=2, help="build jobs for the kernel builds")
    args = parser.parse_args(argv)

    firmwares = {name: args.build / rel for name, rel in DEFAULT_FIRMWARES.items()}
    for item in args.elf:
        name, _, path = item.partition("=")
        firmwares[name] = Path(path)

    print("Firmware sizes (bytes; Cortex-M55, -Os, full newlib):")
    header = (f"{'firmware':<36} {'code':>9} {'kernels':>8} {'.data':>7} {'.bss':>7} {'embedded':>9} "
              f"{'SRAM pools':>11} {'DDR pools':>10} {'instructions':>14}")
    print(header)
    print("-" * len(header))
    for name, elf in firmwares.items():
        if not elf.is_file():
            print(f"{name:<36} (not built: {elf})")
            continue
        s = section_sizes(elf)
        count = ""
        if not args.no_run and "runtime only" not in name:
            result = run_firmware(elf, timeout=900)
            log = parse_firmware_log(result.output)
            count = (f"{log.inference_instructions:,}" if result.exit_code == 0 and log.inference_instructions
                     else f"exit {result.exit_code}")
        print(f"{name:<36} {s.code:>9,} {linked_kernel_code(elf):>8,} {s.data:>7,} {s.bss:>7,} {s.program:>9,} "
              f"{s.sram_pools:>11,} {s.ddr_pools:>10,} {count:>14}")
    print("(code: .text + .rodata + vectors; kernels: the part of it that is portable kernels and their "
          "helpers, from the linker map;\n .bss includes the 64 KiB stack and 16 KiB newlib heap; "
          "embedded: the .pte, inputs and expected outputs;\n instructions: one inference, "
          "-icount shift=0, from the system counter at 31.25 instructions per tick)")

    runtime_map = args.build / "examples/arm/kiln_runtime_only.elf.map"
    if runtime_map.is_file():
        print("\nThe runtime alone (kiln_runtime_only.elf), code and data by library:")
        contributions = library_contributions(runtime_map)
        print(f"  {'':<40} {'.text':>8} {'.rodata':>8} {'data+bss':>9}")
        for group, sizes in sorted(contributions.items(), key=lambda kv: -kv[1]["text"]):
            print(f"  {group:<40} {sizes['text']:>8,} {sizes['rodata']:>8,} {sizes['data']:>9,}")
        runtime = contributions.get("kiln runtime (libkiln_runtime.a)", {"text": 0, "rodata": 0})
        verdict = "meets" if runtime["text"] <= 20 * 1024 else "misses"
        print(f"  -> the Kiln runtime's .text is {runtime['text']:,} bytes ({verdict} the 20 kB = 20,480 "
              f"bytes goal); its read-only data (log messages, tables) {runtime['rodata']:,} bytes more")

    if not args.no_kernels:
        given = {}
        for item in args.program:
            label, _, path = item.partition("=")
            if label not in KERNEL_PROGRAMS or not Path(path).is_file():
                parser.error(f"--program {item}: expected one of {', '.join(KERNEL_PROGRAMS)}=<existing .pte>")
            given[label] = Path(path)
        codes = {}
        for label in KERNEL_PROGRAMS:
            program = program_for(label, given, args.work_dir / "programs")
            print(f"building the kernel libraries for {program} ...", flush=True)
            codes[label] = kernel_code(program, args.work_dir / f"kernels-{label}", args.jobs)
        print_kernel_code_table(codes)
    return 0


if __name__ == "__main__":
    sys.exit(main())
