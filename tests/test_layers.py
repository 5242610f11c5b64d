"""Imports only go downwards (cli -> agent -> context/observe -> providers/store -> types/errors), and no
module imports itself around a cycle (``TYPE_CHECKING`` and in-function imports included)."""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = SRC / "tiny_agent"

RANK = {
    "types": 0,
    "errors": 0,
    "redaction": 0,
    "text": 0,
    "_moved": 0,
    "providers": 1,
    "guide": 1,
    "store": 1,
    "context": 2,
    "tools": 2,
    "whatif": 2,
    "agent": 3,
    "observe": 3,
    "cli": 4,
    "testing": 4,
}
"""A module may import modules of its own rank or lower; ``testing`` (fakes for tests) may use every layer."""


def layer(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != "tiny_agent" or len(parts) < 2:
        return None
    return parts[1]


def module_name(path: Path, root: Path = SRC) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path, root: Path = SRC) -> list[str]:
    """Every module ``path`` imports, wherever the import stands; ``from pkg import mod`` names the module."""
    tree = ast.parse(path.read_text())
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                candidate = f"{node.module}.{alias.name}"
                as_path = root.joinpath(*candidate.split("."))
                is_module = as_path.with_suffix(".py").exists() or (as_path / "__init__.py").exists()
                found.append(candidate if is_module else node.module)
    return found


def upward_imports(path: Path, root: Path = SRC) -> list[str]:
    """The imports of ``path`` that go up a layer, as readable lines."""
    own = layer(module_name(path, root))
    assert own is not None and own in RANK, f"{path} is in no layer; add it to RANK"
    return [
        f"{path.name} ({own}) imports {imported} ({other})"
        for imported in imports_of(path, root)
        if (other := layer(imported)) is not None and other in RANK and RANK[other] > RANK[own]
    ]


def cycles(graph: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (or a module importing itself)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph.get(node, ()):
            if nxt not in graph:
                continue
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group: list[str] = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1 or node in graph.get(node, ()):
                found.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def import_graph(root: Path = SRC) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for path in sorted((root / "tiny_agent").rglob("*.py")):
        name = module_name(path, root)
        if name == "tiny_agent":
            continue  # the package's lazy re-exports import nothing at run time
        graph[name] = {m for m in imports_of(path, root) if m.startswith("tiny_agent.") and m != name}
    return graph


MODULES = sorted(p for p in PACKAGE.rglob("*.py") if p.name not in ("__init__.py", "__main__.py"))


def test_every_module_has_a_layer() -> None:
    for path in MODULES:
        assert layer(module_name(path)) in RANK, f"{module_name(path)} is in no layer; add it to RANK"


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_upward_import(path: Path) -> None:
    assert upward_imports(path) == []


def test_no_import_cycle() -> None:
    assert cycles(import_graph()) == []


def test_the_checker_catches_an_upward_import(tmp_path: Path) -> None:
    bad = tmp_path / "tiny_agent" / "context" / "bad.py"
    bad.parent.mkdir(parents=True)
    (tmp_path / "tiny_agent" / "cli").mkdir()
    (tmp_path / "tiny_agent" / "cli" / "app.py").write_text("")
    bad.write_text("from tiny_agent.cli import app\nimport tiny_agent.agent.loop\nfrom tiny_agent.types import Usage\n")
    assert upward_imports(bad, tmp_path) == [
        "bad.py (context) imports tiny_agent.cli.app (cli)",
        "bad.py (context) imports tiny_agent.agent.loop (agent)",
    ]


def test_the_checker_catches_a_cycle_even_under_type_checking(tmp_path: Path) -> None:
    package = tmp_path / "tiny_agent" / "context"
    package.mkdir(parents=True)
    (package / "a.py").write_text("from tiny_agent.context import b\n")
    (package / "b.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from tiny_agent.context.a import X\n"
    )
    (package / "c.py").write_text("from tiny_agent.context import a\n")
    assert cycles(import_graph(tmp_path)) == [["tiny_agent.context.a", "tiny_agent.context.b"]]
