"""Issue 6, tool half: bad input and failing disks give the model one clean error, never a crash or a
half-written file."""

from __future__ import annotations

import errno
import logging
import os
import re
import stat
from pathlib import Path
from typing import Any

import pytest

from tiny_agent.errors import ConfigError
from tiny_agent.tools.toolbox import Toolbox, ToolFailure
from tiny_agent.tools.workspace import Workspace
from tiny_agent.types import ToolUseBlock

LONG = "a" * 256
"""One byte over NAME_MAX (255) on every common Linux and macOS file system."""


def run(ws: Workspace, name: str, **args: Any) -> tuple[str, bool]:
    result = Toolbox(ws.tools()).run(ToolUseBlock("call_1", name, args))
    return result.content, result.is_error


def files(path: Path) -> dict[str, bytes]:
    return {str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}


# A name longer than 255 bytes


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("read_file", {"path": LONG}),
        ("read_file", {"path": f"sub/{LONG}/x.txt"}),
        ("write_file", {"path": LONG, "content": "x"}),
        ("write_file", {"path": f"new/{LONG}", "content": "x"}),
        ("list_dir", {"path": LONG}),
        ("read_file", {"path": "é" * 128}),  # 128 characters, 256 bytes
    ],
)
def test_a_name_over_255_bytes_is_a_clean_error(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, tool: str, args: dict[str, Any]
) -> None:
    ws = Workspace(tmp_path)
    with caplog.at_level(logging.DEBUG):
        content, is_error = run(ws, tool, **args)
    assert is_error
    assert "longer than 255 bytes" in content
    assert not any(r.exc_info for r in caplog.records), "a crash with a traceback in the log"
    assert list(tmp_path.iterdir()) == []


def test_any_os_error_from_the_file_system_is_a_tool_failure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    (tmp_path / "a.txt").write_text("x")
    ws = Workspace(tmp_path)

    def broken(*args: object, **kwargs: object) -> None:
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(os, "stat", broken)
    with caplog.at_level(logging.DEBUG):
        calls = [("read_file", {"path": "a.txt"}), ("list_dir", {}), ("write_file", {"path": "a.txt", "content": "y"})]
        for tool, args in calls:
            content, is_error = run(ws, tool, **args)
            assert is_error, tool
            assert "Input/output error" in content
    assert not any(r.exc_info for r in caplog.records)


# write_file("newdir/")


@pytest.mark.parametrize("path", ["newdir/", "newdir//", "newdir/.", "a/b/"])
def test_a_path_naming_a_folder_is_refused(tmp_path: Path, path: str) -> None:
    ws = Workspace(tmp_path)
    with pytest.raises(ToolFailure) as exc:
        ws.write_file(path, "x")
    assert "names a folder" in str(exc.value)
    assert list(tmp_path.iterdir()) == []


# An unreadable workspace


