"""read_file streams: it reads only as far as its answer needs, and answers exactly as reading the
whole file would (the reference below is the read_file that loaded the whole file first)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tiny_agent.tools.files import read_text
from tiny_agent.tools.toolbox import ToolFailure
from tiny_agent.tools.workspace import Workspace


def reference(data: bytes, name: str, start_line: int, max_lines: int | None, max_chars: int) -> str:
    """The whole-file read_file, kept as the specification of every answer and message."""
    if b"\0" in data[:8192]:
        raise ToolFailure(f"{name} looks like a binary file ({len(data)} bytes); read_file only reads text")
    encoding = "utf-8"
    for encoding in ("utf-8", "cp1252", "latin-1"):  # a file that is not UTF-8 is read as Windows-1252
        try:
            text = data.decode(encoding)
            break
        except UnicodeDecodeError:
            continue
    if not text:
        return "[empty file]"
    if encoding != "utf-8":
        return note_of(
            _answer(text, name, start_line, max_lines, max_chars), f"[{name} is not UTF-8: read as {encoding}]"
        )
    return _answer(text, name, start_line, max_lines, max_chars)


def note_of(shown: str, text: str) -> str:
    return f"{shown}{'' if shown.endswith(chr(10)) else chr(10)}{text}"


def _answer(text: str, name: str, start_line: int, max_lines: int | None, max_chars: int) -> str:
    parts = text.split("\n")
    lines = [line + "\n" for line in parts[:-1]] + ([parts[-1]] if parts[-1] else [])
    if start_line > len(lines):
        raise ToolFailure(f"{name} has {len(lines)} lines; start_line {start_line} is past the end")
    end = len(lines) if max_lines is None else min(len(lines), start_line - 1 + max_lines)
    out = "".join(lines[start_line - 1 : end])

    def note(shown: str, text: str) -> str:
        return f"{shown}{'' if shown.endswith(chr(10)) else chr(10)}{text}"

    if len(out) > max_chars:
        shown = out[:max_chars]
        next_line = start_line + shown.count("\n")
        if next_line == start_line:
            advice = f"line {start_line} alone is longer than {max_chars} characters"
        else:
            advice = f"read again with start_line={next_line} to see more"
        return note(shown, f"[... cut: {len(out) - len(shown)} more characters not shown (of {len(out)}); {advice}]")
    if end < len(lines):
        return note(out, f"[... {len(lines) - end} more lines; read again with start_line={end + 1}]")
    return out


def outcome(fn: object, *args: object, **kwargs: object) -> tuple[str, str]:
    try:
        return "ok", fn(*args, **kwargs)  # type: ignore[operator]
    except ToolFailure as exc:
        return "error", str(exc)


pieces = st.sampled_from(["a", "bc", "é", "✓", "😀", "\n", "\n", "\r\n", " "])
contents = st.builds(
    lambda parts, bad, where: _corrupt("".join(parts).encode(), bad, where),
    st.lists(pieces, max_size=60),
    st.sampled_from([None, b"\xff", b"\xe2\x9c", b"\0"]),
    st.integers(min_value=0, max_value=200),
)


def _corrupt(data: bytes, bad: bytes | None, where: int) -> bytes:
    if bad is None:
        return data
    where = min(where, len(data))
    return data[:where] + bad + data[where:]


@settings(max_examples=400, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    data=contents,
    start_line=st.integers(min_value=1, max_value=25),
    max_lines=st.one_of(st.none(), st.integers(min_value=1, max_value=20)),
    max_chars=st.integers(min_value=1, max_value=80),
    chunk=st.integers(min_value=1, max_value=9),
)
def test_streamed_answers_equal_whole_file_answers(
    tmp_path: Path, data: bytes, start_line: int, max_lines: int | None, max_chars: int, chunk: int
) -> None:
    """Tiny chunks split lines and multi-byte characters at every possible place. The lookahead is
    larger than any file here, so every count is exact."""
    path = tmp_path / "f.txt"
    path.write_bytes(data)
    expected = outcome(reference, data, "f.txt", start_line, max_lines, max_chars)
    got = outcome(
        read_text, path, "f.txt", start_line=start_line, max_lines=max_lines, max_chars=max_chars, chunk=chunk
    )
    assert got == expected


def _many_lines(path: Path, count: int) -> str:
    text = "".join(f"line {n}\n" for n in range(1, count + 1))
    path.write_text(text)
    return text


def test_past_the_lookahead_the_count_of_lines_left_is_a_lower_bound(tmp_path: Path) -> None:
    path = tmp_path / "big.txt"
    _many_lines(path, 50_000)
    out = read_text(path, "big.txt", max_lines=2, max_chars=1000, lookahead=1000, chunk=100)
    head, note = out.rsplit("\n", 1)
    assert head == "line 1\nline 2"
    assert note.startswith("[... at least ") and note.endswith(" more lines; read again with start_line=3]")
    at_least = int(note.removeprefix("[... at least ").split()[0])
    assert 0 < at_least < 50_000 - 2, "a lower bound from a partial read, not the exact count"
    assert read_text(path, "big.txt", start_line=3, max_lines=1, max_chars=1000).startswith("line 3\n")


def test_past_the_lookahead_the_cut_note_is_a_lower_bound(tmp_path: Path) -> None:
    path = tmp_path / "one-line.txt"
    path.write_text("x" * 100_000)
    out = read_text(path, "one-line.txt", max_chars=50, lookahead=1000, chunk=100)
    assert out.startswith("x" * 50 + "\n[... cut: at least ")
    assert out.endswith("bytes not read); line 1 alone is longer than 50 characters]")


def test_a_bad_byte_past_what_is_read_does_not_matter(tmp_path: Path) -> None:
    """Only what is read is checked: line 1 of a file whose far end is Latin-1 reads fine."""
    path = tmp_path / "mixed.txt"
    path.write_bytes(b"first\n" + b"y\n" * 100_000 + "café\n".encode("latin-1"))
    out = read_text(path, "mixed.txt", max_lines=1, max_chars=100, lookahead=1000)
    assert out.startswith("first\n[... at least ")
    assert out.endswith(" more lines; read again with start_line=2]")


def _bytes_read() -> int:
    for line in Path("/proc/self/io").read_text().splitlines():
        if line.startswith("rchar:"):
            return int(line.split()[1])
    raise AssertionError("no rchar in /proc/self/io")


@pytest.mark.skipif(not os.path.exists("/proc/self/io"), reason="needs Linux /proc/self/io")
def test_reading_one_line_of_a_large_file_reads_a_small_part_of_it(tmp_path: Path) -> None:
    """Bytes the process read (rchar), not time or memory: those belong to benchmarks/read_file_memory.py."""
    size = 32 * 1024 * 1024
    line = b"z" * 1023 + b"\n"
    with open(tmp_path / "big.log", "wb") as file:
        for _ in range(size // len(line)):
            file.write(line)
    ws = Workspace(tmp_path)
    before = _bytes_read()
    out = ws.read_file("big.log", max_lines=1)
    read = _bytes_read() - before
    assert out.startswith("z" * 1023 + "\n[... at least ")
    assert read < size // 4, f"read {read} bytes of a {size}-byte file for one line"
