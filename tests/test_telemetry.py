"""OpenTelemetry: a span per model call and per tool call under one span per run, every GenAI attribute
equal to the call records; and the same spans over OTLP/HTTP to a receiver on 127.0.0.1, decoded."""

from __future__ import annotations

import gzip
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from tiny_agent.agent.loop import Agent
from tiny_agent.cli.app import main
from tiny_agent.context.engine import ContextConfig
from tiny_agent.context.session import Session
from tiny_agent.observe import telemetry
from tiny_agent.observe.telemetry import Telemetry
from tiny_agent.providers.registry import resolve_provider
from tiny_agent.store.base import CallQuery
from tiny_agent.store.sqlite import SQLiteStore
from tiny_agent.testing import BillingFake
from tiny_agent.tools.toolbox import Toolbox
from tiny_agent.tools.workspace import Workspace

from .recorded import ENV, MODELS, tour


@pytest.mark.parametrize("wire", ["anthropic", "openai"])
def test_every_span_attribute_matches_the_call_records(tmp_path: Path, wire: str) -> None:
    exporter = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    seen: list[object] = []
    with SQLiteStore(tmp_path / "s.db") as store, BillingFake([tour(tmp_path, "kappa", 5)]) as fake:
        provider = resolve_provider(wire, model=MODELS[wire], base_url=fake.url("r", wire), env=ENV)  # type: ignore[arg-type]
        toolbox = Toolbox(Workspace(tmp_path).tools())
        session = Session.start(store, tools=toolbox.specs, config=ContextConfig(compact_at=6000, keep_turns=2))
        agent = Agent(provider, toolbox, context=session.context, on_event=seen.append)
        spans_of = Telemetry(agent, tracer_provider, conversation_id=session.id)
        result = spans_of.run("tour the kappa files")
        session.close()
    assert result.stop == "done" and seen, "the agent's own observer still hears every event"
    calls = agent.context.ledger.calls
    assert any(c.purpose == "compaction" for c in calls), "a summary call is a span too"
    spans = exporter.get_finished_spans()
    (run,) = [s for s in spans if s.name == "invoke_agent tiny-agent"]
    chats = [s for s in spans if s.attributes and s.attributes["gen_ai.operation.name"] == "chat"]
    tools = [s for s in spans if s.attributes and s.attributes["gen_ai.operation.name"] == "execute_tool"]
    assert len(spans) == 1 + len(chats) + len(tools) and len(chats) == len(calls)
    for span, call in zip(chats, calls, strict=True):
        assert span.parent is not None and span.parent.span_id == run.context.span_id
        assert span.context.trace_id == run.context.trace_id
        expected: dict[str, Any] = {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": wire,
            "gen_ai.request.model": MODELS[wire],
            "gen_ai.response.model": call.model,
            "gen_ai.conversation.id": session.id,
            "gen_ai.usage.input_tokens": call.usage.input_tokens,
            "gen_ai.usage.output_tokens": call.usage.output_tokens,
            "gen_ai.usage.cache_read.input_tokens": call.usage.cache_read_tokens,
            "gen_ai.response.finish_reasons": (call.stop_reason,),
            "tiny_agent.call.purpose": call.purpose,
            "tiny_agent.cost_usd": call.cost_usd,
        }
        if call.usage.cache_write_tokens is not None:
            expected["gen_ai.usage.cache_creation.input_tokens"] = call.usage.cache_write_tokens
        if call.response_id is not None:
            expected["gen_ai.response.id"] = call.response_id
        if call.miss:
            expected["tiny_agent.cache.miss"] = call.miss
        assert dict(span.attributes or {}) == expected
        assert span.end_time - span.start_time == pytest.approx(call.seconds * 1e9, abs=1e6)  # type: ignore[operator]
    uses = [b for m in agent.context.messages for b in m.tool_uses]
    assert [(s.attributes or {})["gen_ai.tool.call.id"] for s in tools] == [u.id for u in uses]
    for span, use in zip(tools, uses, strict=True):
        assert span.name == "execute_tool read_file" and span.parent is not None
        assert span.parent.span_id == run.context.span_id
        assert dict(span.attributes or {}) == {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": use.name,
            "gen_ai.tool.call.id": use.id,
            "gen_ai.conversation.id": session.id,
        }
    totals = run.attributes or {}
    assert totals["gen_ai.usage.input_tokens"] == sum(c.usage.input_tokens or 0 for c in calls)
    assert totals["tiny_agent.cost_usd"] == pytest.approx(sum(c.cost_usd or 0 for c in calls))
    assert totals["tiny_agent.stop_reason"] == "done" and totals["tiny_agent.calls"] == len(calls)