def test_an_unreadable_root_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Root (which runs these tests) bypasses permission bits, so ``os.access`` is what answers for the
    current user; here it is made to say no for the root folder only."""
    real_access = os.access
    root = tmp_path.resolve()

    def access(path: Any, mode: int, **kwargs: Any) -> bool:
        if Path(path) == root:
            return False
        return real_access(path, mode, **kwargs)

    monkeypatch.setattr(os, "access", access)
    with pytest.raises(ConfigError) as exc:
        Workspace(tmp_path)
    assert str(root) in str(exc.value)
    assert "read and execute permission" in str(exc.value)


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any folder whatever its mode")
def test_an_unreadable_root_is_refused_for_real(tmp_path: Path) -> None:
    root = tmp_path / "locked"
    root.mkdir()
    root.chmod(0)
    try:
        with pytest.raises(ConfigError, match="read and execute permission"):
            Workspace(root)
    finally:
        root.chmod(stat.S_IRWXU)


# --protect ""


@pytest.mark.parametrize("pattern", ["", " ", "\t"])
def test_an_empty_protect_pattern_is_refused(tmp_path: Path, pattern: str) -> None:
    with pytest.raises(ConfigError) as exc:
        Workspace(tmp_path, protect=[pattern])
    message = str(exc.value)
    assert "empty" in message
    assert "--protect '**'" in message, "says what to write to protect everything"


# write_file is atomic


ORIGINAL = b'{"name": "demo", "port": 8080}\n'


@pytest.fixture
def config(tmp_path: Path) -> Path:
    target = tmp_path / "config.json"
    target.write_bytes(ORIGINAL)
    target.chmod(0o640)
    return target


def test_a_full_disk_leaves_the_file_and_the_folder_as_they_were(
    tmp_path: Path, config: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The first write gets half the bytes to disk, the next one finds the disk full."""
    real_write = os.write
    calls = 0

    def write(fd: int, data: Any) -> int:
        nonlocal calls
        calls += 1
        if calls == 1:
            return real_write(fd, bytes(data[: len(data) // 2]))
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "write", write)
    ws = Workspace(tmp_path)
    with pytest.raises(ToolFailure) as exc:
        ws.write_file("config.json", '{"name": "de' + "x" * 10_000 + '"}\n')
    assert str(exc.value) == "cannot write config.json: No space left on device"
    assert calls == 2
    assert config.read_bytes() == ORIGINAL
    assert sorted(p.name for p in tmp_path.iterdir()) == ["config.json"], "no temporary file left"


def test_a_file_size_limit_hit_mid_write_leaves_the_old_content(tmp_path: Path, config: Path) -> None:
    """A real failure from the kernel, whatever function writes: past RLIMIT_FSIZE a write fails with
    EFBIG. Truncate-then-write (the old way) leaves a cut file; a temporary file and a rename do not."""
    resource = pytest.importorskip("resource")
    import signal

    ws = Workspace(tmp_path)
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    previous = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (20, hard))
    try:
        with pytest.raises(ToolFailure, match=re.escape("cannot write config.json: File too large")):
            ws.write_file("config.json", '{"name": "a much longer name than before"}\n')
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        signal.signal(signal.SIGXFSZ, previous)
    assert config.read_bytes() == ORIGINAL
    assert sorted(p.name for p in tmp_path.iterdir()) == ["config.json"]


@pytest.mark.parametrize("failing", ["fsync", "replace"])
def test_a_failure_before_the_rename_leaves_no_trace(
    tmp_path: Path, config: Path, monkeypatch: pytest.MonkeyPatch, failing: str
) -> None:
    def fail(*args: object) -> None:
        raise OSError(errno.EIO, os.strerror(errno.EIO))

    monkeypatch.setattr(os, failing, fail)
    ws = Workspace(tmp_path)
    with pytest.raises(ToolFailure, match="Input/output error"):
        ws.write_file("config.json", "new\n")
    with pytest.raises(ToolFailure, match="Input/output error"):
        ws.write_file("new/deeper/file.txt", "new\n")
    assert config.read_bytes() == ORIGINAL
    assert sorted(p.name for p in tmp_path.iterdir()) == ["config.json"], "no temporary file, no new folder"


def test_a_kill_during_the_write_leaves_the_old_content(
    tmp_path: Path, config: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C (or SIGTERM turned into an exception) between the write and the rename."""

    def interrupted(*args: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "fsync", interrupted)
    with pytest.raises(KeyboardInterrupt):
        Workspace(tmp_path).write_file("config.json", "half")
    assert config.read_bytes() == ORIGINAL
    assert sorted(p.name for p in tmp_path.iterdir()) == ["config.json"]


def test_overwriting_keeps_the_mode(tmp_path: Path, config: Path) -> None:
    config.chmod(0o751)
    Workspace(tmp_path).write_file("config.json", "new\n")
    assert stat.S_IMODE(config.stat().st_mode) == 0o751
    assert config.read_bytes() == b"new\n"


@pytest.mark.parametrize("umask", [0o022, 0o077, 0o002])
def test_a_new_file_gets_the_mode_the_umask_gives(tmp_path: Path, umask: int) -> None:
    old = os.umask(umask)
    try:
        Workspace(tmp_path).write_file("sub/new.txt", "x")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "sub" / "new.txt").stat().st_mode) == 0o666 & ~umask


def test_writing_through_a_symlink_replaces_the_target_and_keeps_the_link(tmp_path: Path, config: Path) -> None:
    (tmp_path / "alias.json").symlink_to(config)
    Workspace(tmp_path).write_file("alias.json", "{}\n")
    assert (tmp_path / "alias.json").is_symlink()
    assert config.read_text() == "{}\n"


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="only root can give a file away")
def test_overwriting_keeps_the_owner(tmp_path: Path, config: Path) -> None:
    os.chown(config, 65534, 65534)
    Workspace(tmp_path).write_file("config.json", "new\n")
    assert (config.stat().st_uid, config.stat().st_gid) == (65534, 65534)
