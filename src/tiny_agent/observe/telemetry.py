"""OpenTelemetry for runs: one span per run, and under it one span per model call and per tool call,
with the GenAI semantic conventions' attributes, so Jaeger, Phoenix, Langfuse or Logfire show what
each call read from the cache, cost, and why it missed.

An observer of the agent's events (the loop knows nothing of it): ``Telemetry`` puts its handler in
front of the agent's ``on_event`` and wraps ``agent.run`` in the run's span. A call's span is made
when its ``TurnEvent`` arrives, back-dated by the call's seconds; a tool's likewise. The SDK is an
extra (``pip install 'tiny-agent[otel]'``), imported only when telemetry is asked for::

    telemetry = Telemetry(agent, otlp_tracer_provider(), conversation_id=session.id)
    result = telemetry.run("read README.md")      # agent.run inside the run's span
    telemetry.shutdown()                          # flush: a short-lived process must not lose spans
"""

from __future__ import annotations

import importlib.util
import logging
import os
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from tiny_agent.agent.loop import Agent, CallEvent, Event, RunResult, ToolEvent, TurnEvent
from tiny_agent.context.tokens import CallRecord
from tiny_agent.errors import ConfigError

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SpanExporter
    from opentelemetry.trace import Span

__all__ = ["ENDPOINT_ENV", "INSTALL_HINT", "Telemetry", "available", "otlp_tracer_provider", "wanted"]

ENDPOINT_ENV = "OTEL_EXPORTER_OTLP_ENDPOINT"
INSTALL_HINT = "OpenTelemetry export needs the otel extra: pip install 'tiny-agent[otel]'"
_FAILED_STOPS = ("provider_error", "illegal_request")
_TIMEOUT_ENVS = ("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "OTEL_EXPORTER_OTLP_TIMEOUT")
SEND_TIMEOUT = 3.0
"""Seconds an export may take, retries included, where no ``OTEL_EXPORTER_OTLP_*TIMEOUT`` says: the
SDK's 10 would hold a short run's exit that long when no collector listens."""
log = logging.getLogger(__name__)


def available() -> bool:
    """Whether the OpenTelemetry SDK and its OTLP/HTTP exporter are installed."""
    return all(
        importlib.util.find_spec(m) is not None for m in ("opentelemetry.sdk", "opentelemetry.exporter.otlp.proto.http")
    )


def wanted(flag: bool, env: Mapping[str, str] = os.environ) -> bool:
    """Telemetry is on with ``--otel`` or the standard ``OTEL_EXPORTER_OTLP_ENDPOINT`` (or its traces one)."""
    return flag or bool(env.get(ENDPOINT_ENV) or env.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"))


def otlp_tracer_provider(endpoint: str | None = None) -> TracerProvider:
    """A TracerProvider that sends spans in batches over OTLP/HTTP to ``endpoint`` (a full
    ``.../v1/traces`` URL), else where the standard ``OTEL_EXPORTER_OTLP_*`` variables say
    (``http://localhost:4318`` by default). ``OTEL_SERVICE_NAME`` names the service (default tiny-agent)."""
    if not available():
        raise ConfigError(INSTALL_HINT)
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    named = {} if os.environ.get("OTEL_SERVICE_NAME") else {"service.name": "tiny-agent"}
    provider = TracerProvider(resource=Resource.create(named))
    timeout = None if any(os.environ.get(name) for name in _TIMEOUT_ENVS) else SEND_TIMEOUT
    exporter = OTLPSpanExporter(endpoint=endpoint, timeout=timeout)
    provider.add_span_processor(BatchSpanProcessor(_reported(exporter, getattr(exporter, "_endpoint", endpoint))))
    return provider


def _reported(inner: SpanExporter, endpoint: str | None) -> SpanExporter:
    """``inner``, whose failed exports are one warning line of ours (the first), not the SDK's record
    of every retry; a later batch is tried again (a collector back after a restart gets it)."""
    from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

    class Reported(SpanExporter):
        warned = False

        def export(self, spans: Any) -> SpanExportResult:
            result = inner.export(spans)
            if result is not SpanExportResult.SUCCESS and not self.warned:
                self.warned = True
                log.warning(
                    "warning: OpenTelemetry spans could not be sent to %s (no collector there, or it refused "
                    "them); the run is not affected",
                    endpoint or "the OTLP endpoint",
                )
            return result

        def shutdown(self) -> None:
            inner.shutdown()

        def force_flush(self, timeout_millis: int = 30000) -> bool:
            return inner.force_flush(timeout_millis)

    return Reported()


class Telemetry:
    """Spans for the runs of one agent. ``conversation_id`` is the session id (``gen_ai.conversation.id``)."""

    def __init__(self, agent: Agent, tracer_provider: TracerProvider, *, conversation_id: str | None = None) -> None:
        from opentelemetry import trace

        self.agent = agent
        self.tracer_provider = tracer_provider
        self.tracer = tracer_provider.get_tracer("tiny_agent")
        self.conversation_id = conversation_id
        self._trace = trace
        self._run: Span | None = None
        self._calls: list[CallRecord] = []
        self._next: Callable[[Event], None] | None = agent.on_event
        agent.on_event = self._observe

    def run(self, task: str) -> RunResult:
        """``agent.run(task)`` inside one span for the run; every call and tool span is its child."""
        provider = self.agent.provider
        attributes = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": "tiny-agent",
            "gen_ai.provider.name": provider.profile.name,
            "gen_ai.request.model": provider.profile.model,
            **self._conversation(),
        }
        self._calls = []
        with self.tracer.start_as_current_span("invoke_agent tiny-agent", attributes=attributes) as span:
            self._run = span
            try:
                result = self.agent.run(task)
            finally:
                self._run = None
            span.set_attributes(_totals(self._calls))
            span.set_attribute("tiny_agent.stop_reason", result.stop)
            span.set_attribute("tiny_agent.steps", result.steps)
            if result.stop in _FAILED_STOPS:
                span.set_status(self._trace.Status(self._trace.StatusCode.ERROR, str(result.error or result.stop)))
        return result

    def shutdown(self) -> None:
        """Send what is buffered and close the exporter (the end of a CLI run)."""
        self.tracer_provider.force_flush()
        self.tracer_provider.shutdown()

    # -- events -------------------------------------------------------------------------------

    def _observe(self, event: Event) -> None:
        # Every billed call has its event: a turn's ``TurnEvent``, each summary call's ``CallEvent``.
        call = event.call if isinstance(event, TurnEvent | CallEvent) else None
        if call is not None:
            self._call_span(call)
        elif isinstance(event, ToolEvent):
            self._tool_span(event)
        if self._next is not None:
            self._next(event)

    def _call_span(self, call: CallRecord) -> None:
        self._calls.append(call)
        request_model = self.agent.provider.profile.model
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": self.agent.provider.profile.name,
            "gen_ai.request.model": request_model,
            "gen_ai.response.model": call.model,
            **self._conversation(),
            **_usage(call),
            "tiny_agent.call.purpose": call.purpose,
        }
        if call.stop_reason:
            attributes["gen_ai.response.finish_reasons"] = [call.stop_reason]
        if call.response_id:
            attributes["gen_ai.response.id"] = call.response_id
        if call.cost_usd is not None:
            attributes["tiny_agent.cost_usd"] = call.cost_usd
        if call.miss:
            attributes["tiny_agent.cache.miss"] = call.miss
        if call.prefill_ms is not None:
            attributes["tiny_agent.prefill_ms"] = call.prefill_ms
        self._span(f"chat {request_model}", call.seconds, attributes, kind="client")

    def _tool_span(self, event: ToolEvent) -> None:
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": event.call.name,
            "gen_ai.tool.call.id": event.call.id,
            **self._conversation(),
        }
        if event.result.is_error:
            attributes["error.type"] = "tool_error"
        span = self._span(f"execute_tool {event.call.name}", event.seconds, attributes, end=False)
        if event.result.is_error:
            first = event.result.content.splitlines()[0] if event.result.content else "error"
            span.set_status(self._trace.Status(self._trace.StatusCode.ERROR, first[:200]))
        span.end()

    def _span(
        self, name: str, seconds: float, attributes: dict[str, Any], *, kind: str = "internal", end: bool = True
    ) -> Span:
        now = time.time_ns()
        parent = self._trace.set_span_in_context(self._run) if self._run is not None else None
        span_kind = self._trace.SpanKind.CLIENT if kind == "client" else self._trace.SpanKind.INTERNAL
        span = self.tracer.start_span(
            name, context=parent, kind=span_kind, attributes=attributes, start_time=now - int(seconds * 1e9)
        )
        if end:
            span.end(end_time=now)
        return span

    def _conversation(self) -> dict[str, str]:
        return {"gen_ai.conversation.id": self.conversation_id} if self.conversation_id else {}


