"""Workspace-aware grammars (issue 10, workspace half): the narrowed schemas admit what can succeed
and nothing the tools refuse; a workspace over the bound falls back to free strings."""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from tiny_agent.tools.grammar import SKIPPED_FOLDERS, Limits, new_path_pattern
from tiny_agent.tools.guards import PathRule
from tiny_agent.tools.toolbox import Toolbox, ToolFailure
from tiny_agent.tools.workspace import Workspace


def valid(schema: dict[str, Any] | None, **args: Any) -> bool:
    assert schema is not None
    return Draft202012Validator(schema).is_valid(args)


def path_schema(ws: Workspace, tool: str) -> dict[str, Any]:
    schema = ws.grammar(tool)
    assert schema is not None, f"{tool} has no grammar"
    Draft202012Validator.check_schema(schema)
    return schema


def succeeds(fn: Any, *args: Any) -> bool:
    try:
        fn(*args)
    except ToolFailure:
        return False
    return True


def oracle(root: Path) -> tuple[list[str], list[str]]:
    """Files and folders by the documented rule, found without the grammar's code: os.walk, hidden
    folders and SKIPPED_FOLDERS not entered, symlinked folders listed but not entered."""
    files: list[str] = []
    folders: list[str] = ["."]
    for current, dirnames, filenames in os.walk(root):
        rel = Path(current).relative_to(root)
        for name in list(dirnames):
            path = (rel / name).as_posix()
            if (Path(current) / name).is_symlink():
                dirnames.remove(name)
                if not name.startswith("."):
                    folders.append(path)
            elif name.startswith(".") or name in SKIPPED_FOLDERS:
                dirnames.remove(name)
            else:
                folders.append(path)
        files.extend((rel / name).as_posix() for name in filenames)
    return files, folders


def llama_cpp_accepts(pattern: str) -> bool:
    """The checks of llama.cpp's ``_pattern_to_rule`` (common/json-schema-to-grammar.cpp, the version
    the [local] extra installs): anchored, groups only ``(`` or ``(?:``, no inner anchor, escapes only
    those GBNF knows, nesting at most 100. A pattern it rejects becomes "any string" there."""

    def escape(i: int) -> int:
        kind = pattern[i + 1] if i + 1 < len(pattern) else ""
        digits = {"x": 2, "u": 4, "U": 8}.get(kind)
        if digits is None:
            return 2 if kind and kind in 'trn\\"[]-' else 0
        hexa = pattern[i + 2 : i + 2 + digits]
        return 2 + digits if len(hexa) == digits and all(c in "0123456789abcdefABCDEF" for c in hexa) else 0

    if len(pattern) < 2 or pattern[0] != "^" or pattern[-1] != "$":
        return False
    pattern = pattern[1:-1]
    i = depth = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "(":
            i += 1
            if pattern.startswith("?", i):
                if not pattern.startswith("?:", i):
                    return False
                i += 2
            depth += 1
            if depth > 100:
                return False
        elif c == ")":
            depth -= 1
            i += 1
            if depth < 0:
                return False
        elif c in "^${}":
            return False  # no inner anchor; this project emits no {m,n}
        elif c == "[":
            i += 1
            while i < len(pattern) and pattern[i] != "]":
                step = escape(i) if pattern[i] == "\\" else 1
                if step == 0:
                    return False
                i += step
            if i >= len(pattern):
                return False
            i += 1
        elif c == "\\":
            step = 2 if pattern[i + 1 : i + 2] in set("^$.[]()|{}*+?") else escape(i)
            if step == 0:
                return False
            i += step
        else:
            i += 1
    return depth == 0


def test_the_llama_cpp_check_rejects_what_llama_cpp_rejects() -> None:
    for bad in ["a", "^a", "^(?=a)b$", "^(?<x>a)$", "^a^b$", "^\\d+$", "^[\\w]$", "^(a$", "^\\$"]:
        assert not llama_cpp_accepts(bad), bad
    assert llama_cpp_accepts('^(?:[aA]|[^/\\\\"\\x00-\\x1f\\u017f.])*\\x2e(b)?$')


