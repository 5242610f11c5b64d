"""The settings of a run that a session remembers, each with its one default.

On a resume, a setting not given again keeps the session's value; one given again overrides it
(and the change is recorded). The defaults live here and in the classes they configure
(``ContextConfig``, ``AgentConfig``, the providers' ``DEFAULT_*``); the command line's help reads
them from there, so a default is written once.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from tiny_agent.agent.loop import DEFAULT_SYSTEM
from tiny_agent.providers.local.provider import LOCAL_TIMEOUT
from tiny_agent.providers.retry import DEFAULT_MAX_RETRIES, DEFAULT_TIMEOUT
from tiny_agent.tools.workspace import MAX_OUTPUT_CHARS

__all__ = [
    "DEFAULT_MAX_OUTPUT_CHARS",
    "DEFAULT_MAX_RETRIES",
    "DEFAULT_TIMEOUT",
    "LOCAL_TIMEOUT",
    "RUN_SETTINGS",
    "RunSettings",
    "compose_system",
    "looks_volatile",
]

DEFAULT_MAX_OUTPUT_CHARS = MAX_OUTPUT_CHARS
"""Tool output beyond this is cut (less for a small window: a quarter of it, at ~3 characters a token)."""

_VOLATILE = re.compile(
    r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}|\b\d{1,2}:\d{2}:\d{2}\b|"
    r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b|\b1[5-9]\d{8}\b",
    re.IGNORECASE,
)


@dataclass(frozen=True, kw_only=True)
class RunSettings:
    """What a session remembers about how it runs. None: not set (the default applies)."""

    provider: str | None = None
    """Profile name; None picks one from the environment's API keys, else the local model."""
    model: str | None = None
    """Model id, or a .gguf file for the local provider; None: the provider's default."""
    base_url: str | None = None
    """Another endpoint for the provider (stored without credentials or query)."""
    max_tokens: int | None = None
    """Cap on output tokens per call; None: the adapter's (4,096; 512 for the local model)."""
    cache_ttl: str | None = None
    """Anthropic's cache lifetime (``cache_rules.TTLS``); None: ``cache_rules.DEFAULT_TTL``."""
    api: str | None = None
    """OpenAI's API: "responses" or "chat"; None: responses for OpenAI's reasoning models at OpenAI."""
    server_compact_at: int | None = None
    """The server compacts the context past this many input tokens: the Responses API
    (``context_management`` compaction) and Anthropic (``compact_20260112``, at least 50,000);
    None: only tiny-agent's own compaction."""
    workspace: str | None = None
    """The folder the tools are confined to; None: the current folder."""
    protect: tuple[str, ...] = ()
    """Globs write_file refuses, on top of the defaults."""
    allow_read: tuple[str, ...] = ()
    """Globs of secret-looking files read_file may read anyway."""
    default_protect: bool | None = None
    """False lifts the default write protection (.git/ hooks and config, ...)."""
    max_output_chars: int | None = None
    """Tool output beyond this is cut; None: ``DEFAULT_MAX_OUTPUT_CHARS``, less for a small window."""
    code_tools: bool | None = None
    """False offers only read_file, write_file and list_dir (no edit_file, no search); None: all five."""
    allow_shell: str | None = None
    """The shell tool: "off" (None: off), "ask" (each command approved on the terminal), "yes" (run
    without asking); see ``tools.shell``. Remembered, so a resumed session keeps its tools."""
    appended_system: str | None = None
    """What the last ``--append-system`` added to the system prompt (a resume replaces it, not piles up)."""
    thinking: str | None = None
    """``off``, ``adaptive`` or a budget of tokens (>= 1024); None: the model's default."""
    thinking_display: str | None = None
    """``summarized`` or ``omitted`` (Claude)."""
    effort: str | None = None
    """``minimal``, ``low``, ``medium``, ``high``, ``xhigh`` or ``max``, where the model has it."""
    thinking_binding: str | None = None
    """``strict`` (None: strict) or ``drop_block``: what a preserved-thinking model does with a block
    whose prefix changed, and so how a compaction keeps the rules (``context.shrink.thinking``)."""

    @classmethod
    def of(cls, values: Mapping[str, Any]) -> RunSettings:
        """The settings among ``values`` (other keys ignored), lists made tuples."""
        known = {f.name for f in fields(cls)}
        kept: dict[str, Any] = {k: (tuple(v) if isinstance(v, list) else v) for k, v in values.items() if k in known}
        return cls(**kept)

    def given(self) -> dict[str, Any]:
        """The settings that are set, as the session stores them."""
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if value is None or (isinstance(value, tuple) and not value and f.name in ("protect", "allow_read")):
                continue
            out[f.name] = list(value) if isinstance(value, tuple) else value
        return out

    def over(self, stored: RunSettings) -> RunSettings:
        """These settings where set, ``stored``'s elsewhere; ``thinking = "off"`` set here also leaves
        out the display and effort ``stored`` had for its thinking (``thinking_reset``)."""
        return RunSettings.of(
            {**{k: v for k, v in stored.given().items() if k not in self.thinking_reset()}, **self.given()}
        )

    def thinking_reset(self) -> tuple[str, ...]:
        """What a setting of ``--thinking off`` leaves out of the layers under it (a session's, a
        file's): their thinking display and effort, unless given beside it."""
        if str(self.thinking).strip().lower() != "off":
            return ()
        return tuple(k for k in THINKING_PARTS if getattr(self, k) is None)


RUN_SETTINGS = tuple(f.name for f in fields(RunSettings))
THINKING_PARTS = ("thinking_display", "effort", "thinking_binding")
"""The settings of a thinking that ``--thinking off`` has no use for."""


def compose_system(replace: str | None, extra: str | None, stored: str | None, appended: str | None) -> str | None:
    """The system prompt to record: ``replace`` replaces, ``extra`` adds; None keeps the stored one.

    On a resume, ``extra`` replaces what the session's last one added (``appended``) rather than
    adding to it, so a flag given on every run does not pile up."""
    if replace is None and extra is None:
        return None
    base = replace if replace is not None else (stored or DEFAULT_SYSTEM)
    # Sessions from before appended_system was recorded: the same text is not added twice.
    previous = appended if appended is not None else extra
    if replace is None and previous and base.endswith(f"\n\n{previous}"):
        base = base[: -len(previous) - 2]
    return base if not extra else f"{base}\n\n{extra}"


def looks_volatile(text: str) -> str | None:
    """A time, date or id in ``text`` that would change between runs (each change is a cache miss)."""
    found = _VOLATILE.search(text)
    return found.group(0) if found else None
