"""The selective-build code generator (tools/codegen/gen_registration.py) and kiln-oplist:

* the op tables keep their schema and agree with the kernel sources and the registry;
* kiln-oplist reads a program's operators and dtypes (without torch);
* selections resolve against layered tables (most specific first, by dtype), and the
  ones no table satisfies fail naming the operator, the dtype and the program.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import kiln
from kiln.cli import oplist
from kiln.serialize import operator_list
from kiln.passes.kernel_availability import KERNEL_LIBRARIES
from kiln.runtime import Runtime

REPO = Path(__file__).resolve().parents[3]
CODEGEN = REPO / "tools" / "codegen"
PORTABLE_TABLE = REPO / "kernels" / "portable" / "op_table.yaml"
CORTEX_M_TABLE = REPO / "kernels" / "cortex_m" / "op_table.yaml"
sys.path.insert(0, str(CODEGEN))

import gen_registration  # noqa: E402
from op_tables import OpTableError, load_op_table  # noqa: E402
from selection import select_all, select_ops, select_programs, select_yaml  # noqa: E402

# The flatc-generated reader as installed with kiln (a source checkout has none of its own:
# the build generates it).
SCHEMA_MODULE = Path(operator_list.load_schema_module().__file__)


class _ConvReluPool(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 4, 3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.max_pool2d(torch.relu(self.conv(x)), 2)


@pytest.fixture(scope="module")
def program(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("oplist") / "conv_relu_pool.pte"
    kiln.export(_ConvReluPool().eval(), (torch.randn(1, 3, 8, 8),)).save(path)
    return path


def _generate(tmp_path: Path, *args: str) -> tuple[int, str, Path]:
    out = tmp_path / "gen"
    command = [sys.executable, str(CODEGEN / "gen_registration.py"), "--table", f"portable={PORTABLE_TABLE}",
               *args, "--output-dir", str(out)]
    result = subprocess.run(command, capture_output=True, text=True)
    return result.returncode, result.stderr, out


# --- the tables ---------------------------------------------------------------------


def test_every_library_table_loads_and_names_defined_kernels() -> None:
    for library in KERNEL_LIBRARIES:
        table = load_op_table(library, REPO / "kernels" / library / "op_table.yaml")
        assert table.entries, f"{library}: empty table"
        for entry in table.entries.values():
            namespace, _, function = entry.kernel.rpartition("::")
            definition = re.compile(rf"\bvoid\s+{function}\s*\(\s*KernelContext\s*&")
            assert definition.search(entry.source.read_text(encoding="utf-8")), (
                f"{entry.op}: {entry.source.name} does not define {function} ({namespace})"
            )


def test_table_schema_is_enforced(tmp_path: Path) -> None:
    (tmp_path / "op_x.cpp").write_text("// empty\n")
    bad_rows = {
        "missing key": "- op: aten::x.out\n  kernel: k::x\n  source: op_x.cpp\n",
        "unknown dtype": "- op: aten::x.out\n  kernel: k::x\n  source: op_x.cpp\n  dtypes: [Float32]\n",
        "no source": "- op: aten::x.out\n  kernel: k::x\n  source: op_y.cpp\n  dtypes: [Float]\n",
        "duplicate": "- {op: aten::x.out, kernel: k::x, source: op_x.cpp, dtypes: [Float]}\n" * 2,
        "bad op name": "- op: x\n  kernel: k::x\n  source: op_x.cpp\n  dtypes: [Float]\n",
    }
    for reason, text in bad_rows.items():
        (tmp_path / "t.yaml").write_text(text)
        with pytest.raises(OpTableError):
            load_op_table("t", tmp_path / "t.yaml")
            pytest.fail(reason)


def test_generated_all_registration_is_what_the_runtime_registers(tmp_path: Path) -> None:
    """register_portable_kernels() is generated: its table is op_table.yaml's, in order,
    and the runtime extension (built from it) registers exactly those operators, then the
    Cortex-M library's (kiln::register_cpu_kernels())."""
    status, errors, out = _generate(tmp_path, "--all", "--name", "portable")
    assert status == 0, errors
    source = (out / "register_portable_kernels.cpp").read_text()
    registration = re.findall(r'\{"([^"]+)", ::(\S+)\}', source)
    table = load_op_table("portable", PORTABLE_TABLE)
    assert registration == [(op, entry.kernel) for op, entry in table.entries.items()]
    cortex_m = load_op_table("cortex_m", CORTEX_M_TABLE)
    assert Runtime.get().operators == list(table.entries) + list(cortex_m.entries)


# --- kiln-oplist ------------------------------------------------------------------------


def test_oplist_reads_operators_and_dtypes(program: Path) -> None:
    uses = operator_list.program_operators(program)
    assert list(uses) == kiln.Program.load(program).operators
    assert uses["aten::convolution.out"].dtypes == {"Float"}
    # max_pool2d_with_indices writes its indices as int64 next to the float32 values.
    assert uses["aten::max_pool2d_with_indices.out"].dtypes == {"Float", "Long"}
    assert all(use.calls >= 1 for use in uses.values())


