"""The ``tiny-agent`` command: parse flags, wire the library together, print. No logic of its own.

    tiny-agent "read README.md then tell me what it is about"
    tiny-agent local start|stop|status

The answer goes to stdout; one line per model call, tool run and compaction goes to stderr.
Exit codes: 0 done, 1 provider or protocol failure, 2 usage or configuration error, 3 step limit
(or the model repeating the same failing call),
4 the answer was cut at the output limit, 130 interrupted (Ctrl-C).
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import signal
import sys
from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.logging import RichHandler

from tiny_agent.agent.loop import Agent, AgentConfig, Event
from tiny_agent.agent.report import format_event, format_totals
from tiny_agent.agent.tools import Toolbox
from tiny_agent.agent.workspace import Workspace
from tiny_agent.context.engine import ContextConfig
from tiny_agent.errors import ConfigError, TinyAgentError
from tiny_agent.providers import llama_server
from tiny_agent.providers.local import LocalProvider
from tiny_agent.providers.registry import PROVIDER_NAMES, resolve_provider

__all__ = ["build_parser", "main"]

EXIT_CODES = {"done": 0, "provider_error": 1, "illegal_request": 1, "step_limit": 3, "repeating": 3, "max_tokens": 4}


def _compact_at(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a fraction like 0.8 or a token count like 12000, not {text!r}"
        ) from None
    if value <= 0 or (value > 1 and not value.is_integer()):
        raise argparse.ArgumentTypeError(
            f"{text!r}: give a fraction of the window in (0, 1] like 0.8, or a whole token count like 12000"
        )
    return value


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, not {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="tiny-agent",
        description="Run an agent on a task in a workspace folder. Per-turn token, cache and cost lines go to stderr.",
    )
    p.add_argument("task", help="what the agent should do, in plain words")
    g = p.add_argument_group("provider")
    g.add_argument(
        "--provider", choices=PROVIDER_NAMES, help="default: from the environment's API keys, else the local model"
    )
    g.add_argument("--model", help="model id, or a .gguf file for the local provider (default: the provider's)")
    g.add_argument("--base-url", help="API base URL, e.g. a llama.cpp server's http://127.0.0.1:8080/v1")
    g.add_argument("--max-tokens", type=_positive, help="cap on output tokens per call")
    w = p.add_argument_group("workspace and rules")
    w.add_argument("--workspace", default=".", help="folder the tools are confined to (default: current folder)")
    w.add_argument("--protect", action="append", default=[], metavar="GLOB", help="write_file refuses these paths")
    w.add_argument("--pin", action="append", default=[], metavar="TEXT", help="a constraint kept in every request")
    w.add_argument(
        "--max-output-chars", type=_positive, help="cut tool output beyond this (default 20000, less for small windows)"
    )
    c = p.add_argument_group("context")
    c.add_argument("--max-steps", type=_positive, default=30, help="model calls before the run stops (default 30)")
    c.add_argument("--compact-at", type=_compact_at, default=0.8, help="fraction of the window, or tokens")
    c.add_argument("--keep-turns", type=_positive, default=4, help="newest turns kept verbatim on compaction")
    c.add_argument("--context-window", type=_positive, help="override the model's context window (tokens)")
    o = p.add_argument_group("output")
    o.add_argument("-q", "--quiet", action="store_true", help="print only the answer")
    o.add_argument("-v", "--verbose", action="store_true", help="debug logging to stderr")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["local"]:
        return local_main(argv[1:])
    parser = build_parser()
    args = parser.parse_args(argv)
    if not args.task.strip():
        parser.error("the task is empty: say what the agent should do")
    err = _stderr(args.verbose)
    _exit_on_sigterm()
    try:
        workspace = Workspace(args.workspace, protect=args.protect, max_output_chars=args.max_output_chars or 20_000)
        options: dict[str, Any] = {"max_tokens": args.max_tokens} if args.max_tokens else {}
        provider = resolve_provider(args.provider, model=args.model, base_url=args.base_url, **options)
        context_config = ContextConfig(
            compact_at=args.compact_at, keep_turns=args.keep_turns, context_window=args.context_window
        )
        with contextlib.ExitStack() as stack:
            if isinstance(provider, LocalProvider):
                stack.enter_context(provider)
            window = args.context_window or provider.context_window()
            if window and not args.max_output_chars:
                # One tool result may take about a quarter of a small window (~3 chars a token).
                workspace.max_output_chars = min(workspace.max_output_chars, window * 3 // 4)
            return _run(args, provider, workspace, context_config, err)
    except TinyAgentError as exc:  # configuration, or a local server that would not start
        return _failed(err, "tiny-agent", exc)
    except KeyboardInterrupt:
        err.print("tiny-agent: interrupted", markup=False)
        return 130


def _run(args: argparse.Namespace, provider: Any, workspace: Workspace, config: ContextConfig, err: Console) -> int:
    def show(event: Event) -> None:
        if not args.quiet:
            err.print(format_event(event), markup=False)

    agent = Agent(
        provider,
        Toolbox(workspace.tools()),
        config=AgentConfig(max_steps=args.max_steps),
        context_config=config,
        pins=args.pin,
        on_event=show,
    )
    if not args.quiet:
        where = f" · {provider.base_url}" if isinstance(provider, LocalProvider) else ""
        err.print(f"[{provider.name} · {provider.model}{where} · workspace {workspace.root}]", markup=False)
    result = agent.run(args.task)
    if not args.quiet:
        err.print(format_totals(agent.context.ledger), markup=False)
    if result.answer:
        print(result.answer)
    if result.stop != "done":
        err.print(f"tiny-agent: {result.message}", markup=False)
    return EXIT_CODES[result.stop]


def _exit_on_sigterm() -> None:
    """SIGTERM becomes SystemExit, so a server this process started is stopped on the way out."""
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))


def _failed(err: Console, prog: str, exc: TinyAgentError) -> int:
    """One line for the user; 2 when they must change something, 1 for a runtime failure."""
    err.print(f"{prog}: {exc}", markup=False)
    return 2 if isinstance(exc, ConfigError) else 1


def _stderr(verbose: bool) -> Console:
    err = Console(stderr=True, highlight=False, soft_wrap=True)
    logging.basicConfig(
        level=logging.DEBUG if verbose else logging.WARNING,
        format="%(message)s",
        handlers=[RichHandler(console=err, show_path=False)],
    )
    return err


def local_main(argv: Sequence[str]) -> int:
    """``tiny-agent local start|stop|status``: one warm llama.cpp server that outlives runs, so a
    second run within minutes reads the system prompt from the server's KV cache."""
    p = argparse.ArgumentParser(prog="tiny-agent local", description=local_main.__doc__)
    p.add_argument("action", choices=["start", "stop", "status"])
    p.add_argument("--model", help="a .gguf file (default: the embedded SmolLM2-135M)")
    p.add_argument("--ctx-size", type=_positive, default=llama_server.DEFAULT_CTX_SIZE, help="context window")
    args = p.parse_args(argv)
    err = _stderr(False)
    _exit_on_sigterm()
    try:
        if args.action == "start":
            model = llama_server.check_model(args.model) if args.model else llama_server.find_default_model()
            warm = llama_server.start_warm_server(model, ctx_size=args.ctx_size)
            print(f"running: pid {warm.pid} · {warm.base_url} · {warm.model}")
        elif args.action == "stop":
            stopped = llama_server.stop_warm_server()
            print(f"stopped pid {stopped.pid}" if stopped else "no warm server was running")
        else:
            found = llama_server.read_warm_server()
            print(f"running: pid {found.pid} · {found.base_url} · {found.model}" if found else "not running")
            return 0 if found else 3
    except TinyAgentError as exc:
        return _failed(err, "tiny-agent local", exc)
    return 0


if __name__ == "__main__":
    sys.exit(main())