# A small workspace by hand


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    for rel, data in {
        "README.md": b"# demo\n",
        "src/main.py": b"print('hi')\n",
        "src/util/strings.py": b"",
        "docs/guide.md": b"guide\n",
        ".gitignore": b"*.pyc\n",
        ".env": b"TOKEN=secret\n",
        ".env.example": b"TOKEN=\n",
        "certs/server.pem": b"PEM\n",
        "logo.png": b"\x89PNG\r\n\x1a\n\x00\x00",
        ".git/config": b"[core]\n",
        ".git/hooks/pre-commit.sample": b"#!/bin/sh\n",
        ".github/workflows/ci.yml": b"on: push\n",
        "node_modules/left-pad/index.js": b"module.exports = 1\n",
        "lefthook.yml": b"pre-commit: {}\n",
    }.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    (tmp_path / "outside.txt").write_text("outside\n")
    (root / "escape.txt").symlink_to(tmp_path / "outside.txt")
    (root / "token.txt").symlink_to(root / ".env")
    (root / "guide-link.md").symlink_to(root / "docs" / "guide.md")
    (root / "hooks").symlink_to(root / ".git" / "hooks")
    (root / "docs-link").symlink_to(root / "docs")
    return root


def test_read_file_offers_exactly_the_readable_files(project: Path) -> None:
    schema = path_schema(Workspace(project), "read_file")
    assert schema["required"] == ["path"]
    assert schema["properties"]["path"]["enum"] == [
        ".env.example",
        ".gitignore",
        "README.md",
        "docs/guide.md",
        "guide-link.md",
        "lefthook.yml",
        "src/main.py",
        "src/util/strings.py",
    ]
    assert set(schema["properties"]) == {"path", "start_line", "max_lines"}
    assert schema["additionalProperties"] is False


def test_allowing_a_secret_offers_it(project: Path) -> None:
    enum = path_schema(Workspace(project, allow_read=[".env", "*.pem"]), "read_file")["properties"]["path"]["enum"]
    assert {".env", "token.txt", "certs/server.pem"} <= set(enum)


def test_list_dir_offers_the_folders(project: Path) -> None:
    schema = path_schema(Workspace(project), "list_dir")
    assert schema["required"] == ["path"]
    assert schema["properties"]["path"]["enum"] == [".", "certs", "docs", "docs-link", "hooks", "src", "src/util"]


def test_write_file_admits_new_and_existing_paths_but_nothing_protected_or_outside(project: Path) -> None:
    ws = Workspace(project, protect=["dev.mjs", "apps/service-a/scripts"])
    schema = path_schema(ws, "write_file")
    assert schema["required"] == ["path", "content"]
    enum, new = schema["properties"]["path"]["anyOf"]
    # Existing files the pattern leaves out (hidden, or symlinks) but writing may change:
    assert enum["enum"] == [".env", ".env.example", ".gitignore", "guide-link.md", "token.txt"]
    assert llama_cpp_accepts(new["pattern"])
    for path in ["notes.txt", "src/new.py", "a/b/c/d.md", "README.md", ".gitignore", ".env", "apps.md"]:
        assert valid(schema, path=path, content="x"), path
        assert not ws.is_protected(path)
    # Smaller than the rules, on purpose: an anchored rule keeps new paths out of its whole first folder.
    assert not ws.is_protected("apps/web/x.js")
    assert not valid(schema, path="apps/web/x.js", content="x")
    for path in [
        ".git/hooks/pre-commit",
        ".git/config",
        "hooks/pre-commit",  # a symlink into .git
        "src/../.git/config",
        "../outside.txt",
        "escape.txt",  # a symlink outside
        "/etc/passwd",
        str(project / "x.txt"),  # absolute, even inside
        "lefthook.yml",
        "LEFTHOOK.yml",
        "dev.mjs",
        "src/DEV.MJS",
        "apps/service-a/scripts/dev.sh",
        "node_modules/left-pad/index.js",
        ".husky/pre-commit",
        "newdir/",
        "a//b",
        "",
        'quote".txt',
        "back\\slash",
    ]:
        assert not valid(schema, path=path, content="x"), path


def test_an_unexpressible_rule_leaves_only_existing_files(project: Path) -> None:
    ws = Workspace(project, protect=["*.md"])
    schema = path_schema(ws, "write_file")
    enum = schema["properties"]["path"]["enum"]
    assert "pattern" not in schema["properties"]["path"]
    assert "src/main.py" in enum and ".env" in enum
    assert not any(path.endswith(".md") for path in enum)
    assert not valid(schema, path="new.txt", content="x")


# Random workspaces

NAMES = ["a", "B", "src", ".hidden", ".git", "hooks", ".env", ".env.example", "id_rsa", "k.pem", "x.bin", "Dev.mjs"]
names = st.sampled_from(NAMES)
rel_paths = st.lists(names, min_size=1, max_size=3).map("/".join)
operations = st.lists(
    st.tuples(st.sampled_from(["text", "binary", "dir", "link", "outside-link"]), rel_paths, rel_paths),
    min_size=1,
    max_size=14,
)


