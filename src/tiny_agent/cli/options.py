"""The flags ``run`` and ``chat`` share; their values are parsed by ``param_types``, which say exactly what to fix.

Defaults are read from the config classes (``AgentConfig``, ``ContextConfig``), never repeated
here. Flags that shape a session (provider, model, workspace, rules, thresholds) are recorded in
it: on a resume, a flag not given keeps the session's value, a flag given overrides it.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from tiny_agent.agent.budget import STOP_SHARE
from tiny_agent.agent.loop import AgentConfig
from tiny_agent.agent.settings import DEFAULT_MAX_OUTPUT_CHARS, DEFAULT_MAX_RETRIES, DEFAULT_TIMEOUT, LOCAL_TIMEOUT
from tiny_agent.cli.config_name import CONFIG_NAME
from tiny_agent.cli.param_types import CompactAt, NonNegative, PolicyName, Positive
from tiny_agent.context.engine import ContextConfig
from tiny_agent.context.shrink.registry import POLICIES
from tiny_agent.errors import ConfigError
from tiny_agent.providers.base import DEFAULT_MAX_TOKENS, LOCAL_MAX_TOKENS
from tiny_agent.providers.cache_rules import DEFAULT_TTL, TTLS, WRITE_MULTIPLIER
from tiny_agent.providers.registry import APIS, PROVIDER_NAMES
from tiny_agent.providers.thinking import EFFORTS
from tiny_agent.store.location import STORE_ENV, default_location, is_postgres
from tiny_agent.tools.hooks import HOOK_EVENTS
from tiny_agent.tools.mcp.tools import DEFAULT_MCP_TIMEOUT, HEADER_ENV

__all__ = ["CONFIG_FLAGS", "PROVIDER_FLAGS", "agent_options", "existing_store", "given", "store_option"]

F = TypeVar("F", bound=Callable[..., Any])

CONFIG_FLAGS = ("compact_at", "keep_turns", "context_window", "policy")
"""Flags that set the engine's thresholds (``ContextConfig``), recorded in the session."""
PROVIDER_FLAGS = ("timeout", "max_retries")
"""Flags that go to the adapter for this run only."""


def existing_store(store: str | None) -> str | None:
    """The store a look back reads, which it never creates: a path given that does not exist is the
    user's to fix; None when the default store does not exist yet (nothing recorded). A database URL
    is taken as it is (opening it says whether the server has it)."""
    location = store or default_location(os.environ)
    if is_postgres(location):
        return location
    path = Path(location).expanduser()
    if path.exists():
        return str(path)
    if store:
        raise ConfigError(f"no session store at {path}; check the path (see: tiny-agent sessions list --store)")
    return None


def given(ctx: click.Context, name: str) -> bool:
    """Whether the user gave this flag (on the command line or from the environment)."""
    source = ctx.get_parameter_source(name)
    return source is not None and source.name in ("COMMANDLINE", "ENVIRONMENT")


store_option = click.option(
    "--store",
    type=click.Path(dir_okay=False),
    envvar=STORE_ENV,
    help="Session store: a SQLite file, or a postgresql:// URL shared by several hosts (default: a file in the "
    "user data folder).",
)


def _stack(*decorators: Callable[[F], F]) -> Callable[[F], F]:
    def apply(f: F) -> F:
        for decorator in reversed(decorators):
            f = decorator(f)
        return f

    return apply


_agent = AgentConfig()
_context = ContextConfig()

