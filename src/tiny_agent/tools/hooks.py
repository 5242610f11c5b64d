"""Hooks: commands run at the events of a run, told what happens as JSON on stdin (as Claude Code's are).

Events (Claude Code's names): ``SessionStart`` (a run opened its session), ``PreToolUse`` and
``PostToolUse`` (around each tool call; ``matcher``, a regular expression, picks tools by name),
``PreCompact`` and ``PostCompact`` (around each compaction, the policy's or a ``/compact``),
``Stop`` (a run ended). A hook runs through the shell in the workspace folder, with the user's
environment plus ``TINY_AGENT_SESSION_ID`` and ``TINY_AGENT_HOOK_EVENT``, and gets ``timeout``
seconds; what it says back:

- ``PreToolUse``: exit 2 refuses the call, its stderr the reason the model reads as the call's
  error result; so does exit 0 with ``{"decision": "block", "reason": "..."}`` on stdout (or
  Claude Code's ``hookSpecificOutput.permissionDecision: "deny"``). The tool does not run.
- ``PreCompact``: what it prints (exit 0) is added to the summary's instructions.
- ``PostCompact`` sees the new window's size (``tokens_after``, ``context_window``).

A hook that fails (another exit code, a command that cannot start) or hangs past its timeout
(its whole process group is killed) is one line for the user, and the run goes on as if it had
not been there: a failing ``PreToolUse`` hook does not refuse the call.

Hooks do not grow the loop: the tool hooks wrap the toolbox (``HookedToolbox``), the compaction
hooks are the context's (``Context.hooks``), and the run fires the other two (``Run``).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import shlex
import signal
import subprocess
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from tiny_agent.context.shrink.compaction import Compaction, CompactionStart
from tiny_agent.errors import ConfigError
from tiny_agent.redaction import redact
from tiny_agent.tools.toolbox import Tool, Toolbox
from tiny_agent.types import ToolResultBlock, ToolUseBlock

__all__ = ["DEFAULT_HOOK_TIMEOUT", "HOOK_EVENTS", "Hook", "HookedToolbox", "Hooks"]

logger = logging.getLogger(__name__)

HOOK_EVENTS = ("SessionStart", "PreToolUse", "PostToolUse", "PreCompact", "PostCompact", "Stop")
DEFAULT_HOOK_TIMEOUT = 60.0
"""Seconds a hook may run before it is killed."""
REFUSE = 2
"""The exit code by which a ``PreToolUse`` hook refuses a call."""
_REAP_SECONDS = 5.0


@dataclass(frozen=True, kw_only=True)
class Hook:
    """A command run at ``event`` (one of ``HOOK_EVENTS``)."""

    event: str
    command: str
    matcher: str | None = None
    """For the tool events: a regular expression the whole tool name must match; None: every tool."""
    timeout: float = DEFAULT_HOOK_TIMEOUT
    origin: str = ""
    """Where it was configured (a flag, a file's key), for messages."""

    def __post_init__(self) -> None:
        where = f"{self.origin}: " if self.origin else ""
        if self.event not in HOOK_EVENTS:
            raise ConfigError(f"{where}unknown hook event {self.event!r}; the events are: {', '.join(HOOK_EVENTS)}")
        if not self.command.strip():
            raise ConfigError(f"{where}a {self.event} hook needs a command")
        if not self.timeout > 0:
            raise ConfigError(f"{where}a hook's timeout must be more than 0 seconds, not {self.timeout}")
        if self.matcher is not None:
            try:
                re.compile(self.matcher)
            except re.error as exc:
                problem = f"the hook's matcher {self.matcher!r} is not a regular expression: {exc}"
                raise ConfigError(f"{where}{problem}") from exc

    @staticmethod
    def parse(spec: str) -> Hook:
        """``EVENT=COMMAND`` or ``EVENT:MATCHER=COMMAND`` (the ``--hook`` flag)."""
        head, sep, command = spec.partition("=")
        event, _, matcher = head.strip().partition(":")
        if not sep or not event:
            raise ConfigError(f"--hook {spec!r}: give EVENT=COMMAND, e.g. --hook 'PreToolUse=python check.py'")
        return Hook(event=event, command=command.strip(), matcher=matcher or None, origin=f"--hook {spec!r}")

    def applies_to(self, tool: str | None) -> bool:
        return self.matcher is None or tool is None or re.fullmatch(self.matcher, tool) is not None

    @property
    def shown(self) -> str:
        return f"{self.event} hook {shlex.quote(self.command) if ' ' in self.command else self.command}"


@dataclass(frozen=True)
class _Ran:
    code: int | None
    """The exit code; None: it did not finish (killed at its timeout) or did not start."""
    stdout: str
    stderr: str


class Hooks:
    """The hooks of a run, and what each event tells them. ``report`` gets a line for each hook
    that failed (the CLI prints it; by default it is logged as a warning)."""

    def __init__(
        self,
        hooks: Iterable[Hook],
        *,
        cwd: str,
        report: Callable[[str], None] | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.hooks = tuple(hooks)
        self.cwd = cwd
        self.report = report or (lambda line: logger.warning("%s", line))
        self.env = dict(os.environ if env is None else env)
        self.session_id = ""

    def __bool__(self) -> bool:
        return bool(self.hooks)

    def fire(self, event: str, details: Mapping[str, Any], tool: str | None = None) -> list[tuple[Hook, _Ran]]:
        """Run the hooks of ``event`` (for ``tool``), in order; each one's outcome. A hook that
        failed has been reported."""
        payload = {"hook_event_name": event, "session_id": self.session_id, "cwd": self.cwd, **details}
        text = json.dumps(payload, ensure_ascii=False, default=str)
        out = []
        for hook in self.hooks:
            if hook.event == event and hook.applies_to(tool):
                ran = self._run(hook, text)
                out.append((hook, ran))
                if event == "PreToolUse" and _refusal(ran) is not None:
                    break
        return out

    def _run(self, hook: Hook, payload: str) -> _Ran:
        env = {**self.env, "TINY_AGENT_SESSION_ID": self.session_id, "TINY_AGENT_HOOK_EVENT": hook.event}
        try:
            process = subprocess.Popen(
                hook.command,
                shell=True,
                cwd=self.cwd,
                env=env,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                encoding="utf-8",
                errors="replace",
                start_new_session=True,  # its own process group: a timeout kills what it started too
            )
        except OSError as exc:
            self.report(f"{hook.shown} could not start: {exc.strerror or exc}")
            return _Ran(None, "", "")
        try:
            stdout, stderr = process.communicate(payload, timeout=hook.timeout)
        except subprocess.TimeoutExpired:
            _kill_group(process)
            self.report(f"{hook.shown} did not finish within {hook.timeout:g}s and was stopped; the run goes on")
            return _Ran(None, "", "")
        except BaseException:
            _kill_group(process)
            raise
        ran = _Ran(process.returncode, stdout, stderr)
        if ran.code != 0 and not (ran.code == REFUSE and hook.event == "PreToolUse"):
            said = _last_line(stderr) or _last_line(stdout)
            self.report(f"{hook.shown} failed (exit {ran.code}){f': {said}' if said else ''}; the run goes on")
        return ran

    # -- the events ----------------------------------------------------------------------------

    def session_start(self, source: str, **details: Any) -> None:
        self.fire("SessionStart", {"source": source, **details})

    def refusal(self, call: ToolUseBlock, server: str) -> str | None:
        """Why a ``PreToolUse`` hook refused ``call``, or None to let it run."""
        details = {"tool_name": call.name, "tool_input": dict(call.input), "tool_use_id": call.id}
        for hook, ran in self.fire("PreToolUse", {**details, "mcp_server": server or None}, call.name):
            broken = _unparsed(ran)
            if broken is not None:
                self.report(f"{hook.shown} printed JSON that does not parse ({broken}); its decision is ignored")
            reason = _refusal(ran)
            if reason is not None:
                return reason or f"refused by the {hook.shown}"
        return None

    def tool_done(self, call: ToolUseBlock, result: ToolResultBlock, server: str) -> None:
        details = {"tool_name": call.name, "tool_input": dict(call.input), "tool_use_id": call.id}
        response = {"content": result.content, "is_error": result.is_error}
        self.fire("PostToolUse", {**details, "mcp_server": server or None, "tool_response": response}, call.name)

    def before_compaction(self, start: CompactionStart) -> str:
        """What ``PreCompact`` hooks add to the summary's instructions."""
        said = [ran.stdout.strip() for _, ran in self.fire("PreCompact", start.to_dict()) if ran.code == 0]
        return "\n".join(text for text in said if text)

    def after_compaction(self, start: CompactionStart, compaction: Compaction) -> None:
        details = {**start.to_dict(), "tokens_after": compaction.tokens_after, "summary_chars": len(compaction.summary)}
        self.fire("PostCompact", details)

    def stop(self, **details: Any) -> None:
        self.fire("Stop", details)


class HookedToolbox(Toolbox):
    """A toolbox whose calls pass ``PreToolUse`` hooks first (which may refuse them) and
    ``PostToolUse`` hooks after."""

    def __init__(self, tools: Iterable[Tool], hooks: Hooks) -> None:
        super().__init__(tools)
        self.hooks = hooks

    def run(self, call: ToolUseBlock) -> ToolResultBlock:
        server = self.source(call.name)
        reason = self.hooks.refusal(call, server)
        if reason is not None:
            return self.bounded(call, ToolResultBlock(call.id, f"refused by a hook: {reason}", is_error=True))
        result = super().run(call)
        self.hooks.tool_done(call, result, server)
        return result


def _refusal(ran: _Ran) -> str | None:
    """The reason a ``PreToolUse`` hook's outcome refuses the call ("" when it gave none), or None."""
    if ran.code == REFUSE:
        return redact(ran.stderr.strip() or ran.stdout.strip())
    if ran.code != 0 or not ran.stdout.lstrip().startswith("{"):
        return None
    try:
        said = json.loads(ran.stdout)
    except ValueError:
        return None
    if not isinstance(said, dict):
        return None
    specific = said.get("hookSpecificOutput")
    if isinstance(specific, dict) and specific.get("permissionDecision") == "deny":
        return redact(str(specific.get("permissionDecisionReason") or ""))
    if said.get("decision") in ("block", "deny"):
        return redact(str(said.get("reason") or ""))
    return None


def _unparsed(ran: _Ran) -> str | None:
    """Why the JSON a hook that succeeded printed does not parse (a guard with a typo would
    otherwise allow everything without a word), or None."""
    if ran.code != 0 or not ran.stdout.lstrip().startswith("{"):
        return None
    try:
        json.loads(ran.stdout)
    except ValueError as exc:
        return str(exc)
    return None


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return redact(lines[-1])[:200] if lines else ""


def _kill_group(process: subprocess.Popen[str]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    try:
        process.communicate(timeout=_REAP_SECONDS)
    except subprocess.TimeoutExpired:  # a child that left the group still holds the pipes
        logger.debug("a hook's output pipes stayed open after it was killed")