def build(base: Path, ops: list[tuple[str, str, str]]) -> Path:
    root = base / "ws"
    root.mkdir()
    (base / "outside").mkdir()
    (base / "outside" / "o.txt").write_text("outside\n")
    for kind, rel, other in ops:
        path = root / rel
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            if kind == "text":
                path.write_text(f"text of {rel}\n")
            elif kind == "binary":
                path.write_bytes(b"\x00\x01binary")
            elif kind == "dir":
                path.mkdir(exist_ok=True)
            elif kind == "link":
                path.symlink_to(root / other)
            else:
                path.symlink_to(base / "outside" / "o.txt")
        except OSError:
            pass  # a name already taken by a file, a folder or a link: skip the operation
    return root


@contextlib.contextmanager
def random_workspace(ops: list[tuple[str, str, str]]) -> Iterator[Path]:
    with tempfile.TemporaryDirectory() as folder:
        yield build(Path(folder), ops)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=operations, protect=st.lists(st.sampled_from(["dev.mjs", "src/a", "b*", "hooks"]), max_size=2))
def test_random_workspaces_read_and_list(ops: list[tuple[str, str, str]], protect: list[str]) -> None:
    with random_workspace(ops) as root:
        ws = Workspace(root, protect=protect)
        files, folders = oracle(root)
        read = ws.grammar("read_file")
        readable = [f for f in files if succeeds(ws.read_file, f)]
        if read is None:
            assert not readable
        else:
            enum = read["properties"]["path"]["enum"]
            assert set(enum) == set(readable), "every readable file offered, nothing else"
            assert all(valid(read, path=f) for f in readable)
        listing = path_schema(ws, "list_dir")
        listable = [f for f in folders if succeeds(ws.list_dir, f)]
        assert set(listing["properties"]["path"]["enum"]) == set(listable)


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    ops=operations,
    protect=st.lists(st.sampled_from(["dev.mjs", "src/a", "b*", "hooks", "**/x.bin"]), max_size=2),
    default_protect=st.booleans(),
    data=st.data(),
)
def test_random_workspaces_write(
    ops: list[tuple[str, str, str]], protect: list[str], default_protect: bool, data: st.DataObject
) -> None:
    with random_workspace(ops) as root:
        ws = Workspace(root, protect=protect, default_protect=default_protect)
        schema = ws.grammar("write_file")
        assert schema is not None
        files, _ = oracle(root)
        for rel in files:
            if valid(schema, path=rel, content=""):
                assert not ws.is_protected(rel), rel
            elif not _through_link(root, rel):
                assert ws.is_protected(rel), f"{rel} is writable but not offered"
        pattern = schema["properties"]["path"].get("pattern") or next(
            (o["pattern"] for o in schema["properties"]["path"].get("anyOf", []) if "pattern" in o), None
        )
        if pattern is None:
            return
        assert llama_cpp_accepts(pattern)
        admitted = _PATHS.setdefault(pattern, st.from_regex(pattern, fullmatch=True))
        for _ in range(5):
            path = data.draw(admitted, label="admitted path")
            try:
                target = ws.resolve(path)
            except ToolFailure as exc:
                assert "longer than 255 bytes" in str(exc), path
                continue
            assert target.is_relative_to(ws.root)
            assert not ws.is_protected(path), path


_PATHS: dict[str, st.SearchStrategy[str]] = {}


def _through_link(root: Path, rel: str) -> bool:
    parts = Path(rel).parts
    return any((root.joinpath(*parts[: i + 1])).is_symlink() for i in range(len(parts)))


# The pattern on its own