agent_options = _stack(
    # provider
    click.option(
        "--provider",
        type=click.Choice(PROVIDER_NAMES, case_sensitive=False),
        help="Default: from the environment's API keys, else the local model.",
    ),
    click.option("--model", help="Model id, or a .gguf file for the local provider. Default: the provider's."),
    click.option("--base-url", help="API base URL, e.g. a llama.cpp server's http://127.0.0.1:8080/v1."),
    click.option(
        "--max-tokens",
        type=Positive(int),
        help=f"Cap on output tokens per call (default {DEFAULT_MAX_TOKENS}; {LOCAL_MAX_TOKENS} for the local model; "
        "at most the model's output limit on Claude).",
    ),
    click.option(
        "--timeout",
        type=Positive(float, " seconds"),
        help=f"Seconds to wait for a reply to start, per attempt (default {DEFAULT_TIMEOUT:g}; "
        f"{LOCAL_TIMEOUT:g} for the local model).",
    ),
    click.option(
        "--max-retries",
        type=NonNegative(),
        help=f"Retries of a call that failed in a way a retry can fix (default {DEFAULT_MAX_RETRIES}).",
    ),
    click.option(
        "--api",
        type=click.Choice(APIS),
        help="OpenAI's API: the Responses API or Chat Completions (default: responses for OpenAI's "
        "reasoning models at OpenAI, chat for other servers). See docs/responses.md.",
    ),
    click.option(
        "--server-compact-at",
        type=Positive(int),
        metavar="TOKENS",
        help="The server compacts past this many input tokens (Responses API: any count; Anthropic: at least "
        "50,000); its item or block is kept in the session and sent back. See docs/responses.md.",
    ),
    click.option(
        "--cache-ttl",
        type=click.Choice(TTLS),
        help=f"Anthropic prompt-cache lifetime (default {DEFAULT_TTL}); 1h writes cost {WRITE_MULTIPLIER['1h']:g}x "
        f"instead of {WRITE_MULTIPLIER['5m']:g}x.",
    ),
    click.option(
        "--thinking",
        metavar="off|adaptive|N",
        help="Extended thinking: off, adaptive, or a budget of N >= 1024 tokens (Claude 4.6 and earlier; "
        "default: the model's own).",
    ),
    click.option(
        "--thinking-display",
        type=click.Choice(("summarized", "omitted"), case_sensitive=False),
        help="Claude's thinking text, beside --thinking (or alone on the Claude 5 models, which think unasked): "
        "summarized, or omitted (still signed, still billed).",
    ),
    click.option("--show-thinking", is_flag=True, help="Print the model's thinking whole (dimmed), not folded."),
    click.option(
        "--thinking-binding",
        type=click.Choice(("strict", "drop_block"), case_sensitive=False),
        help="Preserved thinking (beside --thinking, or alone on the Claude 5 models): compact by folding the kept "
        "turns (strict, the default) or keep them and let the API drop the blocks whose prefix changed "
        "(drop_block, beta). See docs/thinking.md.",
    ),
    click.option(
        "--effort",
        type=click.Choice(EFFORTS, case_sensitive=False),
        help="Reasoning effort, where the model has it.",
    ),
    # workspace and rules
    click.option(
        "--workspace",
        type=click.Path(file_okay=False),
        help="Folder the tools are confined to (default: the current folder).",
    ),
    click.option("--protect", multiple=True, metavar="GLOB", help="write_file refuses these paths (repeatable)."),
    click.option(
        "--allow-read",
        multiple=True,
        metavar="GLOB",
        help="read_file may read these secret-looking files (repeatable).",
    ),
    click.option(
        "--allow-shell",
        "allow_shell",
        flag_value="ask",
        help="Offer the shell tool: each command is shown, and run once you say yes on the terminal "
        "(off by default; the session remembers it).",
    ),
    click.option(
        "--allow-shell-yes", "allow_shell", flag_value="yes", help="Offer the shell tool and run commands unasked."
    ),
    click.option("--no-shell", "allow_shell", flag_value="off", help="Take the shell tool away again."),
    click.option(
        "--allow-write-defaults",
        "default_protect",
        flag_value=False,
        default=None,
        help="Let write_file change what is protected by default (.git/ hooks and config, ...).",
    ),
    click.option(
        "--max-output-chars",
        type=Positive(int),
        help=f"Cut tool output beyond this (default {DEFAULT_MAX_OUTPUT_CHARS}, less for small windows).",
    ),
    # tools from outside
    click.option(
        "--mcp",
        multiple=True,
        metavar='"CMD ARGS"',
        help="Start an MCP server over stdio, in the workspace folder, and offer its tools (repeatable). "
        "It runs with your rights, outside the workspace jail.",
    ),
    click.option(
        "--mcp-url",
        multiple=True,
        metavar="URL",
        help=f"Use an MCP server over streamable HTTP (repeatable). Headers come from the environment: "
        f"{HEADER_ENV}AUTHORIZATION='Bearer ...' sends Authorization (any {HEADER_ENV}<NAME>, _ for -) "
        f"to every --mcp-url server; per server, use {CONFIG_NAME}.",
    ),
    click.option(
        "--mcp-timeout",
        type=Positive(float, " seconds"),
        help=f"Seconds an MCP tool call may take before the model is told it failed (default {DEFAULT_MCP_TIMEOUT:g}).",
    ),
    click.option(
        "--hook",
        multiple=True,
        metavar="EVENT[:MATCHER]=CMD",
        help=f"Run CMD (through the shell) at EVENT, a JSON description on its stdin (repeatable). Events: "
        f"{', '.join(HOOK_EVENTS)}; MATCHER: a regular expression of tool names.",
    ),
    click.option(
        "--no-config",
        is_flag=True,
        help=f"Read no {CONFIG_NAME} (neither the workspace's nor the one in the user config folder).",
    ),
    # the conversation
    click.option("--pin", multiple=True, metavar="TEXT", help="A constraint kept in every request (repeatable)."),
    click.option(
        "--system",
        metavar="TEXT|@FILE",
        help="Replace the system prompt (keep it identical between runs: it is cached).",
    ),
    click.option("--append-system", metavar="TEXT|@FILE", help="Add to the system prompt."),
    click.option(
        "--max-steps",
        type=Positive(int),
        default=_agent.max_steps,
        show_default=True,
        help="Model calls before a run stops.",
    ),
    click.option(
        "--compact-at",
        type=CompactAt(),
        help=f"Compact past a fraction of the window or a token count (default {_context.compact_at}).",
    ),
    click.option(
        "--keep-turns",
        type=Positive(int),
        help=f"Newest turns kept verbatim on compaction (default {_context.keep_turns}).",
    ),
    click.option("--context-window", type=Positive(int), help="Override the model's context window (tokens)."),
    click.option(
        "--policy",
        type=PolicyName(),
        help="When to compact: "
        + "; ".join(f"'{p.name}' {p.about}" for p in POLICIES.values())
        + f" (default {_context.policy}).",
    ),
    click.option(
        "--keepalive",
        type=click.Choice(["auto", "off"]),
        help="While you are idle (or a tool runs long), keep the prompt cache warm with 1-token requests when "
        "the prices say it pays, up to the cost of one rewrite (default: auto in chat, off in run).",
    ),
    click.option(
        "--budget-usd",
        type=Positive(float, " dollars"),
        help=f"Stop cleanly once {STOP_SHARE:.0%} of this is spent (the session's total).",
    ),
    # the session
    store_option,
    click.option("-c", "--continue", "continue_", is_flag=True, help="Continue the newest session of this workspace."),
    click.option("--resume", metavar="ID", help="Continue a session (a unique prefix of its id is enough)."),
    click.option("--force", is_flag=True, help="Take over a session another tiny-agent process holds open."),
    click.option("--no-session", is_flag=True, help="Keep nothing on disk: this run is not stored."),
    # output
    click.option("-q", "--quiet", is_flag=True, help="Print only the answer."),
    click.option("-v", "--verbose", is_flag=True, help="Debug logging to stderr."),
    click.option(
        "--json", "as_json", is_flag=True, help="Print one JSON object: answer, stop reason, steps, tokens, cost."
    ),
    click.option(
        "--no-stream/--stream",
        default=None,
        help="Print the answer whole once complete, or as it arrives (default: as it arrives on a terminal, "
        "whole into a pipe or a file; --json prints it whole).",
    ),
    click.option(
        "--otel",
        is_flag=True,
        help="Export OpenTelemetry spans over OTLP/HTTP (on by itself when OTEL_EXPORTER_OTLP_ENDPOINT is set).",
    ),
)
