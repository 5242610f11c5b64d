"""The size guard: a request that cannot fit in the model's window with room for its reply is never sent.

Checked on the rendered body before every model call (turns, summaries, pings) and on a new task
before it joins the log (``Context.check_task``), so an over-size task is refused without leaving
an unsendable message behind. The size is the estimate at the calibrated ratio; where the profile
says the provider counts (``counts_tokens``, ``free_count``), a request whose estimate comes near
the limit is counted exactly before it is judged, so the counter's round trip is paid only there.
Without a counter the estimate must fit with ``ESTIMATE_MARGIN`` to spare: text the estimate has
not seen (code, another language) can take more tokens per character than what it was calibrated on.

Sending an over-size request is not harmless: a provider that accepts it bills for it (a 10 MB task
was billed $10.55 as 2.6 million tokens into a 1-million-token window).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tiny_agent.context.render import Rendered
from tiny_agent.errors import RequestTooLarge
from tiny_agent.providers.base import Provider
from tiny_agent.providers.thinking_sent import sent_max_tokens

__all__ = ["COUNT_FROM", "ESTIMATE_MARGIN", "check", "compaction_ceiling", "reply_tokens"]

ESTIMATE_MARGIN = 0.1
"""An estimated request must fit with this share of it to spare."""
COUNT_FROM = 0.7
"""Count exactly (where the provider can) once the estimate passes this share of the room."""


def reply_tokens(body: Mapping[str, Any]) -> int:
    """The output tokens a body asks room for (Anthropic's and Chat Completions' field names)."""
    for name in ("max_tokens", "max_completion_tokens", "max_output_tokens"):
        value = body.get(name)
        if isinstance(value, int):
            return value
    return 0


def compaction_ceiling(threshold: int, window: int, provider: Provider) -> int:
    """``threshold``, or less where the reply the provider keeps room for leaves less of ``window``:
    past that no request can be sent, so the context must be compacted before it gets there, whatever
    the policy (a thinking budget of 12,000 in a 30,000-token window leaves 13,904 for the request).
    The reply's room is the profile's declared cap, as the wire sends it: worked out, not rendered
    (a render may note what it left out for the send that follows it)."""
    profile = provider.profile  # a replay's too (it sends nothing): it must compact where the run did
    if profile.max_tokens is None:
        return threshold
    room = window - sent_max_tokens(profile.max_tokens, profile.thinking, profile.thinking_caps)
    if room <= 0:
        return threshold  # no request fits at all: refused as such, before the run (``check_room``)
    if not (profile.counts_tokens or profile.free_count):
        room = int(room / (1 + ESTIMATE_MARGIN))  # an estimate must fit with its margin, as below
    return min(threshold, room)


def check(provider: Provider, rendered: Rendered, *, window: int, estimate: int, task: bool = False) -> None:
    """Raise ``RequestTooLarge`` when ``rendered`` cannot fit in ``window`` with its reply. ``task``:
    the last message is a new task (the advice is about the task, not the session)."""
    profile = provider.profile
    if not profile.sends_requests:
        return
    reply = reply_tokens(rendered.body)
    room = window - reply
    if reply >= window:
        raise RequestTooLarge(
            f"the reply may take {reply:,} tokens (--max-tokens), which leaves no room for the request in the "
            f"{window:,}-token window of {profile.model}; lower --max-tokens or raise --context-window"
        )
    if estimate * (1 + ESTIMATE_MARGIN) <= room * COUNT_FROM:
        return
    counted = None
    if profile.counts_tokens or profile.free_count:
        counted = provider.count_tokens(rendered.prompt)
    if counted is not None:
        if counted <= room:
            return
        size = f"{counted:,} tokens (counted)"
    else:
        if estimate * (1 + ESTIMATE_MARGIN) <= room:
            return
        size = f"about {estimate:,} tokens (estimated)"
    where = f"the {window:,}-token window of {profile.model} with {reply:,} kept for the reply"
    if task:
        advice = (
            "shorten the task: pipe in only the part that matters, or save it to a file in the workspace "
            "and ask the agent to read it (read_file reads a file in parts)"
        )
    else:
        advice = (
            "the conversation no longer fits: start a new session, compact it (/compact in chat), or lower "
            "--compact-at so it compacts sooner"
        )
    raise RequestTooLarge(f"not sent: the request is {size}, more than fits in {where}; {advice}")
