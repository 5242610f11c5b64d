"""``sessions export``'s output: a path that cannot be written is one line, never a traceback, and
what is not a regular file (a FIFO, a device, a symlink) is written through, never replaced."""

from __future__ import annotations

import errno
import os
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.expect import one_line
from tests.test_cli_sessions import Script, feed, script, sessions, workspace
from tiny_agent.cli import main
from tiny_agent.types import Message

__all__ = ["script", "workspace"]  # fixtures

SRC = Path(__file__).resolve().parents[1] / "src"


@pytest.fixture
def sid(workspace: Path, script: Script, capsys: pytest.CaptureFixture[str]) -> str:
    feed(script, Message.assistant("buy milk"))
    assert main(["read notes"]) == 0
    capsys.readouterr()
    return str(sessions()[0]["id"])


def test_a_missing_folder(sid: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "missing" / "out.jsonl"
    assert main(["sessions", "export", sid, "-o", str(target)]) == 2
    one_line(capsys, str(target), "does not exist")
    assert not target.parent.exists()


def test_an_unwritable_folder(
    sid: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "locked"
    folder.mkdir(mode=0o500)
    if os.geteuid() == 0:  # root writes into any folder: the refusal is injected where it would come

        def refused(**kwargs: object) -> tuple[int, str]:
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(folder / "tmp"))

        monkeypatch.setattr(tempfile, "mkstemp", refused)
    assert main(["sessions", "export", sid, "-o", str(folder / "out.jsonl")]) == 2
    one_line(capsys, str(folder / "out.jsonl"), "Permission denied")
    assert list(folder.iterdir()) == []


def test_a_folder_of_proc(sid: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sessions", "export", sid, "-o", "/proc/tiny-agent-export.jsonl"]) == 2
    one_line(capsys, "/proc/tiny-agent-export.jsonl")


def test_a_full_disk_leaves_the_file_as_it_was(
    sid: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "exports").mkdir()
    target = tmp_path / "exports" / "out.jsonl"
    target.write_text("the previous export\n")

    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", full)
    assert main(["sessions", "export", sid, "-o", str(target)]) == 2
    one_line(capsys, str(target), "No space left on device")
    assert target.read_text() == "the previous export\n"
    assert sorted(p.name for p in target.parent.iterdir()) == ["out.jsonl"], "no temporary file left behind"


def test_stdout_on_a_full_disk(sid: str, workspace: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    with open("/dev/full", "w") as full:
        done = subprocess.run(
            [sys.executable, "-m", "tiny_agent", "sessions", "export", sid],
            stdout=full,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            timeout=120,
        )
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1, done.stderr
    assert "stdout" in lines[0] and "No space left on device" in lines[0]


def test_a_fifo_is_written_through(sid: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # the export is far smaller than a pipe's buffer
    try:
        assert main(["sessions", "export", sid, "-o", str(fifo)]) == 0
        got = os.read(reader, 1 << 20)
    finally:
        os.close(reader)
    capsys.readouterr()
    assert stat.S_ISFIFO(fifo.lstat().st_mode), "still a FIFO"
    assert b'"format": "tiny-agent-session"' in got


def device(tmp_path: Path, name: str, minor: int) -> Path:
    """A private copy of /dev/null (minor 3) or /dev/full (7) where a test may make one (as root):
    an export that wrongly renamed over it must not destroy the machine's own."""
    if os.geteuid() != 0:
        return Path("/dev") / name  # not root: nobody's export can replace it
    node = tmp_path / name
    try:
        os.mknod(node, stat.S_IFCHR | 0o666, os.makedev(1, minor))
    except PermissionError:
        pytest.skip("root without mknod: no device node to try this on safely")
    return node


def test_a_device_is_written_through(sid: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    null, full = device(tmp_path, "null", 3), device(tmp_path, "full", 7)
    assert main(["sessions", "export", sid, "-o", str(null)]) == 0
    capsys.readouterr()
    assert stat.S_ISCHR(null.lstat().st_mode), "the device node is still there"
    assert main(["sessions", "export", sid, "-o", str(full)]) == 2
    one_line(capsys, str(full), "No space left on device")
    assert stat.S_ISCHR(full.lstat().st_mode), "the device node is still there"


def test_a_symlink_stays_and_its_target_is_written(
    sid: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "exports").mkdir()
    target = tmp_path / "exports" / "latest.jsonl"
    target.write_text("old\n")
    link = tmp_path / "latest"
    link.symlink_to(target)
    assert main(["sessions", "export", sid, "-o", str(link)]) == 0
    capsys.readouterr()
    assert link.is_symlink() and link.resolve() == target
    assert '"format": "tiny-agent-session"' in target.read_text()
    assert sorted(p.name for p in target.parent.iterdir()) == ["latest.jsonl"]

    dangling = tmp_path / "next"
    dangling.symlink_to(tmp_path / "exports" / "next.jsonl")
    assert main(["sessions", "export", sid, "-o", str(dangling)]) == 0
    capsys.readouterr()
    assert dangling.is_symlink() and (tmp_path / "exports" / "next.jsonl").is_file()


def test_a_reader_that_went_away_ends_it_quietly(sid: str, workspace: Path) -> None:
    read_end, write_end = os.pipe()
    os.close(read_end)  # before the export starts: its first write finds nobody reading
    try:
        done = subprocess.run(
            [sys.executable, "-m", "tiny_agent", "sessions", "export", sid],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONPATH": str(SRC)},
            timeout=120,
        )
    finally:
        os.close(write_end)
    assert (done.returncode, done.stderr) == (141, "")
