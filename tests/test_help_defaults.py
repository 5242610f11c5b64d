"""Every "default N" in the help of ``run`` and ``chat`` is the value a run given no such flag uses.

``run --help`` said ``--max-retries`` defaults to 4 while the runs used 2. Here the defaults are read
from the help, and the values from what the CLI really builds (provider, agent, context, workspace)
when the flag is left out, for a remote and for the local provider.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import click
import pytest

from tiny_agent.agent.loop import Agent, RunResult
from tiny_agent.cli import main
from tiny_agent.cli.app import run_command
from tiny_agent.cli.chat import chat_command
from tiny_agent.cli.runtime import Runtime

GLOSSARY = Path(__file__).resolve().parents[1] / "examples" / "mcp" / "glossary_server.py"
DEFAULT = re.compile(r"\bdefault:? (\d[\d_.]*)(?!\w)(?:; (\d[\d_.]*) for the local model)?", re.IGNORECASE)


def help_defaults(command: click.Command) -> dict[str, tuple[float, ...]]:
    """Option name -> the numbers its help gives as defaults (a second one: the local model's)."""
    found: dict[str, tuple[float, ...]] = {}
    for param in command.params:
        if not isinstance(param, click.Option):
            continue
        name = param.opts[-1]
        text = " ".join((param.help or "").split())
        match = DEFAULT.search(text)
        if match:
            found[name] = tuple(float(n) for n in match.groups() if n is not None)
        if param.show_default and isinstance(param.default, int | float) and not isinstance(param.default, bool):
            found[name] = (float(param.default),)
    return found


def values(runtime: Runtime) -> dict[str, float]:
    """What a runtime uses, read while it is open (the local provider lets its adapter go on close)."""
    provider: Any = runtime.provider
    adapter: Any = getattr(provider, "_inner", None) or provider
    return {
        "timeout": adapter._timeout,
        "max_retries": adapter._policy.max_retries,
        "max_tokens": adapter.max_tokens,
        "max_output_chars": runtime.workspace.max_output_chars,
        "max_steps": runtime.agent.config.max_steps,
        "compact_at": runtime.context.config.compact_at,
        "keep_turns": runtime.context.config.keep_turns,
        **({"mcp_timeout": servers.servers[0].timeout} if (servers := runtime.toolset.servers) else {}),
    }


def built(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, *flags: str) -> dict[str, float]:
    """The values ``tiny-agent --no-session FLAGS task`` uses; nothing is sent."""
    seen: list[dict[str, float]] = []
    monkeypatch.setattr("tiny_agent.cli.app._header", lambda printer, runtime: seen.append(values(runtime)))
    monkeypatch.setattr(Agent, "run", lambda self, task: RunResult("done", "ok", 1))
    monkeypatch.chdir(tmp_path)
    assert main(["--no-session", "-q", *flags, "task"]) == 0
    return seen[0]


@pytest.mark.parametrize("command", [run_command, chat_command], ids=["run", "chat"])
def test_every_default_in_the_help_is_the_value_used(
    command: click.Command, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-help-defaults")
    remote = built(monkeypatch, tmp_path, "--provider", "openai")
    local_flags = ("--provider", "local", "--base-url", "http://127.0.0.1:9", "--context-window", "100000")
    local = built(monkeypatch, tmp_path, *local_flags)
    mcp = built(monkeypatch, tmp_path, "--provider", "openai", "--mcp", f"{sys.executable} {GLOSSARY}")
    assert help_defaults(command) == {
        "--mcp-timeout": (mcp["mcp_timeout"],),
        "--timeout": (remote["timeout"], local["timeout"]),
        "--max-retries": (remote["max_retries"],),
        "--max-tokens": (remote["max_tokens"], local["max_tokens"]),
        "--max-output-chars": (remote["max_output_chars"],),
        "--max-steps": (remote["max_steps"],),
        "--compact-at": (remote["compact_at"],),
        "--keep-turns": (remote["keep_turns"],),
    }
    assert local["max_retries"] == remote["max_retries"], "the local provider retries as often"
