"""The README's commands and code work as written: each shell and Python snippet runs, in
README order, in one folder outside the checkout, with relative paths and outputs into
folders that do not exist yet (``path/to/kiln`` is the checkout). The CMake snippet is
configured in a project of its own, so every target it names must exist. In docs/, the
snippets marked runnable (a fence such as ```` ```python runnable ````) run, each in a
folder of its own.

Not run here: the quick start (it installs everything and deploys mv2: many minutes), the
kiln-deploy snippets (a firmware build and mv2 in QEMU; test_pip_install.py runs
kiln-deploy from outside the checkout after a plain ``pip install``) and the per-layer
comparison of mv2 (the devtools tests run it).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

CHECKOUT = Path(__file__).resolve().parents[3]
README = CHECKOUT / "README.md"
DOCS = CHECKOUT / "docs"

#: Snippets not run here, by a command they contain, and why.
NOT_RUN = {
    "./tools/quickstart.sh": "the quick start installs everything and deploys mv2 (many minutes)",
    "kiln-deploy": "builds firmware and runs mv2 in QEMU; test_pip_install.py deploys from outside the checkout",
    "--per-layer": "mv2 through four runtimes layer by layer (minutes); tests/python/devtools/test_mv2_npu.py runs it",
    "pip install --no-deps": "installs into the running venv; tests/python/devtools/test_without_torch.py checks a "
                             "venv with only the runtime's distributions",
    "benchmarks/cortex_m.py": "every shape and zoo model on three CPUs in QEMU (many minutes); the Cortex-M kernel "
                              "case firmware checks the kernels",
}


@dataclass(frozen=True)
class Snippet:
    line: int  # of the opening fence in README.md
    language: str
    code: str

    @property
    def name(self) -> str:
        first = next(line for line in self.code.splitlines() if line.strip() and not line.startswith(("import", "from")))
        return f"line{self.line}-{self.language}-{re.sub(r'[^A-Za-z0-9]+', '_', first)[:40].strip('_')}"

    def reason_not_run(self) -> str | None:
        return next((why for command, why in NOT_RUN.items() if command in self.code), None)


def readme_snippets(language: str, page: Path = README, marker: str = "") -> list[Snippet]:
    """The ``language`` code blocks of ``page`` whose fence says ``marker`` after the language."""
    snippets, lines = [], page.read_text().splitlines()
    fence = re.compile(r"^```(\w+)[ \t]*(\w*)\s*$")
    index = 0
    while index < len(lines):
        match = fence.match(lines[index])
        if match is None:
            index += 1
            continue
        end = lines.index("```", index + 1)
        if match.groups() == (language, marker):
            snippets.append(Snippet(index + 1, language, "\n".join(lines[index + 1:end]) + "\n"))
        index = end + 1
    return snippets


RUNNABLE = [s for s in readme_snippets("sh") + readme_snippets("python") if s.reason_not_run() is None]
RUNNABLE.sort(key=lambda s: s.line)
#: (page, snippet) of every snippet of docs/ marked runnable.
DOCS_RUNNABLE = [(page, snippet) for page in sorted(DOCS.glob("*.md"))
                 for language in ("sh", "python") for snippet in readme_snippets(language, page, "runnable")]


def user_environment() -> dict[str, str]:
    """The shell of a user whose Kiln venv is activated."""
    venv_bin = str(Path(sys.executable).parent)
    env = dict(os.environ, PATH=os.pathsep.join([venv_bin, os.environ.get("PATH", "")]),
               VIRTUAL_ENV=str(Path(venv_bin).parent), CMAKE_BUILD_PARALLEL_LEVEL="2")
    env.pop("PYTHONPATH", None)
    return env


def run_snippet(snippet: Snippet, folder: Path) -> subprocess.CompletedProcess[str]:
    code = snippet.code.replace("path/to/kiln", str(CHECKOUT))
    if snippet.language == "sh":
        command = ["bash", "-euo", "pipefail", "-c", code]
    else:
        command = [sys.executable, "-c", code]
    return subprocess.run(command, cwd=folder, env=user_environment(), capture_output=True, text=True, timeout=1800)


@pytest.fixture(scope="module")
def user_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("readme_user")


@pytest.fixture(scope="module")
def snippet_results(user_folder: Path) -> dict[int, subprocess.CompletedProcess[str]]:
    """Every runnable snippet's result, run once, in README order, in one folder."""
    return {snippet.line: run_snippet(snippet, user_folder) for snippet in RUNNABLE}


