"""The documentation holds together: README.md is short and names the two commands, every relative
link in README.md, docs/ and benchmarks/README.md reaches a file (and the heading its anchor names),
and every ``tiny_agent`` import the Python examples show works."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
PAGES = sorted([README, ROOT / "benchmarks" / "README.md", *(ROOT / "docs").glob("*.md")])
README_LIMIT = 300

FENCE = re.compile(r"^```.*?^```", re.M | re.S)
INLINE_CODE = re.compile(r"`[^`\n]*`")
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
PYTHON_BLOCK = re.compile(r"^```python\n(.*?)^```", re.M | re.S)


def prose(text: str) -> str:
    """The text outside code blocks and inline code, where a link is a link."""
    return INLINE_CODE.sub("", FENCE.sub("", text))


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading: its text lowercased, punctuation dropped, spaces as hyphens."""
    text = INLINE_CODE.sub(lambda m: m[0].strip("`"), heading).lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    """The anchors of a page's headings, a repeated one numbered as GitHub numbers it."""
    found: set[str] = set()
    for line in FENCE.sub("", page.read_text()).splitlines():
        if match := re.match(r"#{1,6} (.+)", line):
            base = slug(match[1].strip())
            name, n = base, 0
            while name in found:
                n += 1
                name = f"{base}-{n}"
            found.add(name)
    return found


def broken_links(page: Path, root: Path = ROOT) -> list[str]:
    """Each relative link of ``page`` that reaches no file, or no heading of the file, one line each."""
    problems = []
    for target in LINK.findall(prose(page.read_text())):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto:: not a file of the repository
            continue
        path, _, anchor = target.partition("#")
        resolved = (page.parent / path).resolve() if path else page
        shown = f"{page.relative_to(root)}: ({target})"
        where = resolved.relative_to(root) if resolved.is_relative_to(root) else resolved
        if not resolved.exists():
            problems.append(f"{shown}: no file {where}")
        elif anchor and resolved.suffix == ".md" and anchor not in anchors(resolved):
            problems.append(f"{shown}: {where} has no heading whose anchor is #{anchor}")
    return problems


def test_the_readme_is_short() -> None:
    lines = len(README.read_text().splitlines())
    assert lines <= README_LIMIT, f"README.md has {lines} lines; at most {README_LIMIT}: move the rest to docs/"


def test_the_readme_gives_the_two_commands_and_they_exist() -> None:
    text = README.read_text()
    for command in ("scripts/demo", "scripts/test"):
        assert re.search(rf"^{command} ", text, re.M), f"README.md does not give the command {command}"
        assert os.access(ROOT / command, os.X_OK), f"{command} is not an executable file"


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(ROOT)))
def test_every_relative_link_resolves(page: Path) -> None:
    problems = broken_links(page)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(ROOT)))
def test_every_tiny_agent_import_the_examples_show_works(page: Path) -> None:
    problems = []
    for number, block in enumerate(PYTHON_BLOCK.findall(page.read_text()), 1):
        try:
            tree = ast.parse(block)
        except SyntaxError as exc:
            problems.append(f"{page.relative_to(ROOT)}: Python example {number} does not parse: {exc}")
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "tiny_agent":
                module = importlib.import_module(node.module)
                problems += [
                    f"{page.relative_to(ROOT)}: example {number}: {node.module} has no {alias.name}"
                    for alias in node.names
                    if not hasattr(module, alias.name)
                    and importlib.util.find_spec(f"{node.module}.{alias.name}") is None
                ]
    assert not problems, "\n".join(problems)


def test_the_link_check_finds_a_missing_file_and_a_missing_heading(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "README.md").write_text("# tiny\n\n## Two commands\n")
    page = tmp_path / "docs" / "page.md"
    page.write_text(
        "# A page\n\n[here](#a-page) [up](../README.md#two-commands) [gone](nowhere.md)\n"
        "[no heading](../README.md#not-there) `[code](x.md)`\n\n```\n[fenced](y.md)\n```\n"
    )
    assert broken_links(page, root=tmp_path) == [
        "docs/page.md: (nowhere.md): no file docs/nowhere.md",
        "docs/page.md: (../README.md#not-there): README.md has no heading whose anchor is #not-there",
    ]


