"""Every package starts with a map: its ``__init__.py`` docstring names each of its modules and
subpackages in one line (``- ``name``: what it holds``), and names nothing that is not there."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGES = sorted(init.parent for init in (SRC / "tiny_agent").rglob("__init__.py"))

MAP_LINE = re.compile(r"^- ``([A-Za-z_][A-Za-z0-9_]*)``: \S")
"""One line of a map: ``- ``loop``: the agent loop: ...``."""


def members(package: Path) -> set[str]:
    """The modules and subpackages in a package's folder."""
    modules = {path.stem for path in package.glob("*.py") if path.name != "__init__.py"}
    subpackages = {path.parent.name for path in package.glob("*/__init__.py")}
    return modules | subpackages


def mapped(package: Path) -> list[str]:
    """The names a package's docstring map gives, in its order."""
    docstring = ast.get_docstring(ast.parse((package / "__init__.py").read_text())) or ""
    return [match[1] for line in docstring.splitlines() if (match := MAP_LINE.match(line.strip()))]


def dotted(package: Path, root: Path = SRC) -> str:
    return ".".join(package.relative_to(root).parts)


def map_problems(package: Path, root: Path = SRC) -> list[str]:
    """What is wrong with one package's map, one sentence each, naming the file to edit."""
    init = (package / "__init__.py").relative_to(root.parent)
    name_of_package = dotted(package, root)
    names = mapped(package)
    present = members(package)
    problems = [
        f"{init}: the map does not name the module {name!r} of {name_of_package}; add the line "
        f"'- ``{name}``: <what it holds>' to the docstring"
        for name in sorted(present - set(names))
    ]
    problems += [
        f"{init}: the map names {name!r}, which is not a module or subpackage of {name_of_package}; remove its line"
        for name in sorted(set(names) - present)
    ]
    problems += [f"{init}: the map names {name!r} twice" for name in sorted({n for n in names if names.count(n) > 1})]
    return problems


def test_every_package_is_found() -> None:
    assert {dotted(package) for package in PACKAGES} >= {
        "tiny_agent",
        "tiny_agent.agent",
        "tiny_agent.cli",
        "tiny_agent.context",
        "tiny_agent.context.shrink",
        "tiny_agent.providers.anthropic",
        "tiny_agent.tools.mcp",
    }


@pytest.mark.parametrize("package", PACKAGES, ids=dotted)
def test_the_package_map_names_each_module_once_and_nothing_else(package: Path) -> None:
    problems = map_problems(package)
    assert not problems, "\n".join(problems)


def test_a_missing_or_stale_line_is_named_with_its_file(tmp_path: Path) -> None:
    package = tmp_path / "src" / "tiny_agent" / "room"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text('"""A room.\n\n- ``kept``: here.\n- ``gone``: not here.\n"""\n')
    (package / "kept.py").write_text("")
    (package / "new.py").write_text("")
    (package / "sub").mkdir()
    (package / "sub" / "__init__.py").write_text("")
    assert map_problems(package, root=tmp_path / "src") == [
        "src/tiny_agent/room/__init__.py: the map does not name the module 'new' of tiny_agent.room; "
        "add the line '- ``new``: <what it holds>' to the docstring",
        "src/tiny_agent/room/__init__.py: the map does not name the module 'sub' of tiny_agent.room; "
        "add the line '- ``sub``: <what it holds>' to the docstring",
        "src/tiny_agent/room/__init__.py: the map names 'gone', which is not a module or subpackage of "
        "tiny_agent.room; remove its line",
    ]
