"""The README's and docs/' commands and code work as written: each shell and Python snippet
runs, page by page in the README's order (``DOC_PAGES``), in one folder outside the checkout,
with relative paths and outputs into folders that do not exist yet (``path/to/kiln`` is the
checkout). The CMake snippet is configured in a project of its own, so every target it names
must exist.

Not run here: the snippets ``NOT_RUN`` names, each with the test that covers it instead (the
quick start installs everything and deploys mv2: many minutes; the kiln-deploy snippets build
firmware and run it in QEMU).
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
#: The pages whose snippets run, in this order, in one folder: later pages use what earlier
#: ones wrote (run.md's ``mv2.pte`` comes from compile.md). Every page under docs/ is listed.
DOC_PAGES = [README] + [CHECKOUT / "docs" / name for name in (
    "compile.md", "quantize.md", "ethos-u.md", "xnnpack.md", "cortex-m.md", "run.md", "devtools.md",
    "runtime.md", "deploy.md", "board-files.md", "real-silicon.md", "executorch.md", "errors.md",
    "testing.md", "architecture.md")]

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
    page: Path
    line: int  # of the opening fence in the page
    language: str
    code: str

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(CHECKOUT)}:{self.line}"

    @property
    def name(self) -> str:
        first = next(line for line in self.code.splitlines() if line.strip() and not line.startswith(("import", "from")))
        return f"{self.page.stem}-line{self.line}-{self.language}-{re.sub(r'[^A-Za-z0-9]+', '_', first)[:40].strip('_')}"

    def reason_not_run(self) -> str | None:
        return next((why for command, why in NOT_RUN.items() if command in self.code), None)


def page_snippets(page: Path, language: str) -> list[Snippet]:
    snippets, lines = [], page.read_text().splitlines()
    fence = re.compile(r"^```(\w+)\s*$")
    index = 0
    while index < len(lines):
        match = fence.match(lines[index])
        if match is None:
            index += 1
            continue
        end = lines.index("```", index + 1)
        if match.group(1) == language:
            snippets.append(Snippet(page, index + 1, language, "\n".join(lines[index + 1:end]) + "\n"))
        index = end + 1
    return snippets


def doc_snippets(language: str) -> list[Snippet]:
    return [snippet for page in DOC_PAGES for snippet in page_snippets(page, language)]


RUNNABLE = [s for page in DOC_PAGES
            for s in sorted(page_snippets(page, "sh") + page_snippets(page, "python"), key=lambda s: s.line)
            if s.reason_not_run() is None]


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
def snippet_results(user_folder: Path) -> dict[str, subprocess.CompletedProcess[str]]:
    """Every runnable snippet's result, run once, in page order, in one folder."""
    return {snippet.where: run_snippet(snippet, user_folder) for snippet in RUNNABLE}


def test_docs_have_the_snippets_this_test_runs() -> None:
    commands = "".join(s.code for s in RUNNABLE)
    for expected in ("kiln-aot", "kiln-run", "kiln-oplist", "cmake -S path/to/kiln", "kiln.export", "Runtime()",
                     "kiln.quantize(", "prepare_qat"):
        assert expected in commands, f"no runnable snippet in the docs contains {expected!r}"


def test_every_page_under_docs_is_run() -> None:
    assert sorted((CHECKOUT / "docs").glob("*.md")) == sorted(DOC_PAGES[1:])


@pytest.mark.slow
@pytest.mark.parametrize("snippet", RUNNABLE, ids=lambda s: s.name)
def test_snippet_runs(snippet_results, snippet: Snippet) -> None:
    completed = snippet_results[snippet.where]
    assert completed.returncode == 0, (
        f"{snippet.where} failed with exit {completed.returncode}:\n{snippet.code}\n"
        f"--- stdout\n{completed.stdout[-3000:]}\n--- stderr\n{completed.stderr[-3000:]}")


@pytest.mark.slow
@pytest.mark.parametrize(
    "produced",
    ["mv2.pte", "mv2/input_0.npy", "out/output_0.npy", "mv2_u55.pte", "mv2_u55_report/partition_report.txt",
     "mv2_u55_report/partition_report.json", "model.pte", "build/sel/tools/kiln_run/kiln_executor_runner",
     "small_int8.pte", "small_qat.pte"],
)
def test_snippets_write_what_the_docs_say(snippet_results, user_folder: Path, produced: str) -> None:
    assert (user_folder / produced).is_file()


@pytest.mark.slow
def test_cmake_snippet_names_real_targets(tmp_path: Path) -> None:
    (snippet,) = doc_snippets("cmake")
    project = tmp_path / "my_app"
    project.mkdir()
    (project / "main.cpp").write_text("int main() { return 0; }\n")
    (project / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.25)\nproject(my_app C CXX)\nadd_executable(my_app main.cpp)\n"
        + snippet.code.replace("path/to/kiln", str(CHECKOUT)))
    completed = subprocess.run(["cmake", "-S", str(project), "-B", str(tmp_path / "build")], cwd=tmp_path,
                               env=user_environment(), capture_output=True, text=True, timeout=600)
    assert completed.returncode == 0, completed.stdout[-2000:] + completed.stderr[-3000:]


def test_registration_functions_exist() -> None:
    """The functions the docs tell an application to call, in the headers they name."""
    text = "".join(page.read_text() for page in DOC_PAGES)
    for function, header in re.findall(r"`kiln::(?:\w+::)*(\w+)\(\)`\s*\(`([\w/]+\.h)`", text):
        assert re.search(rf"\b{function}\(\)", (CHECKOUT / header).read_text()), (function, header)
    assert "register_ethos_u_backend_with_virtual_npu" in text
