"""Every failure of kiln-aot, kiln-deploy (and examples/arm/run.sh) and kiln-oplist is one
line on stderr with a non-zero exit status; --debug adds the traceback. Run from a folder
outside the checkout, as users do."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import kiln.cli.aot
from kiln.cli import deploy as kiln_deploy
from kiln.cli import oplist as kiln_oplist

CHECKOUT = Path(__file__).resolve().parents[3]
RUN_SH = CHECKOUT / "examples" / "arm" / "run.sh"

SYNTAX_ERROR = "import torch\nclass Net(torch.nn.Module)\n    pass\n"
RAISES_ON_IMPORT = "import torch\nraise RuntimeError('no weights here')\n"
RAISES_IN_INIT = '''
import torch

class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        raise ValueError("bad layer size")

    def get_example_inputs(self):
        return (torch.ones(1, 4),)
'''
RAISES_IN_EXAMPLE_INPUTS = '''
import torch

class Net(torch.nn.Module):
    def forward(self, x):
        return x

    def get_example_inputs(self):
        return (torch.ones(1, 4) @ torch.ones(3, 4),)
'''
RAISES_IN_FORWARD = '''
import torch

class Net(torch.nn.Module):
    def forward(self, x):
        return x[:, 7]

    def get_example_inputs(self):
        return (torch.ones(1, 4),)
'''


@pytest.fixture(autouse=True)
def outside_the_checkout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def error_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip()]


def assert_one_line(err: str, *fragments: str) -> str:
    lines = error_lines(err)
    assert len(lines) == 1, err
    assert "Traceback" not in err
    for fragment in fragments:
        assert fragment in lines[0], lines[0]
    return lines[0]


# ----------------------------------------------------------------------------- kiln-aot
@pytest.mark.parametrize(
    "argv, fragments",
    [
        (["-m", "add", "--target", "garbage"], ["error: unknown Ethos-U target 'garbage'"]),
        (["-m", "add", "--target", "ethos-u55-128"], ["--target ethos-u55-128 applies only with --delegate"]),
        (["-m", "add", "-q", "--memory_mode", "Shared_Sram"], ["--memory_mode Shared_Sram applies only with --delegate"]),
        (["-m", "add", "-q", "-d", "--target", "ethos-u85-129"], ["Did you mean 'ethos-u85-128'?"]),
        (["-m", "mv3x"], ["unknown model 'mv3x' (did you mean 'mv3'?)"]),
        (["-m", "mobilenet_v2"], ["(did you mean 'mv2'?)"]),
    ],
    ids=["garbage target", "target without delegate", "memory mode without delegate", "u85-129", "model typo",
         "model by architecture"],
)
def test_aot_user_errors_are_one_line(capsys, argv: list[str], fragments: list[str]) -> None:
    assert kiln.cli.aot.main(argv) == 2
    assert_one_line(capsys.readouterr().err, *fragments)


@pytest.mark.parametrize(
    "source, fragments",
    [
        (SYNTAX_ERROR, ["net.py: importing it raised SyntaxError at line 2"]),
        (RAISES_ON_IMPORT, ["net.py: importing it raised RuntimeError: no weights here"]),
        (RAISES_IN_INIT, ["net.py:Net: Net() raised ValueError: bad layer size"]),
        (RAISES_IN_EXAMPLE_INPUTS, ["net.py:Net: Net.get_example_inputs() raised RuntimeError"]),
        (RAISES_IN_FORWARD, ["net.py:Net: forward() raised IndexError"]),
    ],
    ids=["syntax error", "import", "constructor", "example inputs", "forward"],
)
def test_aot_user_model_that_raises_is_one_line_naming_the_file(capsys, source: str,
                                                                 fragments: list[str]) -> None:
    Path("net.py").write_text(source)
    assert kiln.cli.aot.main(["-m", "net.py:Net"]) == 2
    assert_one_line(capsys.readouterr().err, *fragments)


def test_aot_bad_flag_is_one_line(capsys) -> None:
    with pytest.raises(SystemExit) as exit_:
        kiln.cli.aot.main(["-m", "add", "--quantise"])
    assert exit_.value.code == 2
    assert_one_line(capsys.readouterr().err, "kiln-aot: error: unrecognized arguments: --quantise")


@pytest.mark.slow
def test_aot_output_into_a_folder(capsys) -> None:
    Path("existing").mkdir()
    assert kiln.cli.aot.main(["-m", "add", "-o", "existing"]) == 0
    assert kiln.cli.aot.main(["-m", "add", "-o", "new/"]) == 0
    assert Path("existing/add.pte").is_file() and Path("new/add.pte").is_file()
    Path("a_file").write_text("")
    assert kiln.cli.aot.main(["-m", "add", "-o", "a_file/add.pte"]) == 2
    assert_one_line(capsys.readouterr().err, "--output a_file/add.pte: a_file is a file, not a folder")


def test_aot_internal_error_is_one_line_and_debug_shows_the_traceback(capsys, monkeypatch) -> None:
    def broken_step(args):  # stands in for a bug inside Kiln
        return {}["delegate_0"]

    monkeypatch.setattr(kiln.cli.aot, "run", broken_step)
    assert kiln.cli.aot.main(["-m", "add"]) == 1
    assert_one_line(capsys.readouterr().err, "error: internal error: KeyError: 'delegate_0'", "--debug")
    assert kiln.cli.aot.main(["-m", "add", "--debug"]) == 1
    err = capsys.readouterr().err
    assert "Traceback" in err and "in broken_step" in err
    assert err.rstrip().splitlines()[-1] == "error: internal error: KeyError: 'delegate_0'"


def test_aot_console_script_fails_in_one_line(tmp_path: Path) -> None:
    """The installed command, as a user types it."""
    completed = subprocess.run([Path(sys.executable).with_name("kiln-aot"), "-m", "add", "-t", "ethos-u55-218"],
                               capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert completed.returncode == 2
    assert_one_line(completed.stderr, "Did you mean 'ethos-u55-128'?")


# ----------------------------------------------------------------------------- kiln-deploy
def run_sh(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", str(RUN_SH), *args], capture_output=True, text=True, timeout=300, cwd=cwd)


@pytest.mark.parametrize(
    "argv, fragments",
    [
        (["--model_name=add", "--target=ethos-u55-128"],
         ["--target ethos-u55-128 names the NPU, but without --delegate the whole model runs on the cortex-m55"]),
        (["--model_name=add", "--target=ethos-u85-129", "--aot_arm_compiler_flags=--delegate --quantize"],
         ["Did you mean 'ethos-u85-128'?"]),
        (["--model_name=add", "--aot_arm_compiler_flags=--delegate --quantize --so_library x.so"],
         ["kiln-deploy --aot_arm_compiler_flags: error: unrecognized arguments: --so_library x.so"]),
        (["--model_name=add", "--aot_arm_compiler_flags=--delegate"], ["--delegate needs --quantize"]),
        (["--model_name=add", "--source-dir=nowhere"], ["--source-dir nowhere: not a Kiln source tree"]),
    ],
    ids=["target without delegate", "u85-129", "unknown aot flag", "delegate without quantize",
         "bad source dir"],
)
def test_run_sh_refuses_before_building_in_one_line(tmp_path: Path, argv: list[str], fragments: list[str]) -> None:
    completed = run_sh(*argv, cwd=tmp_path)
    assert completed.returncode == 2, completed.stderr
    assert_one_line(completed.stderr, *fragments)
    assert list(tmp_path.iterdir()) == [], "nothing may be built or written for a refused deployment"


def test_deploy_takes_executorch_run_sh_forms() -> None:
    args = kiln_deploy.parse_arguments([
        "--model_name=mv2", "--target=ethos-u55-128", "--output=out",
        "--aot_arm_compiler_flags=--delegate --quantize --intermediates out/aot --debug --evaluate"])
    assert (args.model_name, args.target, args.output_dir) == ("mv2", "ethos-u55-128", Path("out"))
    assert args.delegate and args.quantize and args.debug and args.evaluate
    assert args.intermediates == Path("out/aot")
    kiln_deploy.check_target(args)
    assert kiln_deploy.aot_flags(args) == ["--quantize", "--delegate", "--target", "ethos-u55-128", "--evaluate",
                                           "--debug"]


def test_deploy_target_naming_a_cpu_selects_the_cpu() -> None:
    args = kiln_deploy.parse_arguments(["--model_name=add", "--target=cortex-m85"])
    kiln_deploy.check_target(args)
    assert (args.cpu, args.target) == ("cortex-m85", None)


def test_deploy_builds_the_sources_installed_with_the_package() -> None:
    import kiln
    from kiln.deploy.firmware import is_source_tree, locate_sources

    installed = locate_sources(None)
    assert is_source_tree(installed.path)
    assert installed.path.parent == Path(kiln.__file__).resolve().parent
    assert installed.origin == f"installed with kiln {kiln.__version__}"
    given = locate_sources(CHECKOUT)
    assert (given.path, given.origin) == (CHECKOUT, "given with --source-dir")


def test_deploy_bad_flag_is_one_line(capsys) -> None:
    with pytest.raises(SystemExit) as exit_:
        kiln_deploy.main(["--model_name", "add", "--delegte"])
    assert exit_.value.code == 2
    assert_one_line(capsys.readouterr().err, "kiln-deploy: error:")


# ----------------------------------------------------------------------------- kiln-oplist
@pytest.mark.parametrize(
    "content, fragments",
    [(None, ["error: missing.pte: No such file or directory"]),
     (b"\x00" * 64, ["error: missing.pte: not a .pte program"])],
    ids=["missing", "not a program"],
)
def test_oplist_bad_file_is_one_line(capsys, content: bytes | None, fragments: list[str]) -> None:
    if content is not None:
        Path("missing.pte").write_bytes(content)
    assert kiln_oplist.main(["missing.pte"]) == 1
    assert_one_line(capsys.readouterr().err, *fragments)


def test_oplist_bad_flag_is_one_line(capsys) -> None:
    with pytest.raises(SystemExit) as exit_:
        kiln_oplist.main(["x.pte", "--dtypez"])
    assert exit_.value.code == 2
    assert_one_line(capsys.readouterr().err, "kiln-oplist: error:")