def _usage(call: CallRecord) -> dict[str, int]:
    usage = call.usage
    fields = {
        "gen_ai.usage.input_tokens": usage.input_tokens,  # the whole prompt, cache reads and writes included
        "gen_ai.usage.output_tokens": usage.output_tokens,
        "gen_ai.usage.cache_read.input_tokens": usage.cache_read_tokens,
        "gen_ai.usage.cache_creation.input_tokens": usage.cache_write_tokens,
        "gen_ai.usage.reasoning.output_tokens": usage.reasoning_tokens,  # of output_tokens, the thinking
    }
    return {k: v for k, v in fields.items() if v is not None}  # unreported stays absent, never 0


_TOTALLED = (
    "gen_ai.usage.input_tokens",
    "gen_ai.usage.output_tokens",
    "gen_ai.usage.cache_read.input_tokens",
    "gen_ai.usage.cache_creation.input_tokens",
    "gen_ai.usage.reasoning.output_tokens",
)
"""The run span's sums of its calls' usage: each only when every call reported it (a partial sum
would read as the whole)."""


def _totals(calls: list[CallRecord]) -> dict[str, Any]:
    out: dict[str, Any] = {"tiny_agent.calls": len(calls)}
    usages = [_usage(c) for c in calls]
    for key in _TOTALLED:
        values = [u.get(key) for u in usages]
        if values and all(v is not None for v in values):
            out[key] = sum(v for v in values if v is not None)
    costs = [c.cost_usd for c in calls if c.cost_usd is not None]
    if costs:
        out["tiny_agent.cost_usd"] = sum(costs)
    return out
