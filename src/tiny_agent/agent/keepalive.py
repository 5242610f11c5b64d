"""The keepalive at work: a thread that pings while the run is idle (the user thinks, a tool runs).

The conversation belongs to whoever runs it; the keepalive may touch it only inside ``idle()``, and
leaving ``idle()`` waits for a ping in flight, so what the user types next is added after the ping's
entries, never between them. The decisions are ``context.keepalive``'s; this module only keeps time.

    keepalive = Keepalive(context, provider)
    with keepalive.idle():          # e.g. while reading the user's next message
        text = input("> ")
    keepalive.close()
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterator

from tiny_agent.agent.events import CallEvent, Event, KeepaliveNote
from tiny_agent.context import keepalive
from tiny_agent.context.engine import Context
from tiny_agent.errors import TinyAgentError
from tiny_agent.providers.base import Provider

__all__ = ["POLL_SECONDS", "Keepalive"]

log = logging.getLogger(__name__)

POLL_SECONDS = 5.0
"""The thread looks at the clock at least this often (a clock can jump: a laptop wakes up)."""


class Keepalive:
    """Pings ``context``'s cache entry while ``idle()``, as ``context.keepalive.plan`` says."""

    def __init__(
        self,
        context: Context,
        provider: Provider,
        *,
        clock: Callable[[], float] = time.time,
        on_event: Callable[[Event], None] | None = None,
        thread: bool = True,
    ) -> None:
        """``thread=False``: nothing runs by itself; call ``tick`` (tests, a caller with its own loop)."""
        self.context = context
        self.provider = provider
        self.clock = clock
        self.on_event = on_event
        self._lock = threading.Lock()
        self._idle = threading.Event()
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._said: set[str] = set()
        self._gave_up_on: int | None = None
        """The request after which a ping failed: no more pings until a newer one."""
        self._thread = threading.Thread(target=self._run, name="keepalive", daemon=True) if thread else None
        if self._thread is not None:
            self._thread.start()

    @contextlib.contextmanager
    def idle(self) -> Iterator[None]:
        """While inside, the keepalive may ping; on the way out, a ping in flight is waited for."""
        self._idle.set()
        self._wake.set()
        try:
            yield
        finally:
            self._idle.clear()
            with self._lock:  # a ping in flight finishes (and is recorded) before the caller goes on
                pass

    def tick(self, now: float | None = None) -> float | None:
        """Ping if one is due at ``now`` and the run is idle; the time of the next one (None: none)."""
        with self._lock:
            if not self._idle.is_set():
                return None
            now = self.clock() if now is None else now
            last = self.context.state.last_done
            if last is not None and last[0].seq == self._gave_up_on:
                return None
            plan = keepalive.plan(self.context, self.provider, now)
            if plan.due is None:
                self._note_stop(plan)
                return None
            if plan.due > now:
                return plan.due
            if plan.sent == 0 and plan.one_hour_usd is not None:
                self._say(
                    "1h",
                    f"a 1-hour cache lifetime (--cache-ttl 1h) would keep this {plan.prefix_tokens:,}-token prefix "
                    f"for ${plan.one_hour_usd:.4f} more per write; an hour of pings costs {self._up_to()}"
                    f"${plan.ping_usd * (3600 / self.provider.profile.lifetime):.4f}",
                )
            try:
                keepalive.ping(self.context, self.provider)
            except TinyAgentError as exc:  # recorded as a failed call; the conversation is as it was
                log.debug("keepalive ping failed: %s", exc)
                self._say("failed", f"a ping failed ({exc}); no more pings until the next request")
                last = self.context.state.last_done
                self._gave_up_on = last[0].seq if last is not None else None
                return None
            if self.on_event is not None:
                self.on_event(CallEvent(plan.sent + 1, self.context.ledger.calls[-1]))
            following = keepalive.plan(self.context, self.provider, self.clock())
            return following.due

    def close(self) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=60)

    def _note_stop(self, plan: keepalive.Plan) -> None:
        if plan.sent and plan.cap and plan.sent >= plan.cap:
            spent = sum(c.cost_usd or 0.0 for c in self.context.ledger.calls[-plan.sent :])
            self._say(
                f"cap{self.context.state.head}",
                f"stopped after {plan.sent} ping(s) (${spent:.4f}; they may cost {self._up_to()}what rewriting "
                f"the {plan.prefix_tokens:,}-token prefix costs); a request after the entry expires writes it again",
            )

    def _up_to(self) -> str:
        """A ping under a thinking budget may think up to it: its price is a bound, not an estimate."""
        return "up to " if self.provider.profile.thinking.mode == "enabled" else "about "

    def _say(self, key: str, text: str) -> None:
        if key not in self._said:
            self._said.add(key)
            if self.on_event is not None:
                self.on_event(KeepaliveNote(text))

    def _run(self) -> None:
        while not self._stop.is_set():
            due = None
            try:
                due = self.tick()
            except Exception as exc:  # the keepalive must never take the run down with it
                log.debug("keepalive stopped: %s", exc)
                return
            wait = POLL_SECONDS if due is None else max(0.05, min(POLL_SECONDS, due - self.clock()))
            self._wake.wait(wait)
            self._wake.clear()
