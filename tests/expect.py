"""What the tests expect of a command's error output, in one place."""

from __future__ import annotations

import pytest


def one_line(capsys: pytest.CaptureFixture[str], *fragments: str) -> str:
    """The one line the command wrote to stderr (no traceback), holding every fragment."""
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])
    return lines[0]
