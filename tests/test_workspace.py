"""Workspace: confinement to the root, --protect, and the three file tools' answers to the model."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tiny_agent.errors import ConfigError
from tiny_agent.tools.toolbox import Toolbox, ToolFailure
from tiny_agent.tools.workspace import Workspace
from tiny_agent.types import ToolUseBlock

DEV = "apps/service-a/scripts/dev.mjs"
DEV_CONTENT = "// entry point: change the config, not this file\n"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "ws").mkdir()
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.txt").write_text("secret\n")
    return tmp_path / "ws"


@pytest.fixture
def ws(root: Path) -> Workspace:
    return Workspace(root)


@pytest.fixture
def monorepo(root: Path) -> Path:
    dev = root / DEV
    dev.parent.mkdir(parents=True)
    dev.write_text(DEV_CONTENT)
    (root / "apps/service-a/config.json").write_text("{}\n")
    return root


def run(ws: Workspace, name: str, **args: Any) -> tuple[str, bool]:
    result = Toolbox(ws.tools()).run(ToolUseBlock("call_1", name, args))
    return result.content, result.is_error


def tree(path: Path) -> dict[str, bytes]:
    return {str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}


# Configuration


def test_root_must_exist(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        Workspace(tmp_path / "missing")


def test_root_must_be_a_directory(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(ConfigError, match="is not a directory"):
        Workspace(tmp_path / "file")


def test_protect_pattern_outside_root_is_a_config_error(root: Path) -> None:
    with pytest.raises(ConfigError, match="outside the workspace"):
        Workspace(root, protect=["/etc/passwd"])


# Confinement


def test_traversal_is_refused(ws: Workspace, root: Path) -> None:
    with pytest.raises(ToolFailure) as exc:
        ws.read_file("../outside.txt")
    assert str(exc.value) == f"refused: '../outside.txt' is outside the workspace ({root}); use a path relative to it"
    with pytest.raises(ToolFailure, match="outside the workspace"):
        ws.write_file("../outside.txt", "x")
    assert not (root.parent / "outside.txt").exists()


def test_absolute_path_outside_is_refused(ws: Workspace, root: Path) -> None:
    secret = root.parent / "outside" / "secret.txt"
    with pytest.raises(ToolFailure, match="outside the workspace"):
        ws.read_file(str(secret))
    with pytest.raises(ToolFailure, match="outside the workspace"):
        ws.write_file(str(secret), "overwritten")
    with pytest.raises(ToolFailure, match="outside the workspace"):
        ws.write_file(str(root.parent / "new.txt"), "x")
    assert secret.read_text() == "secret\n"
    assert not (root.parent / "new.txt").exists()


def test_absolute_path_inside_is_allowed(ws: Workspace, root: Path) -> None:
    assert ws.write_file(str(root / "a.txt"), "hi") == f"wrote 2 bytes to {root / 'a.txt'} (created)"
    assert ws.read_file("a.txt") == "hi"


def test_empty_path_is_refused(ws: Workspace) -> None:
    with pytest.raises(ToolFailure, match="empty path"):
        ws.resolve("")
    assert run(ws, "write_file", path="", content="x")[1]


def test_symlink_to_file_outside_is_refused(ws: Workspace, root: Path) -> None:
    secret = root.parent / "outside" / "secret.txt"
    (root / "link.txt").symlink_to(secret)
    with pytest.raises(ToolFailure, match=re.escape("'link.txt' is outside the workspace")):
        ws.read_file("link.txt")
    with pytest.raises(ToolFailure, match="outside the workspace"):
        ws.write_file("link.txt", "overwritten")
    assert secret.read_text() == "secret\n"


def test_symlinked_directory_outside_is_refused(ws: Workspace, root: Path) -> None:
    outside = root.parent / "outside"
    (root / "linkdir").symlink_to(outside, target_is_directory=True)
    before = tree(outside)
    with pytest.raises(ToolFailure, match="outside the workspace"):
        ws.read_file("linkdir/secret.txt")
    with pytest.raises(ToolFailure, match="outside the workspace"):
        ws.write_file("linkdir/new.txt", "x")
    with pytest.raises(ToolFailure, match="outside the workspace"):
        ws.write_file("linkdir/sub/new.txt", "x")
    with pytest.raises(ToolFailure, match="outside the workspace"):
        ws.list_dir("linkdir")
    assert tree(outside) == before
    assert not (outside / "sub").exists()


def test_dangling_symlink_outside_is_refused(ws: Workspace, root: Path) -> None:
    target = root.parent / "outside" / "planted.txt"
    (root / "dangling").symlink_to(target)
    with pytest.raises(ToolFailure, match="outside the workspace"):
        ws.write_file("dangling", "x")
    assert not target.exists()


def test_symlink_loop_is_an_error_not_a_crash(ws: Workspace, root: Path) -> None:
    (root / "loop1").symlink_to(root / "loop2")
    (root / "loop2").symlink_to(root / "loop1")
    with pytest.raises(ToolFailure):
        ws.read_file("loop1/x")


@given(st.lists(st.sampled_from(["a", "b", "..", ".", ""]), max_size=8).map("/".join))
def test_resolve_never_returns_a_path_outside(confined: tuple[Workspace, Path], path: str) -> None:
    ws, root = confined
    try:
        resolved = ws.resolve(path)
    except ToolFailure:
        return
    assert resolved.is_relative_to(root)
    assert resolved == (root / path).resolve()


@pytest.fixture(scope="module")
def confined(tmp_path_factory: pytest.TempPathFactory) -> tuple[Workspace, Path]:
    base = tmp_path_factory.mktemp("property")
    root = base / "root"
    (root / "a" / "a").mkdir(parents=True)
    (root / "b").symlink_to(base, target_is_directory=True)
    (root / "a" / "b").symlink_to(root / "a", target_is_directory=True)
    return Workspace(root), root.resolve()


# --protect


def test_basename_pattern_protects_the_file_anywhere(monorepo: Path) -> None:
    ws = Workspace(monorepo, protect=["dev.mjs"])
    with pytest.raises(ToolFailure) as exc:
        ws.write_file(DEV, "rewritten")
    assert str(exc.value) == f"refused: {DEV} is protected (--protect dev.mjs); change something else"
    assert (monorepo / DEV).read_text() == DEV_CONTENT
    assert ws.read_file(DEV) == DEV_CONTENT
    assert ws.write_file("apps/service-a/config.json", '{"port": 1}\n').startswith("wrote 12 bytes")


def test_directory_pattern_protects_everything_under_it(monorepo: Path) -> None:
    for pattern in ("apps/service-a/scripts", "apps/service-a/scripts/", "apps/**", "scripts/"):
        ws = Workspace(monorepo, protect=[pattern])
        with pytest.raises(ToolFailure, match=re.escape(f"is protected (--protect {pattern})")):
            ws.write_file(DEV, "rewritten")
        with pytest.raises(ToolFailure, match="is protected"):
            ws.write_file("apps/service-a/scripts/new/file.mjs", "x")
        assert (monorepo / DEV).read_text() == DEV_CONTENT
        assert not (monorepo / "apps/service-a/scripts/new").exists()
    assert not Workspace(monorepo, protect=["apps/service-a/scripts"]).is_protected("scripts/x.mjs")


def test_protected_file_via_symlink_is_refused(monorepo: Path) -> None:
    (monorepo / "alias.mjs").symlink_to(monorepo / DEV)
    ws = Workspace(monorepo, protect=["apps/service-a/scripts/dev.mjs"])
    assert ws.is_protected("alias.mjs")
    with pytest.raises(ToolFailure, match=re.escape("refused: alias.mjs is protected")):
        ws.write_file("alias.mjs", "rewritten")
    assert (monorepo / DEV).read_text() == DEV_CONTENT


def test_protected_file_via_traversal_is_refused(monorepo: Path) -> None:
    ws = Workspace(monorepo, protect=["apps/service-a/scripts/dev.mjs"])
    with pytest.raises(ToolFailure, match="is protected"):
        ws.write_file("apps/../apps/service-a/scripts/./dev.mjs", "rewritten")
    assert (monorepo / DEV).read_text() == DEV_CONTENT


def test_protected_refusal_through_the_toolbox(monorepo: Path) -> None:
    ws = Workspace(monorepo, protect=["dev.mjs"])
    content, is_error = run(ws, "write_file", path=DEV, content="rewritten")
    assert is_error
    assert content == f"refused: {DEV} is protected (--protect dev.mjs); change something else"
    assert (monorepo / DEV).read_text() == DEV_CONTENT
    assert "Protected paths are refused: dev.mjs." in ws.tools()[1].description


# read_file


def test_binary_file(ws: Workspace, root: Path) -> None:
    (root / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    with pytest.raises(ToolFailure) as exc:
        ws.read_file("logo.png")
    assert str(exc.value) == "logo.png looks like a binary file (16 bytes); read_file only reads text"


def test_non_utf8_file(ws: Workspace, root: Path) -> None:
    """Latin-1 (and Windows-1252) text reads, with a note saying how; UTF-16 by its byte-order mark."""
    (root / "latin1.txt").write_bytes("café crème\n".encode("latin-1"))
    assert ws.read_file("latin1.txt") == "café crème\n[latin1.txt is not UTF-8: read as cp1252]"
    (root / "wide.txt").write_bytes("naïve\n".encode("utf-16"))
    assert ws.read_file("wide.txt") == "naïve\n[wide.txt is not UTF-8: read as utf-16]"
    (root / "bom.txt").write_bytes(b"\xef\xbb\xbfplain\n")
    assert ws.read_file("bom.txt") == "plain\n"


def test_a_file_name_that_is_not_utf8(ws: Workspace, root: Path) -> None:
    """list_dir shows its bytes escaped, and read_file takes the escaped name back."""
    (root / "sub").mkdir()
    with open(os.fsencode(root) + b"/sub/bad\xffname.txt", "wb") as out:
        out.write(b"inside\n")
    listing = ws.list_dir("sub")
    assert listing.startswith("bad\\xffname.txt  7 bytes  (name not UTF-8")
    assert ws.read_file("sub/bad\\xffname.txt") == "inside\n"
    assert "\\xff" not in json.dumps(ws.grammar("read_file") or {}), "no grammar offers a name it cannot spell"


def test_missing_file(ws: Workspace) -> None:
    with pytest.raises(ToolFailure) as exc:
        ws.read_file("nope.txt")
    assert str(exc.value) == "no such file: nope.txt"


def test_directory_passed_to_read_file(ws: Workspace, root: Path) -> None:
    (root / "src").mkdir()
    with pytest.raises(ToolFailure) as exc:
        ws.read_file("src")
    assert str(exc.value) == "src is a directory; use list_dir"


def test_output_is_cut_with_the_exact_count(root: Path) -> None:
    content = "".join(f"line {n:03d}: {'x' * 20}\n" for n in range(1, 51))  # 50 lines of 31 characters
    (root / "long.txt").write_text(content)
    ws = Workspace(root, max_output_chars=100)
    out = ws.read_file("long.txt")
    left = 50 * 31 - 100
    assert out == (
        content[:100]
        + f"\n[... cut: {left} more characters not shown (of 1550); read again with start_line=4 to see more]"
    )
    assert ws.read_file("long.txt", start_line=4, max_lines=2) == content[93:155] + (
        "[... 45 more lines; read again with start_line=6]"
    )


def test_start_line_past_the_end(ws: Workspace, root: Path) -> None:
    (root / "short.txt").write_text("one\ntwo\n")
    with pytest.raises(ToolFailure, match="has 2 lines; start_line 3 is past the end"):
        ws.read_file("short.txt", start_line=3)


# write_file


def test_write_then_read_round_trip(ws: Workspace, root: Path) -> None:
    text = "héllo\r\nwörld ✓\nno trailing newline"
    assert ws.write_file("deep/er/note.txt", text) == f"wrote {len(text.encode())} bytes to deep/er/note.txt (created)"
    assert ws.read_file("deep/er/note.txt") == text
    assert (root / "deep/er/note.txt").read_bytes() == text.encode()
    assert ws.write_file("deep/er/note.txt", "short") == (
        f"wrote 5 bytes to deep/er/note.txt (overwritten; it had {len(text.encode())} bytes)"
    )
    assert ws.read_file("deep/er/note.txt") == "short"


def test_write_over_a_directory_is_refused(ws: Workspace, root: Path) -> None:
    (root / "src").mkdir()
    with pytest.raises(ToolFailure, match="src is a directory"):
        ws.write_file("src", "x")
    assert (root / "src").is_dir()


def test_write_under_a_file_is_refused(ws: Workspace, root: Path) -> None:
    (root / "notes").write_text("x")
    with pytest.raises(ToolFailure, match="notes is a file, not a directory"):
        ws.write_file("notes/today.txt", "y")
    assert (root / "notes").read_text() == "x"


def test_write_with_wrong_argument_type(ws: Workspace, root: Path) -> None:
    content, is_error = run(ws, "write_file", path=5, content="x")
    assert is_error
    assert content.startswith("invalid arguments for write_file:")
    assert "path: 5 is not of type 'string'" in content
    assert tree(root) == {}


def test_write_with_missing_argument(ws: Workspace, root: Path) -> None:
    content, is_error = run(ws, "write_file", path="a.txt")
    assert is_error
    assert "content: 'content' is a required property" in content
    assert tree(root) == {}


def test_write_with_extra_argument(ws: Workspace, root: Path) -> None:
    content, is_error = run(ws, "write_file", path="a.txt", content="x", append=True)
    assert is_error
    assert "append: unexpected argument (allowed: path, content)" in content
    assert tree(root) == {}


# list_dir


def test_list_dir_content(ws: Workspace, root: Path) -> None:
    (root / "src").mkdir()
    (root / "b.txt").write_text("12345")
    (root / "A.md").write_text("")
    (root / "src" / "main.py").write_text("print()\n")
    assert ws.list_dir() == "A.md  0 bytes\nb.txt  5 bytes\nsrc/"
    assert run(ws, "list_dir") == ("A.md  0 bytes\nb.txt  5 bytes\nsrc/", False)
    assert ws.list_dir("src") == "main.py  8 bytes"


def test_list_dir_marks_protected_and_symlinks(monorepo: Path) -> None:
    (monorepo / "alias.mjs").symlink_to(monorepo / DEV)
    (monorepo / "escape").symlink_to(monorepo.parent / "outside", target_is_directory=True)
    ws = Workspace(monorepo, protect=["dev.mjs"])
    size = len(DEV_CONTENT)
    assert ws.list_dir() == (
        f"alias.mjs  {size} bytes  (symlink to {DEV})  (protected)\n"
        "apps/\n"
        "escape  (symlink pointing outside the workspace)"
    )
    assert ws.list_dir("apps/service-a/scripts") == f"dev.mjs  {size} bytes  (protected)"


def test_list_dir_missing_and_file(ws: Workspace, root: Path) -> None:
    (root / "a.txt").write_text("x")
    with pytest.raises(ToolFailure, match="no such directory: nope"):
        ws.list_dir("nope")
    with pytest.raises(ToolFailure, match=re.escape("a.txt is a file, not a directory; use read_file")):
        ws.list_dir("a.txt")


def test_list_dir_is_cut(root: Path) -> None:
    for n in range(20):
        (root / f"file{n:02d}.txt").write_text("x" * n)
    lines = [f"file{n:02d}.txt  {n} bytes" for n in range(20)]
    full = "\n".join(lines)
    ws = Workspace(root, max_output_chars=100)
    shown = "\n".join(lines[:5])  # each line is 19 characters: 5 lines and 4 newlines fit in 100
    assert len(shown) <= 100 < len("\n".join(lines[:6]))
    assert ws.list_dir() == (
        f"{shown}\n[... cut: {len(full) - len(shown)} more characters not shown (of {len(full)}); "
        "15 of 20 entries left out]"
    )


# Tool specs


def test_tool_schemas_are_strict(ws: Workspace) -> None:
    tools = ws.tools()
    assert [t.name for t in tools] == ["read_file", "write_file", "list_dir", "edit_file", "search"]
    for tool in tools:
        assert tool.input_schema["type"] == "object"
        assert tool.input_schema["additionalProperties"] is False
    for tool in tools[:3]:
        assert "relative to the workspace" in tool.description
    assert tools[0].input_schema["required"] == ["path"]
    assert tools[1].input_schema["required"] == ["path", "content"]
    assert tools[2].input_schema["required"] == []