class Receiver:
    """An OTLP/HTTP trace receiver on 127.0.0.1: keeps each POST /v1/traces body, answers 200."""

    def __init__(self) -> None:
        self.bodies: list[bytes] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                data = self.rfile.read(int(self.headers.get("content-length") or 0))
                if self.headers.get("content-encoding") == "gzip":
                    data = gzip.decompress(data)
                ok = self.path == "/v1/traces"
                if ok:
                    owner.bodies.append(data)
                reply = ExportTraceServiceResponse().SerializeToString()
                self.send_response(200 if ok else 404)
                self.send_header("content-type", "application/x-protobuf")
                self.send_header("content-length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def spans(self) -> list[Any]:
        found = []
        for body in self.bodies:
            request = ExportTraceServiceRequest()
            request.ParseFromString(body)
            for resource in request.resource_spans:
                for scope in resource.scope_spans:
                    found.extend(scope.spans)
        return found


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    running = Receiver()
    running.thread.start()
    try:
        yield running
    finally:  # stops also when the test failed
        running.server.shutdown()
        running.server.server_close()
        running.thread.join(timeout=5)


def _value(attribute: Any) -> Any:
    kind = attribute.value.WhichOneof("value")
    value = getattr(attribute.value, kind)
    return list(value.values) if kind == "array_value" else value


def test_a_cli_run_sends_its_spans_over_otlp_http(
    tmp_path: Path, receiver: Receiver, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", ENV["ANTHROPIC_API_KEY"])
    monkeypatch.setenv(telemetry.ENDPOINT_ENV, receiver.url)
    monkeypatch.setenv("OTEL_SERVICE_NAME", "tiny-agent-test")
    store = tmp_path / "s.db"
    with BillingFake([tour(tmp_path, "lambda", 3)]) as fake:
        args = ["--provider", "anthropic", "--model", MODELS["anthropic"], "--base-url", fake.url("r", "anthropic")]
        code = main([*args, "--workspace", str(tmp_path), "--store", str(store), "tour the lambda files"])
    assert code == 0, capsys.readouterr().err
    # The CLI process has ended its run: everything was flushed before main() returned.
    spans = receiver.spans()
    with SQLiteStore(store) as opened:
        (info,) = opened.sessions()
        rows = opened.calls(CallQuery())
    chats = [s for s in spans if s.name.startswith("chat ")]
    (run,) = [s for s in spans if s.name == "invoke_agent tiny-agent"]
    assert len(chats) == len(rows) == 4 and len(spans) == 1 + 4 + 3
    for span, row in zip(chats, rows, strict=True):
        attributes = {a.key: _value(a) for a in span.attributes}
        assert span.parent_span_id == run.span_id and span.trace_id == run.trace_id
        assert attributes["gen_ai.conversation.id"] == info.id
        assert attributes["gen_ai.usage.input_tokens"] == row.input_tokens
        assert attributes["gen_ai.usage.cache_read.input_tokens"] == row.cache_read_tokens
        assert attributes["gen_ai.usage.cache_creation.input_tokens"] == row.cache_write_tokens
        assert attributes["tiny_agent.cost_usd"] == pytest.approx(row.cost_usd)
        assert attributes.get("tiny_agent.cache.miss") == row.miss
    request = ExportTraceServiceRequest()
    request.ParseFromString(receiver.bodies[0])
    service = {a.key: _value(a) for a in request.resource_spans[0].resource.attributes}["service.name"]
    assert service == "tiny-agent-test"


def test_otel_asked_for_without_the_extra_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(telemetry, "available", lambda: False)
    monkeypatch.setenv("ANTHROPIC_API_KEY", ENV["ANTHROPIC_API_KEY"])
    with BillingFake([tour(tmp_path, "mu", 1)]) as fake:
        args = ["--provider", "anthropic", "--base-url", fake.url("r", "anthropic"), "--workspace", str(tmp_path)]
        args += ["--store", str(tmp_path / "s.db")]
        assert main([*args, "--otel", "tour the mu files"]) == 2
        err = capsys.readouterr().err
        assert "pip install 'tiny-agent[otel]'" in err and len(err.strip().splitlines()) == 1
        assert fake.bills("r") == [], "nothing was sent to the model"
        # Only the environment asks: the run goes on, with one line saying why there are no spans.
        monkeypatch.setenv(telemetry.ENDPOINT_ENV, "http://127.0.0.1:9")
        assert main([*args, "tour the mu files"]) == 0
        assert "no spans are sent: OpenTelemetry export needs the otel extra" in capsys.readouterr().err


def test_the_run_span_totals_the_thinking_and_the_cache_writes(tmp_path: Path) -> None:
    from tiny_agent.providers.thinking import parse_thinking
    from tiny_agent.testing.thinking_server import ThinkingRules

    exporter = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    with BillingFake([tour(tmp_path, "lambda", 2)], thinking=ThinkingRules()) as fake:
        url = fake.url("r", "anthropic")
        provider = resolve_provider(
            "anthropic", model=MODELS["anthropic"], base_url=url, env=ENV, thinking=parse_thinking("2048")
        )
        agent = Agent(provider, Toolbox(Workspace(tmp_path).tools()))
        assert Telemetry(agent, tracer_provider).run("tour the lambda files").stop == "done"
    calls = agent.context.ledger.calls
    assert len(calls) > 1 and all(c.usage.reasoning_tokens for c in calls)
    (run,) = [s for s in exporter.get_finished_spans() if s.name == "invoke_agent tiny-agent"]
    totals = run.attributes or {}
    assert totals["gen_ai.usage.reasoning.output_tokens"] == sum(c.usage.reasoning_tokens or 0 for c in calls)
    assert totals["gen_ai.usage.cache_creation.input_tokens"] == sum(c.usage.cache_write_tokens or 0 for c in calls)
    assert totals["gen_ai.usage.output_tokens"] == sum(c.usage.output_tokens or 0 for c in calls)


def test_a_collector_that_is_down_is_one_line_and_a_url_after_otel_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Nothing listens at the endpoint: the run ends as usual with one line of ours, not the SDK's
    retries and tracebacks; ``--otel URL`` would make the URL the task's first word: refused."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", ENV["ANTHROPIC_API_KEY"])
    monkeypatch.setenv(telemetry.ENDPOINT_ENV, "http://127.0.0.1:9")
    with BillingFake([tour(tmp_path, "nu", 2)]) as fake:
        args = ["--provider", "anthropic", "--base-url", fake.url("r", "anthropic"), "--workspace", str(tmp_path)]
        args += ["--store", str(tmp_path / "s.db")]
        assert main([*args, "tour the nu files"]) == 0
        err = capsys.readouterr().err
        said = [line for line in err.splitlines() if "OpenTelemetry" in line or "rror" in line or "ransient" in line]
        assert said == [
            "tiny-agent: warning: OpenTelemetry spans could not be sent to http://127.0.0.1:9/v1/traces (no "
            "collector there, or it refused them); the run is not affected"
        ], err
        assert main([*args, "--otel", "http://127.0.0.1:9", "tour the nu files"]) == 2
        err = capsys.readouterr().err
        assert "--otel takes no value" in err and "OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:9" in err
        assert len(fake.bills("r")) == 3, "the refused run sent nothing"
