"""``tiny-agent chat``: talk to the agent, turn by turn, on a stored session.

Each message runs the agent loop until the model answers; the reply streams in, and tool calls and
per-turn lines show as they happen. Ctrl-C during a turn cancels that turn only (the session stays
legal and stored); Ctrl-C twice at an empty prompt, or Ctrl-D, leaves. Slash commands look at and
steer the context; each is a library call (``inspect_context``, ``Context.compact``, ``pin`` ...).
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
import platformdirs

from tiny_agent.agent.events import CompactionEvent, Event, call_events
from tiny_agent.cli.config_file import with_file_settings
from tiny_agent.cli.options import agent_options
from tiny_agent.cli.printer import Printer, streams
from tiny_agent.cli.runtime import Runtime, open_runtime
from tiny_agent.context.session import Session
from tiny_agent.errors import CompactionError, ConfigError, TinyAgentError
from tiny_agent.observe.call_lines import format_cost, format_event
from tiny_agent.observe.inspect import inspect_context
from tiny_agent.text import decode

__all__ = ["COMMANDS", "chat_command", "chat_loop"]

COMMANDS = {
    "/context": "what the next request holds, layer by layer, and what the cache will read",
    "/compact [N]": "compact now, keeping the newest N turns",
    "/cost": "the session's tokens by class, dollars, and what caching saved",
    "/pin TEXT": "add a constraint kept in every request",
    "/pins": "list the pinned constraints",
    "/unpin N": "remove pin number N",
    "/fork": "go on in a fork of this session (the original stays as it is)",
    "/sessions": "the newest sessions",
    "/help": "this list",
    "/quit": "leave (Ctrl-D does too)",
}


@click.command("chat")
@agent_options
@click.pass_context
def chat_command(ctx: click.Context, /, **opts: Any) -> int:
    """Talk to the agent on a new session (or -c / --resume ID to go on with one)."""
    return chat_loop(ctx, with_file_settings(ctx, opts))


def chat_loop(click_ctx: click.Context, opts: dict[str, Any]) -> int:
    printer = Printer(
        verbose=opts["verbose"], stream=streams(opts["no_stream"]), show_thinking=bool(opts.get("show_thinking"))
    )
    try:
        runtime = open_runtime(click_ctx, opts, printer, keepalive="auto")
    except BaseException:
        printer.close()
        raise
    try:
        provider = runtime.provider
        session = f" · session {runtime.session.id[:12]}" if runtime.session else ""
        printer.line(
            f"[{provider.profile.name} · {provider.profile.model} · workspace {runtime.workspace.root}{session}]"
        )
        for server in runtime.toolset.describe() if runtime.toolset is not None else ():
            printer.line(f"[{server}]")
        for note in runtime.notes:
            printer.line(f"tiny-agent: {note}")
        printer.line("type a message; /help for commands; Ctrl-D to leave")
        _converse(runtime, printer, _reader())
    finally:
        if runtime.session is not None:
            sid = runtime.session.id[:12]
            printer.line(f"session {sid} · come back with: tiny-agent chat --resume {sid}")
        runtime.close()
        printer.close()
    return 0


def _converse(runtime: Runtime, printer: Printer, read: Callable[[], str]) -> None:
    # The keepalive pings while the user thinks; its lines wait until the prompt is answered (a line
    # printed from its thread would land in the middle of what the user is typing), or the chat ends:
    # every billed call gets its line.
    said: list[Event] = []
    if runtime.keepalive is not None:
        runtime.keepalive.on_event = said.append
    try:
        _turns(runtime, printer, read, said)
    finally:
        for event in said:
            printer.event(event)


def _turns(runtime: Runtime, printer: Printer, read: Callable[[], str], said: list[Event]) -> None:
    commands = Commands(runtime, printer)
    interrupts = 0
    idle = runtime.keepalive.idle if runtime.keepalive is not None else contextlib.nullcontext
    while True:
        try:
            with idle():
                text = read()
        except KeyboardInterrupt:
            interrupts += 1
            if interrupts >= 2:
                return
            printer.line("(Ctrl-C again, or Ctrl-D, to leave)")
            continue
        except EOFError:
            return
        interrupts = 0
        for event in said:
            printer.event(event)
        said.clear()
        if not text.strip():
            continue
        if text.lstrip().startswith("/"):
            try:
                if commands.run(text.strip()) == "quit":
                    return
            except KeyboardInterrupt:
                # Only a command that calls the model (/compact) takes long enough to be interrupted;
                # the log then holds the failed call and no compaction, and the chat goes on.
                printer.line(f"({text.split()[0]} interrupted; the conversation is as it was)")
            continue
        result = runtime.run(text)
        printer.answer(result.answer)
        if result.stop == "interrupted":
            printer.line(f"(turn interrupted{'; ' + result.detail if result.detail else ''}; the conversation is kept)")
        elif result.stop != "done":
            printer.line(f"tiny-agent: {result.message}")


class Commands:
    """The slash commands, each a thin call into the library."""

    def __init__(self, runtime: Runtime, printer: Printer) -> None:
        self.runtime = runtime
        self.printer = printer

    def run(self, line: str) -> str | None:
        name, _, arg = line.partition(" ")
        handler = {
            "/context": self.context,
            "/compact": self.compact,
            "/cost": self.cost,
            "/pin": self.pin,
            "/pins": self.pins,
            "/unpin": self.unpin,
            "/fork": self.fork,
            "/sessions": self.sessions,
            "/help": self.help,
        }.get(name)
        if name in ("/quit", "/exit"):
            return "quit"
        if handler is None:
            self.printer.line(f"unknown command {name}; commands: {', '.join(c.split()[0] for c in COMMANDS)}")
            return None
        try:
            handler(arg.strip())
        except TinyAgentError as exc:
            self.printer.line(f"{name}: {exc}")
        return None

    def context(self, arg: str) -> None:
        report = inspect_context(self.runtime.context, self.runtime.provider)
        for row in report.lines():
            self.printer.line(row)

    def compact(self, arg: str) -> None:
        keep = _number(arg, "/compact N") if arg else None
        ctx, provider = self.runtime.context, self.runtime.provider
        before_calls = len(ctx.ledger.calls)
        self.printer.line("compacting: the model is writing the summary (Ctrl-C cancels)")
        try:
            # No summarizer of its own: the automatic compaction's path, which asks at the end of the
            # cached window (a cache read) and falls back to the transcript only when that cannot be.
            done = ctx.compact(keep_turns=keep, provider=provider)
        except CompactionError as exc:
            self._call_lines(before_calls)
            self.printer.line(f"/compact: {exc}")
            return
        self._call_lines(before_calls)
        if done is None:
            self.printer.line("/compact: nothing to compact yet (too few turns)")
            return
        summary = tuple(c for c in ctx.ledger.calls[before_calls:] if c.purpose == "compaction")
        self.printer.line(format_event(CompactionEvent(done, summary)))  # the run's line, strategy and all

    def _call_lines(self, since: int) -> None:
        """A line for each call the ledger recorded since index ``since``, as a run prints them."""
        for event in call_events(self.runtime.context.ledger.calls[since:]):
            self.printer.line(format_event(event))

    def cost(self, arg: str) -> None:
        for row in format_cost(self.runtime.context.ledger, self.runtime.provider.profile.price):
            self.printer.line(row)

    def pin(self, arg: str) -> None:
        if not arg:
            raise ConfigError("say what to pin: /pin TEXT")
        self.runtime.context.pin(arg)
        self.printer.line(f"pinned ({len(self.runtime.context.pins)}): {arg}")

    def pins(self, arg: str) -> None:
        pins = self.runtime.context.pins
        for i, pin in enumerate(pins, 1):
            self.printer.line(f"{i}. {pin}")
        if not pins:
            self.printer.line("no pins; add one with /pin TEXT")

    def unpin(self, arg: str) -> None:
        removed = self.runtime.context.unpin(_number(arg, "/unpin N"))
        self.printer.line(f"unpinned: {removed}")

    def fork(self, arg: str) -> None:
        runtime = self.runtime
        if runtime.session is None or runtime.store is None:
            raise ConfigError("this chat is not stored (--no-session): there is nothing to fork")
        info = Session.fork(runtime.store, runtime.session.id)
        old = runtime.session.id
        runtime.switch_session(Session.resume(runtime.store, info.id))
        self.printer.line(f"now in fork {info.id[:12]} of {old[:12]} (the original stays as it was)")

    def sessions(self, arg: str) -> None:
        if self.runtime.store is None:
            raise ConfigError("this chat is not stored (--no-session)")
        for info in self.runtime.store.sessions(limit=10):
            mark = "*" if self.runtime.session and info.id == self.runtime.session.id else " "
            self.printer.line(f"{mark} {info.id[:12]}  {info.calls:>4} calls  {info.title[:60]}")

    def help(self, arg: str) -> None:
        for command, what in COMMANDS.items():
            self.printer.line(f"  {command:<14} {what}")
        self.printer.line("  Esc then Enter adds a line; Ctrl-C cancels a turn; Ctrl-C twice or Ctrl-D leaves")


def _number(text: str, usage: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise ConfigError(f"expected a number: {usage}") from None
    if value < 1:
        raise ConfigError(f"expected a number of at least 1: {usage}")
    return value


def _reader() -> Callable[[], str]:
    """A prompt with line editing and history on a terminal, plain lines otherwise."""
    if not sys.stdin.isatty():

        def plain() -> str:
            raw = getattr(sys.stdin, "buffer", None)
            line = str(decode(raw.readline())) if raw is not None else sys.stdin.readline()
            if not line:
                raise EOFError
            return line.rstrip("\n")

        return plain
    from prompt_toolkit import PromptSession
    from prompt_toolkit.history import FileHistory
    from prompt_toolkit.key_binding import KeyBindings

    bindings = KeyBindings()

    @bindings.add("c-c")
    def _cancel(event: Any) -> None:
        buffer = event.app.current_buffer
        if buffer.text:
            buffer.reset()
        else:
            event.app.exit(exception=KeyboardInterrupt)

    @bindings.add("escape", "enter")
    def _newline(event: Any) -> None:
        event.app.current_buffer.insert_text("\n")

    session: PromptSession[str] = PromptSession(history=FileHistory(str(_history_file())), key_bindings=bindings)
    return lambda: session.prompt("> ")


def _history_file() -> Path:
    folder = Path(platformdirs.user_data_dir("tiny-agent"))
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    path = folder / "chat_history"
    if not path.exists():
        os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o600))
    return path
