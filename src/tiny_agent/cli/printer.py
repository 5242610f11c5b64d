"""Everything the CLI prints: streamed text on stdout, one line per event on stderr, the totals.

The answer goes to stdout (streamed as it arrives on a terminal, printed whole otherwise); what the
engine did goes to stderr, so ``tiny-agent "..." > answer.txt`` keeps only the answer. Every line
passes through ``redact``: a key that a server echoed back never reaches the screen.
"""

from __future__ import annotations

import logging
import sys
import warnings
from collections.abc import Callable
from typing import TextIO

from rich.console import Console
from rich.logging import RichHandler

from tiny_agent.agent.loop import Event, ToolEvent, TurnEvent
from tiny_agent.agent.thinking_text import folded
from tiny_agent.context.tokens import TokenLedger
from tiny_agent.observe.call_lines import format_event, format_totals
from tiny_agent.redaction import redact
from tiny_agent.types import TextDelta, ThinkingDelta

__all__ = ["Printer", "WarningLines", "safe_text", "streams"]

THINKING_LABEL = "  thinking: "


def streams(no_stream: bool | None, out: TextIO | None = None) -> bool:
    """Whether the answer is printed as it arrives: as ``--stream`` or ``--no-stream`` say; given
    neither, only on a terminal (a pipe or a file gets it whole, once)."""
    if no_stream is not None:
        return not no_stream
    try:
        return (out or sys.stdout).isatty()
    except (AttributeError, ValueError):
        return False


def safe_text(text: str) -> str:
    """Text any terminal encoding can take: lone surrogates and the like become U+FFFD."""
    return text.encode("utf-8", "replace").decode("utf-8")


class _RedactingHandler(RichHandler):
    """Every log line and traceback with keys removed: an SDK exception kept as a cause can hold a
    server's echo of the key in its body. Works on a copy, so other handlers see the record as it was."""

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if record.levelno >= logging.WARNING and record.name.startswith("tiny_agent.") and not record.exc_info:
            # tiny-agent's own warnings are for the user, like its errors: one line each, never
            # wrapped (they can name a file to copy), without a time or level column.
            self.console.print(f"tiny-agent: {redact(message)}", markup=False, highlight=False, soft_wrap=True)
            return
        if record.exc_info:
            message = f"{message}\n{logging.Formatter().formatException(record.exc_info)}"
        copy = logging.makeLogRecord({**record.__dict__, "msg": redact(message), "args": (), "exc_info": None})
        copy.exc_text = None
        super().emit(copy)


class WarningLines:
    """Python warnings of the libraries under the CLI (an SDK's deprecation notice) as lines of ours,
    while it is entered: ``tiny-agent: warning: `` and the message's first line, each message once,
    without the ``file:line: Category:`` and source line Python prints. Still shown, never silenced."""

    def __init__(self, say: Callable[[str], None]) -> None:
        self.say = say
        self.seen: set[str] = set()
        self._previous: list[Callable[..., None]] = []

    def __enter__(self) -> WarningLines:
        self._previous.append(warnings.showwarning)
        warnings.showwarning = self.show
        return self

    def __exit__(self, *exc: object) -> None:
        if self._previous:
            warnings.showwarning = self._previous.pop()

    def show(self, message: Warning | str, category: type[Warning], *where: object, **_: object) -> None:
        text = next((line.strip() for line in str(message).splitlines() if line.strip()), category.__name__)
        if text not in self.seen:
            self.seen.add(text)
            self.say(f"tiny-agent: warning: {redact(text)}")