def test_readme_has_the_snippets_this_test_runs() -> None:
    commands = "".join(s.code for s in RUNNABLE)
    for expected in ("kiln-aot", "kiln-run", "kiln-oplist", "cmake -S path/to/kiln", "kiln.export", "Runtime()"):
        assert expected in commands, f"no runnable README snippet contains {expected!r}"


@pytest.mark.slow
@pytest.mark.parametrize("snippet", RUNNABLE, ids=lambda s: s.name)
def test_readme_snippet_runs(snippet_results, snippet: Snippet) -> None:
    completed = snippet_results[snippet.line]
    assert completed.returncode == 0, (
        f"README.md line {snippet.line} failed with exit {completed.returncode}:\n{snippet.code}\n"
        f"--- stdout\n{completed.stdout[-3000:]}\n--- stderr\n{completed.stderr[-3000:]}")


def test_docs_have_runnable_snippets() -> None:
    assert any(page.name == "architecture.md" for page, _ in DOCS_RUNNABLE)


@pytest.mark.parametrize("page, snippet", DOCS_RUNNABLE, ids=lambda v: v.name if isinstance(v, (Path, Snippet)) else "")
def test_docs_snippet_runs(page: Path, snippet: Snippet, tmp_path: Path) -> None:
    completed = run_snippet(snippet, tmp_path)
    assert completed.returncode == 0, (
        f"docs/{page.name} line {snippet.line} failed with exit {completed.returncode}:\n{snippet.code}\n"
        f"--- stdout\n{completed.stdout[-3000:]}\n--- stderr\n{completed.stderr[-3000:]}")


@pytest.mark.slow
@pytest.mark.parametrize(
    "produced",
    ["mv2.pte", "mv2/input_0.npy", "out/output_0.npy", "mv2_u55.pte", "mv2_u55_report/partition_report.txt",
     "mv2_u55_report/partition_report.json", "model.pte", "build/sel/tools/kiln_run/kiln_executor_runner"],
)
def test_readme_snippets_write_what_the_readme_says(snippet_results, user_folder: Path, produced: str) -> None:
    assert (user_folder / produced).is_file()


@pytest.mark.slow
def test_readme_cmake_snippet_names_real_targets(tmp_path: Path) -> None:
    (snippet,) = readme_snippets("cmake")
    project = tmp_path / "my_app"
    project.mkdir()
    (project / "main.cpp").write_text("int main() { return 0; }\n")
    (project / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.25)\nproject(my_app C CXX)\nadd_executable(my_app main.cpp)\n"
        + snippet.code.replace("path/to/kiln", str(CHECKOUT)))
    completed = subprocess.run(["cmake", "-S", str(project), "-B", str(tmp_path / "build")], cwd=tmp_path,
                               env=user_environment(), capture_output=True, text=True, timeout=600)
    assert completed.returncode == 0, completed.stdout[-2000:] + completed.stderr[-3000:]


def test_readme_registration_functions_exist() -> None:
    """The functions the README tells an application to call, in the headers it names."""
    text = README.read_text()
    for function, header in re.findall(r"`kiln::(?:\w+::)*(\w+)\(\)`\s*\(`([\w/]+\.h)`", text):
        assert re.search(rf"\b{function}\(\)", (CHECKOUT / header).read_text()), (function, header)
    assert "register_ethos_u_backend_with_virtual_npu" in text
