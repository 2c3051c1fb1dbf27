"""Imports in the ``kiln`` package run one way: down the layers written in ``LAYERS``.

Every module under python/kiln is parsed (not imported: no torch, no extension needed) and
each of its imports — at module level or inside a function — is mapped to the package it
belongs to. A package may import only packages of a lower layer; packages of one layer are
peers and import none of each other (the backends among them: Ethos-U, XNNPACK and Cortex-M
share code only through :mod:`kiln.delegation`). Imports under ``if TYPE_CHECKING:`` name
types for annotations and import nothing at run time, so they are not counted.
"""

from __future__ import annotations

import ast
import collections
from dataclasses import dataclass
from pathlib import Path

import pytest

PACKAGE_ROOT = Path(__file__).resolve().parents[2] / "python"

#: The packages of ``kiln``, lowest layer first (the layout in ARCHITECTURE.md, as data).
#: The top-level ``kiln`` module (errors, lazy attributes) and the runtime extension
#: ``kiln._runtime`` are the foundation every layer may use.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("kiln",),  # KilnError and its subclasses, lazy attributes, the C++ runtime extension
    # MethodGraph; the target table; tolerances; where firmware sources are; example models
    ("kiln.ir", "kiln.targets", "kiln.tolerances", "kiln.firmware_tree", "kiln.models"),
    ("kiln.serialize",),  # the .pte format: schema, reader, writer, scalar types, emitter
    ("kiln.runtime", "kiln.boards", "kiln.passes"),  # run programs; board profiles; core ATen -> MethodGraph
    ("kiln.program", "kiln.memory"),  # Program (load, save, summary); memory planning and manifests
    ("kiln.devtools",),  # ETDump, inspector, bundled programs, debug info, plots
    ("kiln.delegation",),  # the backend-neutral delegation toolkit
    ("kiln.export",),  # kiln.export: torch.export -> edge -> out variants -> .pte
    ("kiln.quantize",),  # PT2E quantization driver
    ("kiln.backends", "kiln.backends.arm", "kiln.backends.xnnpack", "kiln.backends.cortex_m"),  # peers
    ("kiln.deploy",),  # firmware images, QEMU
    ("kiln.cli",),  # console scripts
    ("kiln.aot_compiler",),  # ``python -m kiln.aot_compiler``: kiln-aot under ExecuTorch's script name
)

_FOUNDATION = {"kiln", "kiln._lazy", "kiln._runtime"}
_LAYER_OF = {package: index for index, layer in enumerate(LAYERS) for package in layer}


@dataclass(frozen=True)
class Import:
    importer: str  # module, "kiln.export.delegate"
    imported: str  # module or name, "kiln.passes.delegation"
    line: int

    def where(self) -> str:
        return f"{self.importer}:{self.line} imports {self.imported}"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE_ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _all_modules() -> dict[str, Path]:
    return {_module_name(path): path for path in sorted((PACKAGE_ROOT / "kiln").rglob("*.py"))}


def _type_checking_blocks(tree: ast.Module) -> set[int]:
    """ids of the statements under ``if TYPE_CHECKING:`` (annotations only)."""
    skipped: set[int] = set()
    for node in ast.walk(tree):
        test = node.test if isinstance(node, ast.If) else None
        name = test.id if isinstance(test, ast.Name) else test.attr if isinstance(test, ast.Attribute) else ""
        if name == "TYPE_CHECKING":
            for statement in node.body:
                skipped.update(id(inner) for inner in ast.walk(statement))
    return skipped


