"""Imports only go downwards: cli -> agent -> context/observe -> providers/store -> types/errors."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "tiny_agent"

RANK = {
    "types": 0,
    "errors": 0,
    "redaction": 0,
    "providers": 1,
    "store": 1,
    "context": 2,
    "observe": 2,
    "agent": 3,
    "cli": 4,
    "testing": 4,
}
"""A module may import modules of its own rank or lower; ``testing`` (fakes for tests) may use every layer."""


def layer(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != "tiny_agent" or len(parts) < 2:
        return None
    return parts[1]


def imports_of(path: Path) -> list[str]:
    tree = ast.parse(path.read_text())
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append(node.module)
    return found


MODULES = sorted(p for p in SRC.rglob("*.py") if p.name not in ("__init__.py", "__main__.py"))


def test_every_module_has_a_layer() -> None:
    for path in MODULES:
        name = "tiny_agent." + ".".join(path.relative_to(SRC).with_suffix("").parts)
        assert layer(name) in RANK, f"{name} is in no layer; add it to RANK"


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(SRC)))
def test_no_upward_import(path: Path) -> None:
    own = layer("tiny_agent." + ".".join(path.relative_to(SRC).with_suffix("").parts))
    assert own is not None
    for imported in imports_of(path):
        other = layer(imported)
        if other is not None:
            assert RANK[other] <= RANK[own], f"{path.name} ({own}) imports {imported} ({other}): an upward import"


def test_the_checker_catches_an_upward_import(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("from tiny_agent.cli import main\nimport tiny_agent.agent.loop\n")
    assert [layer(m) for m in imports_of(bad)] == ["cli", "agent"]
    assert RANK["cli"] > RANK["context"]
