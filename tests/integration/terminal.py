"""A tmux pane to type into and read from, for the tests of ``tiny-agent chat`` in a real terminal."""

from __future__ import annotations

import re
import shlex
import subprocess
import time


class Pane:
    """One tmux session running a shell: type into it, read what it shows."""

    def __init__(self, name: str, env: dict[str, str]) -> None:
        self.name = name
        exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
        subprocess.run(
            [
                "tmux",
                "new-session",
                "-d",
                "-s",
                name,
                "-x",
                "200",
                "-y",
                "80",
                f"env {exports} bash --norc --noprofile",
            ],
            check=True,
        )

    def keys(self, *keys: str) -> None:
        subprocess.run(["tmux", "send-keys", "-t", self.name, *keys], check=True)

    def type(self, text: str) -> None:
        subprocess.run(["tmux", "send-keys", "-t", self.name, "-l", text], check=True)
        self.keys("Enter")

    def screen(self) -> str:
        out = subprocess.run(
            ["tmux", "capture-pane", "-p", "-J", "-S", "-2000", "-t", self.name], capture_output=True, text=True
        )
        # The pane's empty bottom rows come out as blank lines; without them, offsets into the screen
        # stay put as output is added, so "after this mark" means "printed after this point".
        return out.stdout.rstrip()

    def wait_for(self, pattern: str, seconds: float = 300.0, after: int = 0) -> str:
        """Wait until ``pattern`` shows at or after character ``after`` of the screen; returns the screen."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            screen = self.screen()
            if re.search(pattern, screen[after:]):
                return screen
            time.sleep(0.3)
        raise AssertionError(f"{pattern!r} never showed; the screen:\n{self.screen()[after:]}")

    def wait_prompt(self, after: int, seconds: float = 600.0) -> str:
        """Wait until the chat prompt is back (a line that is exactly "> ")."""
        return self.wait_for(r"(?m)^> ?$", seconds, after)  # tmux trims the trailing space

    def close(self) -> None:
        subprocess.run(["tmux", "kill-session", "-t", self.name], capture_output=True)
