"""The ``tiny-agent`` command: parse flags, wire the library together, print. No logic of its own.

    tiny-agent "read README.md then tell me what it is about"     (the default command: run)
    tiny-agent chat | sessions ... | stats [ID...] | replay ID | local start|stop|status | lint FILE.json

A user's mistake is one line that says what to fix (exit 2), never a traceback.
"""

from __future__ import annotations

import json
import re
import signal
import sys
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version
from typing import Any

import click
from click_default_group import DefaultGroup

from tiny_agent.agent.loop import RunResult
from tiny_agent.cli.config_file import with_file_settings
from tiny_agent.cli.options import agent_options, given
from tiny_agent.cli.printer import Printer, WarningLines, streams
from tiny_agent.cli.runtime import Runtime, open_runtime
from tiny_agent.cli.task_input import piped_task, stdin_is_terminal
from tiny_agent.cli.typos import refuse_a_misspelt_command
from tiny_agent.errors import ConfigError, StoreError, TinyAgentError
from tiny_agent.text import from_os

__all__ = ["EXIT_CODES", "app", "main"]

EXIT_CODES = {
    "done": 0,
    "provider_error": 1,
    "illegal_request": 1,
    "step_limit": 3,
    "repeating": 3,
    "max_tokens": 4,
    "budget": 5,
    "refused": 6,
    "empty": 6,
    "interrupted": 130,
    "too_large": 2,
}

EPILOG = """\b
Environment:
  ANTHROPIC_API_KEY, OPENAI_API_KEY, DEEPSEEK_API_KEY, MOONSHOT_API_KEY
                      choose the provider when --provider is not given (in this order);
                      none set: the embedded local model
  OPENAI_BASE_URL, ANTHROPIC_BASE_URL   another endpoint for that provider
  TINY_AGENT_STORE    the session store: a file, or a postgresql:// URL (like --store);
                      its password: PGPASSWORD or ~/.pgpass, never shown
  TINY_AGENT_MODEL    the local model's .gguf file
  TINY_AGENT_LLAMA_SERVER   the llama-server binary of the local provider
  LLAMA_API_KEY       the key of a llama-server given with --provider local --base-url
  TINY_AGENT_CACHE_MIN_TOKENS   per-model minimum cacheable prompt, e.g. claude-sonnet-4-6=2048
  OTEL_EXPORTER_OTLP_ENDPOINT   send OpenTelemetry spans there (like --otel; needs the otel extra)

\b
Exit codes:
  0 done · 1 provider or protocol failure · 2 usage or configuration error (bad flag, key,
  store) · 3 step limit, or the model repeating a failing call · 4 reply cut at the output
  limit · 5 budget spent · 6 no answer (empty reply or refusal) · 130 interrupted
  (a request too large for the window is never sent: 2)
"""


def _version() -> str:
    try:
        return version("tiny-agent")
    except PackageNotFoundError:
        return "unknown"


def _app() -> None:
    """An agent whose heart is a context engine. Per-turn token, cache and cost lines go to stderr.

    Without a command, runs TASK (see: tiny-agent run --help). With no task on a terminal, opens a chat.
    """


