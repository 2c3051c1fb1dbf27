"""The docs stay whole: every runtime error and every compiler exception is on the errors
page, and every relative link in the README and docs/ leads to a file (and heading) that
exists. The snippets themselves run in test_doc_snippets.py."""

from __future__ import annotations

import importlib
import pkgutil
import re
from pathlib import Path

import pytest

import kiln

CHECKOUT = Path(__file__).resolve().parents[3]
PAGES = [CHECKOUT / "README.md", *sorted((CHECKOUT / "docs").glob("*.md"))]
ERRORS_PAGE = CHECKOUT / "docs" / "errors.md"


def runtime_errors() -> list[tuple[str, int]]:
    """(name, code) of every kiln::Error value, read from the header."""
    header = (CHECKOUT / "runtime" / "core" / "error.h").read_text()
    start = re.search(r"enum class (\[\[\w+\]\] )?Error\b", header).start()  # attributes allowed
    body = header[start:header.index("};", start)]
    return [(name, int(code, 16)) for name, code in re.findall(r"^\s*(\w+) = (0x[0-9a-fA-F]+),", body, re.M)]


def test_every_runtime_error_is_on_the_errors_page_with_its_code() -> None:
    page = ERRORS_PAGE.read_text()
    errors = runtime_errors()
    assert len(errors) > 40
    missing = [f"{name} (0x{code:02x})" for name, code in errors if f"| `0x{code:02x}` | `{name}` |" not in page]
    assert not missing, f"docs/errors.md lacks: {missing}"


def compiler_exceptions() -> list[type]:
    for info in pkgutil.walk_packages(kiln.__path__, "kiln."):
        importlib.import_module(info.name)
    found, pending = [], [kiln.KilnError]
    while pending:
        cls = pending.pop()
        found.append(cls)
        pending += [sub for sub in cls.__subclasses__() if sub.__module__.startswith("kiln")]
    return found


def test_every_compiler_exception_is_on_the_errors_page() -> None:
    page = ERRORS_PAGE.read_text()
    exceptions = compiler_exceptions()
    assert len(exceptions) > 20
    missing = [f"{c.__module__}.{c.__qualname__}" for c in exceptions if f"`{c.__module__}.{c.__qualname__}`" not in page]
    assert not missing, f"docs/errors.md lacks: {missing}"


def anchors(page: Path) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens."""
    text, found, fence = page.read_text(), set(), False
    for line in text.splitlines():
        if line.startswith("```"):
            fence = not fence
        elif not fence and (match := re.match(r"^#+ (.*)$", line)):
            found.add(re.sub(r"[^\w\- ]", "", match.group(1).lower()).replace(" ", "-"))
    return found


def links(page: Path) -> list[str]:
    text = re.sub(r"```.*?```", "", page.read_text(), flags=re.S)
    return [target for target in re.findall(r"\]\(([^)\s]+)\)", text) if "://" not in target]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_relative_links_lead_somewhere(page: Path) -> None:
    broken = []
    for target in links(page):
        path, _, anchor = target.partition("#")
        linked = (page.parent / path).resolve() if path else page
        if not linked.exists():
            broken.append(target)
        elif anchor and linked.suffix == ".md" and anchor not in anchors(linked):
            broken.append(target)
    assert not broken, f"{page.relative_to(CHECKOUT)}: {broken}"


def test_the_readme_is_a_front_page_that_links_every_page() -> None:
    readme = (CHECKOUT / "README.md").read_text()
    assert len(readme.splitlines()) < 120
    assert "./tools/quickstart.sh" in readme and "./tools/test.sh" in readme
    linked = {(CHECKOUT / target).resolve() for target in links(CHECKOUT / "README.md")}
    assert set(PAGES[1:]) <= linked, sorted(p.name for p in set(PAGES[1:]) - linked)
