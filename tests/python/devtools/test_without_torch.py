"""The runtime side of Kiln works in a venv without torch: loading and summarizing a ``.pte``,
running it with numpy inputs (Python runtime, ``Module``, ``kiln-run``), and the devtools
readers (bundled programs, ETDumps, the Inspector, ``kiln-inspect``). A user can run and
inspect programs on a small Linux board or in a lean CI job.

The venv is made by ``python -m venv`` and sees only the distributions a runtime-only
install holds (kiln itself, numpy, flatbuffers, PyYAML), linked file by file from this
test's venv (what ``pip install --no-deps`` of the same build would put there; see the
README's "Runtime only" install). The programs are compiled here, with torch; the expected
values are eager PyTorch's.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import numpy as np
import pytest
import torch

import kiln
from kiln.devtools import bundle

RUNTIME_DISTRIBUTIONS = ("kiln", "numpy", "flatbuffers", "pyyaml")


def _link_or_copy(source: str, target: str) -> None:
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)


def _link_distribution(name: str, site: Path) -> None:
    """Every top-level file and folder the installed distribution ``name`` owns, into ``site``."""
    dist = metadata.distribution(name)
    for top in {Path(str(f)).parts[0] for f in dist.files or []} - {"..", "__pycache__"}:
        source, target = Path(str(dist.locate_file(top))), site / top
        if target.exists() or not source.exists():
            continue
        if source.is_dir():
            shutil.copytree(source, target, copy_function=_link_or_copy, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            _link_or_copy(str(source), str(target))


@pytest.fixture(scope="module")
def torchless_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    venv = tmp_path_factory.mktemp("no_torch") / "venv"
    subprocess.run([sys._base_executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=300)
    site = next((venv / "lib").glob("python3*/site-packages"))
    for name in RUNTIME_DISTRIBUTIONS:
        _link_distribution(name, site)
    python = venv / "bin" / "python"
    probe = subprocess.run([str(python), "-c", "import torch"], capture_output=True, text=True, env=_clean_env())
    assert probe.returncode != 0 and "No module named 'torch'" in probe.stderr, "the venv must not see torch"
    return python


def _clean_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}


def _run(python: Path, script: str, *args: object, cwd: Path) -> subprocess.CompletedProcess:
    done = subprocess.run([str(python), "-c", script, *map(str, args)], cwd=cwd, capture_output=True, text=True,
                          timeout=600, env=_clean_env())
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done


# Fails (exits non-zero) if any compiler-side package was imported along the way.
_NOTHING_HEAVY = """
heavy = sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'torchao', 'tosa_tools', 'ethosu', 'matplotlib'))
assert not heavy, f'imported {heavy}'
"""


def test_summary_and_python_runtime_work_without_torch(smallcnn, torchless_python: Path, tmp_path: Path) -> None:
    script = """
import json, sys
import numpy as np
import kiln
from kiln.runtime import Module, Runtime
pte, x = sys.argv[1], np.load(sys.argv[2])
summary = kiln.Program.load(pte).summary()
module_out = Module(pte).forward(x)[0]
method_out = Runtime.get().load_program(pte).load_method('forward').execute([x])[0]
np.save('module.npy', module_out); np.save('method.npy', method_out)
print(json.dumps({'summary': summary}))
""" + _NOTHING_HEAVY
    done = _run(torchless_python, "import sys\n" + script, smallcnn.pte, smallcnn.input_files[0], cwd=tmp_path)
    summary = json.loads(done.stdout.strip().splitlines()[-1])["summary"]
    assert summary == kiln.Program.load(smallcnn.pte).summary()
    with torch.no_grad():
        eager = smallcnn.model(*smallcnn.inputs).numpy()
    for name in ("module.npy", "method.npy"):
        np.testing.assert_allclose(np.load(tmp_path / name), eager, rtol=1e-4, atol=1e-5)


def test_kiln_run_bundles_etdump_and_inspector_work_without_torch(smallcnn, torchless_python: Path,
                                                                  tmp_path: Path) -> None:
    other = np.random.default_rng(5).standard_normal(smallcnn.inputs[0].shape).astype(np.float32)
    good = bundle(smallcnn.pte, [[smallcnn.inputs[0]], [other]], model=smallcnn.model).save(tmp_path / "good.bpte")
    # --atol 1e-6: the runtime's fp32 kernels sum in another order than eager PyTorch's (whose
    # convolution path depends on the CPU), so an output near zero can be a few 1e-7 off, past
    # the default 1e-8; a wrong output is far past either (the bundling tests check that).
    passed = _run(torchless_python, "import runpy; runpy.run_module('kiln.cli.run', run_name='__main__')", good,
                  "--atol", "1e-6", cwd=tmp_path)
    assert "test case 0: PASS" in passed.stdout and "Test_result: PASS (2 test case(s))" in passed.stdout, passed.stdout
    _run(torchless_python, "import runpy; runpy.run_module('kiln.cli.run', run_name='__main__')", smallcnn.pte,
         "--input", smallcnn.input_files[0], "--output-dir", "out", "--etdump", "dumps/run.etdp", cwd=tmp_path)
    with torch.no_grad():
        eager = smallcnn.model(*smallcnn.inputs).numpy()
    np.testing.assert_allclose(np.load(tmp_path / "out" / "output_0.npy"), eager, rtol=1e-4, atol=1e-5)

    script = """
import sys
from kiln.devtools import BundledProgram, Etdump, Inspector
from kiln.program import Program
pte, bpte = sys.argv[1:3]
print('cases', len(BundledProgram.load(bpte).suite('forward').test_cases))
dump = Etdump.load('dumps/run.etdp')
rows = Inspector(dump, Program.load(pte)).rows
print('instructions', len([e for e in dump.runs[0].profile_events if e.instruction >= 0]), 'rows', len(rows))
sys.argv = ['kiln-inspect', 'dumps/run.etdp', '--program', pte]
from kiln.cli.inspector import main
assert main() in (0, None)
""" + _NOTHING_HEAVY
    done = _run(torchless_python, script, smallcnn.pte, good, cwd=tmp_path)
    instructions = kiln.Program.load(smallcnn.pte).method("forward").num_instructions
    assert "cases 2" in done.stdout
    assert f"instructions {instructions} rows " in done.stdout, done.stdout
    assert "aten::convolution.out" in done.stdout, done.stdout  # kiln-inspect's table names the kernels
