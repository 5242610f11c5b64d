"""The ``shell`` tool: one command in the workspace, off unless the user turns it on.

Modes (the ``allow_shell`` run setting): ``off`` (the default: no such tool); ``ask``
(``--allow-shell``, ``allow_shell = true`` in tiny-agent.toml: each command is shown and runs only
once the user says yes on the terminal; without a terminal it is refused, since nobody can say
yes); ``yes`` (``--allow-shell-yes``, ``allow_shell = "yes"``: shown, then run without asking).
``--no-shell`` turns it off again (the session remembers the mode). Every command is shown
before it runs, whatever the mode.

The command runs with ``/bin/sh -c`` in the workspace folder, with no stdin (it can never wait for
input, nor read the task piped to tiny-agent), a timeout (its whole process group is killed) and an
output cap. Its environment has every credential removed: variables named like one (``*_KEY``,
``*_TOKEN``, ``*_SECRET``, ``*PASSWORD*``, ``*_CREDENTIALS``) and any whose value holds a secret
registered in ``tiny_agent.redaction`` (the providers' API keys). The workspace's path guards do
not bind a shell: that is why it is off by default and asks first.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Literal

from tiny_agent.redaction import registered_secrets
from tiny_agent.text import decode
from tiny_agent.tools.files import with_note
from tiny_agent.tools.toolbox import Tool, ToolFailure

__all__ = ["SHELL_MODES", "ShellMode", "clean_environment", "shell_mode", "shell_tool"]

ShellMode = Literal["off", "ask", "yes"]
SHELL_MODES: tuple[ShellMode, ...] = ("off", "ask", "yes")
DEFAULT_TIMEOUT = 120.0
"""Seconds a command may run before its process group is killed."""
_SECRET_NAME = re.compile(r".*(_KEY|_TOKEN|_SECRET|PASSWORD|_CREDENTIALS|_PASS|_PWD)$|^(KEY|TOKEN|SECRET)$", re.I)
_KEPT_NAMES = frozenset({"PWD", "OLDPWD"})


def shell_mode(value: object) -> ShellMode:
    """A mode from a flag or a config value: true is ``ask``, false ``off``."""
    if value is True:
        return "ask"
    if value is False or value is None:
        return "off"
    text = str(value).strip().lower()
    aliases = {"allow": "yes", "true": "ask", "false": "off", "no": "off"}
    text = aliases.get(text, text)
    for mode in SHELL_MODES:
        if text == mode:
            return mode
    raise ToolFailure(f"allow_shell must be one of off, ask, yes (or true/false), not {value!r}")


def clean_environment(env: Mapping[str, str]) -> dict[str, str]:
    """``env`` without credentials: by name, and by value (a registered secret inside it)."""
    secrets = registered_secrets()
    out: dict[str, str] = {}
    for name, value in env.items():
        if name not in _KEPT_NAMES and _SECRET_NAME.match(name):
            continue
        if any(secret in value for secret in secrets):
            continue
        out[name] = value
    return out


def shell_tool(
    root: Path,
    *,
    mode: ShellMode,
    approve: Callable[[str], bool] | None = None,
    announce: Callable[[str], None] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    max_chars: int = 20_000,
    env: Mapping[str, str] = os.environ,
) -> Tool:
    """The tool for ``mode`` "ask" or "yes". ``approve`` asks the user (None: nobody can, so "ask"
    refuses); ``announce`` shows each command before it runs."""
    if mode == "off":
        raise ValueError("the shell tool is off")

    def run(args: Mapping[str, object]) -> str:
        command = str(args["command"])
        if not command.strip():
            raise ToolFailure("refused: the command is empty")
        if announce is not None:
            announce(f"shell $ {command}")
        if mode == "ask":
            if approve is None:
                raise ToolFailure(
                    "refused: shell commands need the user's yes, and no one is at a terminal to give it; "
                    "the user can run with --allow-shell-yes to allow them unattended. Carry on without it."
                )
            if not approve(command):
                raise ToolFailure("refused by the user: do not run this command; carry on without it, or ask")
        return _run(command, root, timeout, max_chars, clean_environment(env))

    ask = " The user approves each command first; a refusal is final for that command." if mode == "ask" else ""
    schema = {
        "type": "object",
        "properties": {"command": {"type": "string", "description": "One /bin/sh command line.", "minLength": 1}},
        "required": ["command"],
        "additionalProperties": False,
    }
    return Tool(
        "shell",
        f"Run a shell command in the workspace folder and return its exit code and output (stdout and stderr "
        f"together, cut past {max_chars:,} characters). No input can be given; it is stopped after "
        f"{timeout:g} seconds; API keys and other secrets are not in its environment.{ask}",
        schema,
        run,
    )


def _run(command: str, root: Path, timeout: float, max_chars: int, env: dict[str, str]) -> str:
    with tempfile.TemporaryFile() as out:  # a file, not a pipe: a chatty command cannot block on a full pipe
        try:
            process = subprocess.Popen(
                ["/bin/sh", "-c", command],
                cwd=root,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                env=env,
                start_new_session=True,  # its own process group, killed whole on a timeout
            )
        except OSError as exc:
            raise ToolFailure(f"cannot start /bin/sh: {exc.strerror or exc}") from exc
        try:
            code: int | None = process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill(process)
            code = None
        except BaseException:  # Ctrl-C: its own session keeps the terminal's signal from it, so stop it here
            _kill(process)
            raise
        size = out.tell()
        out.seek(0)
        head = out.read(max_chars * 4)
    text = str(decode(head))
    shown = text[:max_chars]
    if len(text) > max_chars or size > len(head):
        shown = with_note(shown, f"[... cut: the output had {size:,} bytes; {max_chars:,} characters are shown]")
    status = f"timed out after {timeout:g} s (killed)" if code is None else f"exit code {code}"
    return f"[{status}]\n{shown}" if shown else f"[{status}, no output]"


def _kill(process: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()
