"""``pip install .`` alone gives a working ``kiln-deploy``: in a fresh venv, from a copy of the
checkout's tracked files, with no flag (build isolation: the build tools come from
pyproject.toml; the run-time tools -- flatc, Ninja -- must be declared dependencies), then
``kiln-deploy`` from a folder outside the checkout, unactivated, with a relative output
folder that does not exist yet.

To keep it in budget the venv sees torch (and only torch and what torch requires, hard-linked
from the test's own venv) through a ``.pth`` file instead of installing its 900 MB again;
every other dependency is resolved by pip from kiln's metadata.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest

CHECKOUT = Path(__file__).resolve().parents[3]


def copy_tracked_files(destination: Path) -> Path:
    """The checkout as a clone has it: its tracked files only (no build/, no .venv)."""
    listed = subprocess.run(["git", "-C", str(CHECKOUT), "ls-files", "-z"], capture_output=True, check=True)
    for name in listed.stdout.decode().split("\0"):
        source = CHECKOUT / name
        if name and source.is_file():
            target = destination / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    return destination


def requirement_closure(name: str) -> list[metadata.Distribution]:
    """``name``'s installed distribution and, recursively, the installed ones it requires."""
    found: dict[str, metadata.Distribution] = {}
    pending = [name]
    while pending:
        wanted = re.split(r"[\s;<>=!~\[(]", pending.pop(), maxsplit=1)[0].lower().replace("_", "-")
        if wanted in found:
            continue
        try:
            dist = metadata.distribution(wanted)
        except metadata.PackageNotFoundError:
            continue  # an optional or other-platform requirement that is not installed
        found[wanted] = dist
        pending += [r for r in dist.requires or [] if "extra ==" not in r]
    return list(found.values())


def _link_or_copy(source: str, target: str) -> None:
    """A hard link (instant, and pip removing it in the new venv leaves the original), or a copy."""
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)


def torch_only_site(folder: Path) -> Path:
    """torch and the packages it requires, linked file by file from this venv's site-packages.
    setuptools stays out: every venv has its own, which pip upgrades when it must."""
    folder.mkdir(parents=True)
    for dist in requirement_closure("torch"):
        if dist.metadata["Name"].lower() == "setuptools":
            continue
        for top in {Path(str(f)).parts[0] for f in dist.files or []} - {"..", "__pycache__"}:
            source, target = Path(str(dist.locate_file(top))), folder / top
            if target.exists() or not source.exists():
                continue
            if source.is_dir():
                shutil.copytree(source, target, copy_function=_link_or_copy,
                                ignore=shutil.ignore_patterns("__pycache__"))
            else:
                _link_or_copy(str(source), str(target))
    return folder


def system_path() -> str:
    """PATH without any virtual environment's bin folder: kiln-deploy runs unactivated."""
    return os.pathsep.join(p for p in os.environ.get("PATH", "").split(os.pathsep)
                           if p and not (Path(p) / "activate").is_file())


@pytest.fixture(scope="module")
def fresh_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("pip_install")
    source = copy_tracked_files(root / "kiln")
    venv = root / "venv"
    subprocess.run([sys._base_executable, "-m", "venv", str(venv)], check=True, timeout=300)
    site = next((venv / "lib").glob("python3*/site-packages"))
    (site / "torch_from_the_test_venv.pth").write_text(str(torch_only_site(root / "torch_site")) + "\n")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.update(PATH=system_path(), CMAKE_BUILD_PARALLEL_LEVEL="2")
    completed = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "."], cwd=source, env=env,
                               capture_output=True, text=True, timeout=3600)
    assert completed.returncode == 0, completed.stdout[-3000:] + completed.stderr[-3000:]
    return venv


@pytest.mark.slow
def test_plain_pip_install_gives_a_working_kiln_deploy(fresh_venv: Path, tmp_path: Path) -> None:
    user = tmp_path / "user"
    user.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env.update(PATH=system_path())
    completed = subprocess.run([str(fresh_venv / "bin" / "kiln-deploy"), "--model_name", "add", "--selective",
                                "--output_dir", "out/add"],
                               cwd=user, env=env, capture_output=True, text=True, timeout=1800)
    assert completed.returncode == 0, completed.stdout[-4000:] + completed.stderr[-3000:]
    shipped = next((fresh_venv / "lib").glob("python3*/site-packages")) / "kiln" / "firmware_sources"
    assert f"firmware sources: {shipped.resolve()} (installed with kiln" in completed.stdout
    assert "output(s) equal the host runtime's bit for bit" in completed.stdout
    out = user / "out" / "add"
    assert (out / "firmware-cortex-m55" / "examples" / "arm" / "kiln_firmware.elf").is_file()
    # Quiet: the build's lines are in the log, not on the terminal.
    build_log = (out / "build.log").read_text()
    assert "Linking" in build_log or "kiln_firmware.elf" in build_log
    assert not re.search(r"^\[\d+/\d+\]|warning:|KILN-HEX", completed.stdout, re.MULTILINE), completed.stdout
    assert not shipped.joinpath("build").exists(), "nothing is built inside the shipped sources"