def test_oplist_cli_yaml_round_trips_into_a_selection(program: Path, tmp_path: Path, capsys) -> None:
    assert oplist.main([str(program), "--yaml"]) == 0
    selection_file = tmp_path / "ops.yaml"
    selection_file.write_text(capsys.readouterr().out)
    from_yaml = select_yaml(selection_file)
    from_program = select_programs([program], SCHEMA_MODULE)
    assert from_yaml.ops == from_program.ops
    assert oplist.main([str(program), "--dtypes"]) == 0
    assert "aten::max_pool2d_with_indices.out" in capsys.readouterr().out
    assert oplist.main([str(selection_file)]) == 1  # not a program: named error, no traceback


def test_codegen_reads_programs_without_torch(program: Path, tmp_path: Path) -> None:
    script = (
        "import runpy, sys\n"
        f"sys.argv = ['gen', '--table', 'portable={PORTABLE_TABLE}', '--program', '{program}', "
        f"'--schema-module', '{SCHEMA_MODULE}', '--name', 'x', '--list-sources']\n"
        "try:\n"
        f"    runpy.run_path('{CODEGEN / 'gen_registration.py'}', run_name='__main__')\n"
        "except SystemExit as e:\n"
        "    assert e.code == 0, e.code\n"
        "assert 'torch' not in sys.modules and 'kiln' not in sys.modules, 'codegen imported torch/kiln'\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert "op_convolution.cpp" in result.stdout and "op_add.cpp" not in result.stdout


# --- selections ---------------------------------------------------------------------------


def test_program_selection_compiles_only_its_kernels_and_dtypes(program: Path, tmp_path: Path) -> None:
    status, errors, out = _generate(tmp_path, "--program", str(program), "--schema-module", str(SCHEMA_MODULE),
                                    "--name", "conv", "--dtype-selective")
    assert status == 0, errors
    registered = re.findall(r'\{"([^"]+)", ', (out / "register_conv_kernels.cpp").read_text())
    assert registered == kiln.Program.load(program).operators
    wrappers = sorted(p.name for p in (out / "dtype_selective" / "portable").iterdir())
    assert wrappers == ["op_convolution.cpp", "op_max_pool2d_with_indices.cpp", "op_relu.cpp"]
    pool = (out / "dtype_selective" / "portable" / "op_max_pool2d_with_indices.cpp").read_text()
    assert "#define KILN_DTYPE_SELECTED_Float 1" in pool and "#define KILN_DTYPE_SELECTED_Long 1" in pool
    assert "#define KILN_DTYPE_SELECTED_Double 0" in pool
    relu = (out / "dtype_selective" / "portable" / "op_relu.cpp").read_text()
    assert "#define KILN_DTYPE_SELECTED_Long 0" in relu  # per kernel file, not the program's union
    header = (out / "register_conv_kernels.h").read_text()
    assert "Error register_conv_kernels();" in header and "uint32_t kiln_register_conv_kernels(void);" in header


def test_missing_operator_names_operator_and_list(tmp_path: Path) -> None:
    status, errors, _ = _generate(tmp_path, "--ops", "aten::add.out,aten::nonexistent.out", "--name", "x")
    assert status == 1
    assert "operator list (OPS) needs operator aten::nonexistent.out" in errors
    assert "no kernel library provides it" in errors and "Traceback" not in errors


def test_dtype_a_kernel_lacks_names_operator_dtype_and_selection(tmp_path: Path) -> None:
    selection_file = tmp_path / "sel.yaml"
    selection_file.write_text("- {op: aten::convolution.out, dtypes: [Float, Int]}\n- aten::relu.out\n")
    status, errors, _ = _generate(tmp_path, "--ops-yaml", str(selection_file), "--name", "x")
    assert status == 1
    assert f"selection file {selection_file} needs operator aten::convolution.out with dtype Int" in errors
    assert "portable: Double, Float" in errors
    # dtype-selective needs dtypes for every operator (relu has none in this file).
    selection_file.write_text("- {op: aten::convolution.out, dtypes: [Float]}\n- aten::relu.out\n")
    status, errors, _ = _generate(tmp_path, "--ops-yaml", str(selection_file), "--name", "x", "--dtype-selective")
    assert status == 1 and "no dtypes known for aten::relu.out" in errors


def test_layered_tables_pick_the_most_specific_kernel_that_supports_the_dtypes(tmp_path: Path) -> None:
    (tmp_path / "op_add.cpp").write_text("// an optimized add\n")
    (tmp_path / "op_table.yaml").write_text(
        "- {op: aten::add.out, kernel: kiln::optimized::add_out, source: op_add.cpp, dtypes: [Float]}\n"
    )
    tables = [load_op_table("optimized", tmp_path / "op_table.yaml"), load_op_table("portable", PORTABLE_TABLE)]

    def kernel_for(dtypes: list[str]) -> str:
        selection_file = tmp_path / "sel.yaml"
        selection_file.write_text(f"- {{op: aten::add.out, dtypes: [{', '.join(dtypes)}]}}\n")
        resolved = gen_registration.resolve("x", tables, select_yaml(selection_file))
        return resolved.kernels["aten::add.out"].kernel

    assert kernel_for(["Float"]) == "kiln::optimized::add_out"
    assert kernel_for(["Int"]) == "kiln::portable::add_out"  # optimized has no int add
    with pytest.raises(OpTableError, match="aten::add.out with dtype Half"):
        kernel_for(["Half"])
    # Without dtypes, the first table that has the op wins.
    assert gen_registration.resolve("x", tables, select_ops(["aten::add.out"])).kernels["aten::add.out"].library == "optimized"
    everything = gen_registration.resolve("x", tables, select_all(tables))
    assert len(everything.kernels) == len(tables[1].entries)