class _Group(DefaultGroup):  # type: ignore[misc]  # click-default-group has no types
    """The default group, where options written before a command go to that command:
    ``tiny-agent --store URL sessions list`` lists sessions rather than running the task
    "sessions list" (which costs a model call) with that store."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        refuse_a_misspelt_command(self, args)
        parsed: list[str] = super().parse_args(ctx, _command_first(self, ctx, args))
        return parsed


def _command_first(group: click.Group, ctx: click.Context, args: list[str]) -> list[str]:
    """``args`` with a command name that follows only options (and their values) moved to the front,
    as ``tiny-agent stats`` alone would take it; a word that is an option's value stays put
    (``--provider local`` names a provider, not the ``local`` command)."""
    run = group.commands["run"]
    for at, word in enumerate(args):
        if at == 0 or word not in group.commands or word == "run":
            continue
        try:
            values, rest, _ = run.make_parser(click.Context(run, parent=ctx)).parse_args(list(args[: at + 1]))
        except click.UsageError:
            return args
        task = values.get("task")
        positional = [*(task if isinstance(task, tuple | list) else ()), *rest]
        if not positional:
            continue  # the value of the option before it
        if positional != [word]:
            return args  # a task came first: the word is part of it
        command, after = [word], args[at + 1 :]
        sub = group.commands[word]
        if isinstance(sub, click.Group) and after and after[0] in sub.commands:
            command, after = [word, after[0]], after[1:]  # `sessions list`: the options are list's
        return [*command, *args[:at], *after]
    return args


app: click.Group = click.group(
    cls=_Group,
    default="run",
    default_if_no_args=True,
    epilog=EPILOG,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)(click.version_option(_version(), "--version", prog_name="tiny-agent", message="%(prog)s %(version)s")(_app))


@app.command("run", epilog=EPILOG, context_settings={"max_content_width": 100})
@click.argument("task", nargs=-1)
@agent_options
@click.pass_context
def run_command(ctx: click.Context, /, task: tuple[str, ...], **opts: Any) -> int:
    """Run TASK in the workspace until the model answers. TASK "-" (or none, with input piped in)
    reads the task from stdin; with both, the piped text is added below the task as context."""
    opts = with_file_settings(ctx, opts)
    if opts.get("otel") and len(task) > 1 and re.fullmatch(r"https?://\S+", task[0]):
        raise click.UsageError(
            f"--otel takes no value ({task[0]} would start the task): send spans elsewhere with "
            f"OTEL_EXPORTER_OTLP_ENDPOINT={task[0]}"
        )
    text = piped_task(task)
    if text is None:
        if stdin_is_terminal() and not opts["as_json"]:
            from tiny_agent.cli.chat import chat_loop

            return chat_loop(ctx, opts)
        raise click.UsageError("no task: say what the agent should do, or pipe it in")
    if not text.strip():
        raise click.UsageError("the task is empty: say what the agent should do")
    if opts["as_json"] and opts["no_stream"] is False and given(ctx, "no_stream"):
        raise click.UsageError("--json prints the answer inside one object: leave out --stream")
    printer = _printer(opts)
    try:
        runtime = open_runtime(ctx, opts, printer)
        try:
            _header(printer, runtime)
            result = runtime.run(text)
            return _finish(printer, runtime, result, opts)
        finally:
            runtime.close()
    finally:
        printer.close()


def _printer(opts: dict[str, Any]) -> Printer:
    stream = not opts["as_json"] and streams(opts["no_stream"])  # a file's no_stream = false yields to --json
    quiet = opts["quiet"] or opts["as_json"]
    return Printer(quiet=quiet, verbose=opts["verbose"], stream=stream, show_thinking=bool(opts.get("show_thinking")))


def _header(printer: Printer, runtime: Runtime) -> None:
    provider = runtime.provider
    profile = provider.profile
    where = f" · {profile.cache_home}" if profile.cache_home else ""
    session = f" · session {runtime.session.id[:12]}" if runtime.session else ""
    printer.info(f"[{profile.name} · {profile.model}{where} · workspace {runtime.workspace.root}{session}]")
    for server in runtime.toolset.describe() if runtime.toolset is not None else ():
        printer.info(f"[{server}]")
    for note in runtime.notes:
        printer.line(f"tiny-agent: {note}")


def _finish(printer: Printer, runtime: Runtime, result: RunResult, opts: dict[str, Any]) -> int:
    ledger = runtime.context.ledger
    code = EXIT_CODES[result.stop]
    kept = runtime.session if runtime.session is not None and runtime.context.messages else None  # else removed
    if result.stop == "interrupted" and _TERMINATED:
        code = 128 + signal.SIGTERM
    if isinstance(result.error, ConfigError):
        code = 2  # a wrong key is the user's to fix, like a bad flag
    printer.totals(ledger)
    if opts["as_json"]:
        total = ledger.total
        payload = {
            "answer": result.answer,
            "stop": result.stop,
            "message": result.message,
            "exit_code": code,
            "steps": result.steps,
            "session": kept.id if kept else None,
            "tokens": {
                "input": total.input_tokens,
                "output": total.output_tokens,
                "cache_read": total.cache_read_tokens,
                "cache_write": total.cache_write_tokens,
                "reasoning": total.reasoning_tokens,
            },
            "thinking": printer.thoughts,
            "cost_usd": ledger.total_cost_usd,
            "calls": len(ledger.calls),
        }
        print(json.dumps(payload, ensure_ascii=False))
    else:
        printer.answer(result.answer)
    if result.stop != "done":
        printer.line(f"tiny-agent: {result.message}")
    if kept is not None and not opts["as_json"]:
        sid = kept.id[:12]
        if result.stop == "budget" and runtime.agent.budget is not None:
            more = f"{runtime.agent.budget.suggested(runtime.context):.2f}"  # what the next call needs
            printer.line(f'resume with a higher budget: tiny-agent --resume {sid} --budget-usd {more} "continue"')
        else:
            printer.info(f'session {sid} · continue with: tiny-agent --resume {sid} "..."')
    return code


class _Terminated(KeyboardInterrupt):
    """SIGTERM, delivered like Ctrl-C so the run ends cleanly (totals printed, session closed, server stopped)."""


_TERMINATED: list[int] = []


def _on_sigterm(signum: int, frame: object) -> None:
    _TERMINATED.append(signum)
    raise _Terminated()


def main(argv: Sequence[str] | None = None) -> int:
    """The console entry point; returns the exit code."""
    args = [from_os(word) for word in (sys.argv[1:] if argv is None else argv)]  # a word that is not UTF-8
    previous = signal.getsignal(signal.SIGTERM)
    signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        with WarningLines(lambda line: print(line, file=sys.stderr)):  # a run's Printer puts its own
            result = app.main(args, prog_name="tiny-agent", standalone_mode=False)
    except click.exceptions.Exit as done:
        return int(done.exit_code)
    except click.UsageError as exc:
        hint = f" (see: {exc.ctx.command_path} --help)" if exc.ctx is not None else ""
        return _failed(args, f"{exc.format_message()}{hint}", 2)
    except click.ClickException as exc:
        return _failed(args, exc.format_message(), exc.exit_code)
    except _Terminated:
        return _failed(args, "terminated", 128 + signal.SIGTERM)
    except (KeyboardInterrupt, click.exceptions.Abort):
        return _failed(args, "interrupted", 130)
    except TinyAgentError as exc:
        from tiny_agent.redaction import redact

        return _failed(args, redact(str(exc)), 2 if isinstance(exc, ConfigError | StoreError) else 1)
    finally:
        signal.signal(signal.SIGTERM, previous)
    return int(result or 0)


def _failed(args: Sequence[str], line: str, code: int) -> int:
    """The one line on stderr; with ``run --json``, the result object on stdout too (a script reads
    one object whatever happened)."""
    print(f"tiny-agent: {line}", file=sys.stderr)
    words = list(args[: args.index("--")] if "--" in args else args)
    other = any(word in app.commands and word != "run" for word in words)  # sessions show --json: its own
    if "--json" in words and not other:
        payload = {"answer": "", "stop": "error", "message": line, "exit_code": code, "steps": 0, "session": None}
        print(json.dumps({**payload, "cost_usd": None, "calls": 0}, ensure_ascii=False))
    return code


def _register_commands() -> None:
    from tiny_agent.cli import chat, config, lint, local, record, replay, sessions, stats, view

    app.add_command(chat.chat_command)
    app.add_command(config.config_group)
    app.add_command(replay.replay_command)
    app.add_command(sessions.sessions_group)
    app.add_command(stats.stats_command)
    app.add_command(local.local_group)
    app.add_command(lint.lint_command)
    app.add_command(view.view_command)
    app.add_command(record.record_command)


_register_commands()