def _imports(module: str, path: Path, modules: dict[str, Path]) -> list[Import]:
    tree = ast.parse(path.read_text(), filename=str(path))
    skipped = _type_checking_blocks(tree)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: list[Import] = []
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            found += [Import(module, alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join(anchor + ([node.module] if node.module else []))
            for alias in node.names:
                # "from kiln import serialize" imports the module kiln.serialize.
                name = f"{base}.{alias.name}"
                found.append(Import(module, name if name in modules else base, node.lineno))
    return [item for item in found if item.imported == "kiln" or item.imported.startswith("kiln.")]


def _package(module: str) -> str:
    """The layer entry a module belongs to: kiln.backends.<name> for a backend, else kiln.<name>."""
    parts = module.split(".")
    if ".".join(parts[:2]) in _FOUNDATION or len(parts) == 1:
        return "kiln"
    if parts[1] == "backends" and len(parts) > 2:
        return ".".join(parts[:3])
    return ".".join(parts[:2])


@pytest.fixture(scope="module")
def imports() -> list[Import]:
    modules = _all_modules()
    assert "kiln.ir.method_graph" in modules, f"no kiln sources under {PACKAGE_ROOT}"
    return [item for module, path in modules.items() for item in _imports(module, path, modules)]


def _between_packages(imports: list[Import]) -> list[tuple[str, str, Import]]:
    pairs = [(_package(item.importer), _package(item.imported), item) for item in imports]
    return [(low, high, item) for low, high, item in pairs if low != high]


def test_every_package_has_a_layer() -> None:
    packages = {_package(module) for module in _all_modules()}
    assert sorted(packages - set(_LAYER_OF)) == []


def test_imports_go_down_the_layers(imports: list[Import]) -> None:
    wrong = sorted({f"{item.where()} ({importer}: layer {_LAYER_OF[importer]}, {imported}: layer {_LAYER_OF[imported]})"
                    for importer, imported, item in _between_packages(imports)
                    if _LAYER_OF[imported] >= _LAYER_OF[importer]})
    assert not wrong, "\n".join(wrong)


def test_no_backend_imports_another_backend(imports: list[Import]) -> None:
    wrong = sorted({item.where() for importer, imported, item in _between_packages(imports)
             if importer.startswith("kiln.backends.") and imported.startswith("kiln.backends")})
    assert not wrong, "\n".join(wrong)


def test_no_import_cycle_between_packages(imports: list[Import]) -> None:
    edges: dict[str, set[str]] = collections.defaultdict(set)
    for importer, imported, _ in _between_packages(imports):
        edges[importer].add(imported)

    def cycle_from(start: str) -> list[str]:
        stack, seen = [(start, [start])], set()
        while stack:
            package, path = stack.pop()
            for following in sorted(edges[package]):
                if following == start:
                    return path + [start]
                if following not in seen:
                    seen.add(following)
                    stack.append((following, path + [following]))
        return []

    cycles = {" -> ".join(cycle) for package in sorted(edges) if (cycle := cycle_from(package))}
    assert not cycles, "\n".join(sorted(cycles))


def test_the_checker_sees_function_level_and_relative_imports(tmp_path: Path) -> None:
    """The parser itself: an import inside a function and a relative one are both found,
    one under ``if TYPE_CHECKING:`` is not."""
    package = tmp_path / "kiln" / "serialize"
    package.mkdir(parents=True)
    source = package / "emitter.py"
    source.write_text("from typing import TYPE_CHECKING\n"
                      "from . import pte_file\n"
                      "if TYPE_CHECKING:\n    from kiln.export import Program\n"
                      "def emit():\n    from kiln.memory.planner import plan\n")
    found = _imports("kiln.serialize.emitter", source, {"kiln.serialize.pte_file": source})
    assert [(item.imported, item.line) for item in found] == [("kiln.serialize.pte_file", 2),
                                                              ("kiln.memory.planner", 6)]


def test_the_architecture_page_lists_the_layers() -> None:
    """docs/architecture.md's table: one row per layer, its packages in LAYERS' order."""
    page = (PACKAGE_ROOT.parent / "docs" / "architecture.md").read_text()
    rows = [line.split("|")[1:3] for line in page.splitlines() if line.startswith("| ") and line[2].isdigit()]
    documented = tuple(tuple(name.strip(" `") for name in packages.split(",")) for _, packages in rows)
    assert documented == LAYERS