def test_slugs_follow_githubs_rule() -> None:
    assert slug("What moved where (2026-12-01)") == "what-moved-where-2026-12-01"
    assert slug("Python functions: `@tool`") == "python-functions-tool"
    assert slug("GPT-5.6, through the CLI") == "gpt-56-through-the-cli"
    assert slug("read_file on a large file") == "read_file-on-a-large-file"
    assert slug("A turn's engine work") == "a-turns-engine-work"


def test_every_command_and_flag_is_in_the_configuration_page() -> None:
    import click

    from tiny_agent.cli.app import _register_commands, app

    _register_commands()
    page = (ROOT / "docs" / "configuration.md").read_text()
    rows = [line.split(" | ")[0] for line in README.read_text().splitlines() if line.startswith("| `tiny-agent ")]

    def commands(group: click.Group, prefix: str) -> list[tuple[str, click.Command]]:
        found = []
        for name, command in sorted(group.commands.items()):
            path = f"{prefix} {name}"
            found += commands(command, path) if isinstance(command, click.Group) else [(path, command)]
        return found

    missing = []
    for path, command in commands(app, "tiny-agent"):
        if f"### `{path}" not in page:
            missing.append(f"docs/configuration.md has no '### `{path}`' section")
        words = path.split()[1:]
        if not any(all(re.search(rf"\b{word}\b", row) for word in words) for row in rows):
            missing.append(f"README.md's command table has no row for `{path}`")
        missing += [
            f"docs/configuration.md does not give {option.opts[0]} of `{path}`"
            for option in command.params
            if isinstance(option, click.Option) and option.name != "help" and f"`{option.opts[0]}`" not in page
        ]
    assert not missing, "\n".join(missing)


def test_the_context_engine_example_of_the_library_page_runs_as_printed() -> None:
    blocks = PYTHON_BLOCK.findall((ROOT / "docs" / "library.md").read_text())
    example = next(block for block in blocks if "ScriptedProvider" in block)
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    done = subprocess.run(
        [sys.executable, "-W", "error::DeprecationWarning", "-c", example], env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr


def test_the_architecture_table_of_imports_is_true() -> None:
    from tests.test_layers import PACKAGE, RANK, SRC, imports_of, layer, module_name

    actual: dict[str, set[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        own = layer(module_name(path, SRC))
        if own in RANK and own != "_moved":
            found = {other for imported in imports_of(path, SRC) if (other := layer(imported)) in RANK}
            actual.setdefault(own, set()).update(found - {own, "_moved"})
    table = (ROOT / "docs" / "ARCHITECTURE.md").read_text()
    rows = dict(re.findall(r"^\| ((?:`\w+`(?:, )?)+) \(\d\) \| (.+) \|$", table, re.M))
    stated: dict[str, set[str]] = {}
    ranks: dict[str, int] = {}
    for rooms, imports in rows.items():
        for room in re.findall(r"`(\w+)`", rooms):
            stated[room] = set() if imports.startswith("nothing") else set(imports.split(", "))
    for room, rank in re.findall(r"^\| `(\w+)`[^|]* \((\d)\) \|", table, re.M):
        ranks[room] = int(rank)
    problems = [
        f"docs/ARCHITECTURE.md: the row of `{room}` should read: {', '.join(sorted(actual[room])) or 'nothing'}"
        for room in sorted(actual)
        if stated.get(room) != actual[room]
    ]
    problems += [
        f"docs/ARCHITECTURE.md gives `{room}` rank {ranks.get(room)}; tests/test_layers.py gives {RANK[room]}"
        for room in sorted(actual)
        if room in ranks and ranks[room] != RANK[room]
    ]
    assert not problems, "\n".join(problems)


def test_the_library_page_says_where_the_notes_before_the_first_turn_are() -> None:
    """The CLI prints them under its header; a library caller finds them on the run, not in on_event."""
    from tiny_agent.agent.run import Run

    page = (ROOT / "docs" / "library.md").read_text()
    assert {"notes", "hints"} <= set(Run.__dataclass_fields__)
    assert "`run.notes`" in page and "`run.hints`" in page and "not events" in page