@pytest.mark.parametrize(
    ("globs", "stops", "admitted", "refused"),
    [
        ([], [], ["a", "a/b.txt", "Makefile", "x y/z"], ["", "/a", "a/", ".a", "a/.b", "..", "a/../b", "a//b"]),
        (
            ["dev.mjs"],
            [],
            ["dev.mjsx", "de", "dev.mj", "a/dev.js"],
            ["dev.mjs", "a/DEV.MJS", "dev.mjs/x", "Dev.MJS"],
        ),
        (
            ["lefthook.*"],
            [],
            ["lefthook", "lefthookyml", "a/lefthoo"],
            ["lefthook.yml", "a/LEFTHOOK.toml", "lefthook./x", "lefthoo\u212a.yml"],
        ),
        (
            ["apps/service-a/scripts"],
            [],
            ["src/apps/x", "app", "appsx/y"],
            ["apps/x", "APPS", "apps/service-a/scripts"],
        ),
        (["src/*.py"], [], ["a/src/x.py", "srcs/x.py"], ["src/x.py", "src/x.txt", "src"]),
        (["**/dist/x"], [], ["a/dis/t"], ["dist/x", "a/dist/y"]),
        ([], ["link"], ["links", "a/lin"], ["link", "a/link/b", "LINK"]),
        (["s*"], [], ["a", "x/a"], ["s", "src", "x/\u017frc", "S"]),
        (["i*"], [], ["a"], ["\u0131x", "I"]),
        ([], [], ["a b", "a/b c"], [" ", "  ", "\u3000", "\xa0", "a/ "]),
    ],
)
def test_the_new_path_pattern(globs: list[str], stops: list[str], admitted: list[str], refused: list[str]) -> None:
    rules = [PathRule.parse(g, Path("/r"), flag="--protect") for g in globs]
    pattern = new_path_pattern(rules, stops)
    assert pattern is not None and pattern.startswith("^") and pattern.endswith("$")
    assert llama_cpp_accepts(pattern)
    compiled = re.compile(pattern)
    for path in admitted:
        assert compiled.fullmatch(path), path
        assert not any(rule.matches(PurePosixPath(path)) for rule in rules)
    for path in refused:
        assert not compiled.fullmatch(path), path


@pytest.mark.parametrize("glob", ["*.lock", "*/src", "[ab]", "?x", "*/x", "a*b", "**/*.py"])
def test_a_glob_without_a_sound_pattern_gives_none(glob: str) -> None:
    assert new_path_pattern([PathRule.parse(glob, Path("/r"), flag="--protect")], []) is None


def test_a_non_ascii_name_gives_none() -> None:
    assert new_path_pattern([PathRule.parse("café", Path("/r"), flag="--protect")], []) is None


def test_a_name_too_deep_for_llama_cpp_gives_none() -> None:
    assert new_path_pattern([PathRule.parse("x" * 80, Path("/r"), flag="--protect")], []) is None
    assert new_path_pattern([PathRule.parse("x" * 40, Path("/r"), flag="--protect")], []) is not None


# Bounds


def test_a_workspace_over_the_walk_bound_falls_back_to_free_strings(tmp_path: Path) -> None:
    for n in range(30):
        (tmp_path / f"f{n:02d}.txt").write_text("x")
    small = Limits(max_entries=29)
    ws = Workspace(tmp_path, grammar_limits=small)
    assert [ws.grammar(t) for t in ("read_file", "write_file", "list_dir")] == [None, None, None]
    assert Toolbox(ws.tools()).grammar() == {}
    assert ws.paths() is None
    roomy = Workspace(tmp_path, grammar_limits=Limits(max_entries=30))
    assert len(path_schema(roomy, "read_file")["properties"]["path"]["enum"]) == 30
    assert set(Toolbox(roomy.tools()).grammar()) == {"read_file", "write_file", "list_dir"}


def test_the_default_bound_stops_the_walk(tmp_path: Path) -> None:
    for n in range(Limits().max_entries + 1):
        (tmp_path / f"{n}").write_text("")
    assert Workspace(tmp_path).grammar("list_dir") is None


def test_an_enum_over_the_size_bound_falls_back(tmp_path: Path) -> None:
    for n in range(5):
        (tmp_path / f"file-{n}.txt").write_text("x")
    assert Workspace(tmp_path, grammar_limits=Limits(max_paths=4)).grammar("read_file") is None
    assert Workspace(tmp_path, grammar_limits=Limits(max_paths=5)).grammar("read_file") is not None
    chars = 5 * len("file-0.txt")
    assert Workspace(tmp_path, grammar_limits=Limits(max_chars=chars - 1)).grammar("read_file") is None
    assert Workspace(tmp_path, grammar_limits=Limits(max_chars=chars)).grammar("read_file") is not None


def test_no_file_to_offer_gives_none(tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("A=1\n")
    ws = Workspace(tmp_path)
    assert ws.grammar("read_file") is None
    assert path_schema(ws, "list_dir")["properties"]["path"]["enum"] == ["."]


def test_tools_without_grammar(project: Path) -> None:
    assert Toolbox(Workspace(project).tools(grammar=False)).grammar() == {}
    assert Workspace(project).grammar("no_such_tool") is None