class Printer:
    """Prints a run for a person (or, with ``quiet``, only its answer)."""

    def __init__(
        self,
        *,
        quiet: bool = False,
        verbose: bool = False,
        stream: bool = False,
        out: TextIO | None = None,
        show_thinking: bool = False,
    ) -> None:
        self.quiet = quiet
        self.show_thinking = show_thinking
        """Print the model's thinking whole (dimmed); else folded to one line."""
        self.thoughts: list[str] = []
        """Each turn's thinking, in order (``--json`` carries it)."""
        self._thinking = ""
        """The streamed thinking of the turn in progress."""
        self._thinking_shown = False
        """Whether that thinking is on the screen already (before the answer streamed under it)."""
        self._open_thinking = False
        self.stream = stream
        """Whether answer text is printed as it arrives (then ``answer`` does not print it again)."""
        self.out = out or sys.stdout
        self.err = Console(stderr=True, highlight=False, soft_wrap=True)
        self._open_line = False
        self.streamed = ""
        handler = _RedactingHandler(console=self.err, show_path=False)
        root = logging.getLogger()
        sdk = logging.getLogger("mcp")
        self._restore = (root.level, list(root.handlers), sdk.level)
        root.handlers = [handler]
        root.setLevel(logging.DEBUG if verbose else logging.WARNING)
        # The MCP SDK logs a server's bad output with a traceback; the failure it leads to is one line of ours.
        sdk.setLevel(logging.DEBUG if verbose else logging.CRITICAL)
        # The pool's own warnings (one per failed reconnect, a traceback's worth each) say again what
        # the PostgreSQL store reports in one line.
        logging.getLogger("psycopg.pool").setLevel(logging.DEBUG if verbose else logging.ERROR)
        # The OTLP exporter logs each retry and failure at length; the telemetry says it in one line.
        logging.getLogger("opentelemetry").setLevel(logging.DEBUG if verbose else logging.CRITICAL)
        self._warnings = WarningLines(self.line).__enter__()  # a line of its own, also mid-answer

    def close(self) -> None:
        """Give the logging setup back as it was (the CLI configures it for one command only)."""
        self._warnings.__exit__()
        root = logging.getLogger()
        root.setLevel(self._restore[0])
        root.handlers = self._restore[1]
        logging.getLogger("mcp").setLevel(self._restore[2])

    def line(self, text: str) -> None:
        """One line on stderr (even in quiet mode: for errors and the session line)."""
        self._close_stream_line()
        self._close_thinking_line()
        self.err.print(safe_text(redact(text)), markup=False)

    def info(self, text: str) -> None:
        """A line on stderr that quiet mode leaves out."""
        if not self.quiet:
            self.line(text)

    def event(self, event: Event) -> None:
        if isinstance(event, ThinkingDelta):
            self._think(event.text)
            return
        if isinstance(event, TextDelta):
            if self.stream:
                self._show_thinking()
                self.out.write(safe_text(event.text))
                self.out.flush()
                self._open_line = not event.text.endswith("\n")
                self.streamed += event.text
            return
        if self.stream and isinstance(event, ToolEvent):
            self.streamed = ""  # text of a turn that went on to call tools is not the answer
        if isinstance(event, TurnEvent):
            self._close_thinking_line()
            if event.thinking:
                self.thoughts.append(event.thinking)
            if event.thinking and not self.quiet and not self._thinking_shown:
                self._thinking = event.thinking
                self._show_thinking()
            self._thinking, self._thinking_shown = "", False
        self.info(format_event(event))

    def answer(self, text: str) -> None:
        """The final answer on stdout, unless it was already streamed."""
        streamed, self.streamed = self.streamed, ""  # a chat's next turn starts afresh
        self._close_thinking_line()
        self._thinking, self._thinking_shown = "", False  # also after a turn cut in its thinking
        if self.stream and streamed and text.strip() == streamed.strip():
            self._close_stream_line()
            return
        self._close_stream_line()
        if text:
            print(safe_text(redact(text)), file=self.out, flush=True)

    def totals(self, ledger: TokenLedger) -> None:
        self.info(format_totals(ledger))

    def _think(self, text: str) -> None:
        """A piece of streamed thinking: on screen as it comes with ``show_thinking``, else kept
        until the answer starts streaming (its one folded line goes above the answer)."""
        if self.quiet or not self.stream:
            return
        self._thinking += text
        if self.show_thinking:
            if not self._thinking_shown:
                self._close_stream_line()
                self.err.print(THINKING_LABEL, style="dim", end="", markup=False, highlight=False)
            self.err.print(safe_text(redact(text)), style="dim", end="", markup=False, highlight=False)
            self._thinking_shown = self._open_thinking = True

    def _show_thinking(self) -> None:
        """The thinking so far on its own line, unless it is on the screen already."""
        self._close_thinking_line()
        if self._thinking and not self._thinking_shown and not self.quiet:
            # One line of the terminal (80 columns where stderr is not one), the label included.
            width = max(24, self.err.width - len(THINKING_LABEL))
            shown = self._thinking if self.show_thinking else folded(self._thinking, width)
            self._close_stream_line()
            self.err.print(f"{THINKING_LABEL}{safe_text(redact(shown))}", style="dim", markup=False, highlight=False)
            self._thinking_shown = True

    def _close_thinking_line(self) -> None:
        if self._open_thinking:
            self.err.print()
            self._open_thinking = False

    def _close_stream_line(self) -> None:
        if self._open_line:
            self.out.write("\n")
            self.out.flush()
            self._open_line = False
