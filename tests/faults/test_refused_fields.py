"""A model that refuses a prompt-cache field: sent again without it, remembered for the session.

GPT-5.6's ``prompt_cache_breakpoint`` and ``prompt_cache_options`` are refused with a 400 by older
models (and by proxies that do not know them yet); ``prompt_cache_key`` may be too. The fault server
refuses them as OpenAI does (``param`` names the field) or as Azure does (the message only). Through
the real ``openai`` SDK and real sockets: the adapter, the engine with a real SQLite store, the CLI.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.faults import server as faults
from tests.faults.kit import KEY, KITS, TOOLS, Events, cli_env
from tests.faults.server import FaultServer
from tiny_agent.context.cache import plan_cache
from tiny_agent.context.session import Session
from tiny_agent.errors import BadRequestError, UnsupportedFieldError
from tiny_agent.observe.call_lines import format_event
from tiny_agent.observe.history import history_lines
from tiny_agent.providers.openai.adapter import OpenAICompatProvider
from tiny_agent.store.sqlite import SQLiteStore
from tiny_agent.types import Message, Prompt, RetryNotice

OPENAI = KITS[1]
EXPLICIT = ("prompt_cache_breakpoint", "prompt_cache_options")


@pytest.fixture(params=["send", "stream"])
def mode(request: pytest.FixtureRequest) -> str:
    return request.param  # type: ignore[no-any-return]


def provider(url: str, model: str = "gpt-5.6") -> OpenAICompatProvider:
    return OpenAICompatProvider(
        model=model, base_url=f"{url}/v1", api_key=KEY, max_retries=2, timeout=5.0, retry_backoff=0.01
    )


def prompt() -> Prompt:
    messages = (Message.user("What is in README.md?"),)
    return Prompt(("Be brief.",), TOOLS, messages, plan_cache(messages), cache_key="tiny-agent-test")


def call(p: OpenAICompatProvider, mode: str, events: Events) -> Any:
    body = p.render(prompt())
    return (p.send if mode == "send" else p.stream)(body, on_event=events)


def carries(seen: faults.Seen, field: str) -> bool:
    return field in json.dumps(seen.body)


def test_a_refused_option_is_sent_again_without_it(server: FaultServer, mode: str) -> None:
    url = server.route(faults.refuses(("prompt_cache_options",), OPENAI.text("Hi.")))
    events = Events()
    response = call(provider(url), mode, events)
    assert response.message.text == "Hi."
    first, second = server.seen(url)
    assert carries(first, "prompt_cache_options") and not carries(second, "prompt_cache_options")
    assert carries(second, "prompt_cache_breakpoint") and carries(second, "prompt_cache_key"), "only that one"
    [(field, error)] = response.refused
    assert field == "prompt_cache_options" and "400 invalid_request_error: Unknown parameter" in error
    [notice] = [e for e in events if isinstance(e, RetryNotice)]
    assert notice.reason == "gpt-5.6 does not take prompt_cache_options (400); sent without it from now on"
    assert format_event(notice) == f"[resent: {notice.reason}]", "not one of the retries --max-retries counts"


def test_refused_breakpoints_take_the_explicit_mode_with_them(server: FaultServer, mode: str) -> None:
    """Explicit mode with no breakpoint would cache nothing: without the marks, OpenAI's implicit
    breakpoint is the better deal, so the options go too. Refused as Azure says it (no ``param``)."""
    url = server.route(faults.refuses(EXPLICIT, OPENAI.text("Hi."), param=False))
    response = call(provider(url), mode, Events())
    first, second = server.seen(url)
    assert all(carries(first, f) for f in EXPLICIT) and not any(carries(second, f) for f in EXPLICIT)
    assert [field for field, _ in response.refused] == ["prompt_cache_breakpoint"]
    assert second.body["messages"][0]["content"] == [{"type": "text", "text": "Be brief."}]


def test_a_refused_cache_key_on_an_older_model(server: FaultServer) -> None:
    url = server.route(faults.refuses(("prompt_cache_key",), OPENAI.text("Hi.")))
    response = call(provider(url, "gpt-4o-mini"), "send", Events())
    first, second = server.seen(url)
    assert first.body["prompt_cache_key"] == "tiny-agent-test" and "prompt_cache_key" not in second.body
    assert [field for field, _ in response.refused] == ["prompt_cache_key"]
    assert not any(carries(first, f) for f in EXPLICIT), "no 5.6-only field before 5.6"


def test_a_400_naming_a_field_the_request_does_not_carry_is_not_retried(server: FaultServer) -> None:
    url = server.route(faults.refuses(("prompt_cache_key",), OPENAI.text("Hi.")), faults.reply(OPENAI.text("Hi.")))
    body = {k: v for k, v in provider(url).render(prompt()).items() if k != "prompt_cache_key"}
    body["messages"][0]["prompt_cache_key"] = "misplaced"  # a field in the wrong place is the request's fault
    with pytest.raises(UnsupportedFieldError) as caught:
        provider(url).send(body)
    assert caught.value.field == "prompt_cache_key" and isinstance(caught.value, BadRequestError)
    assert len(server.seen(url)) == 1


def test_the_refusal_is_remembered_for_the_session_and_after_a_resume(server: FaultServer, tmp_path: Path) -> None:
    url = server.route(faults.refuses(("prompt_cache_options",), OPENAI.text("Hi.")))
    p = provider(url)
    with SQLiteStore(tmp_path / "sessions.db") as store:
        session = Session.start(store, system="Be brief.", tools=TOOLS)
        ctx = session.context
        ctx.add_user("What is in README.md?")
        ctx.complete(p)
        ctx.add_user("And now?")
        ctx.complete(p)
        session.close()
        assert [s.body.get("prompt_cache_options") is not None for s in server.seen(url)] == [True, False, False]
        refused = [e for e in store.entries(session.id) if e.kind == "refused"]
        assert [(e.body["model"], e.body["field"]) for e in refused] == [("gpt-5.6", "prompt_cache_options")]
        shown = [line for line in history_lines(store.entries(session.id)) if "prompt_cache_options" in line]
        assert shown == [
            f"#{refused[0].seq} [gpt-5.6 does not take prompt_cache_options: left out of its requests from here on]"
        ]
        assert len([e for e in store.entries(session.id) if e.kind == "call"]) == 2, "one call each, not three"

        resumed = Session.resume(store, session.id)
        resumed.context.add_user("Once more.")
        resumed.context.complete(p)
        resumed.close()
    fourth = server.seen(url)[-1]
    assert len(server.seen(url)) == 4 and not carries(fourth, "prompt_cache_options")
    assert fourth.body["prompt_cache_key"] == server.seen(url)[0].body["prompt_cache_key"], "the session's key"


def test_the_cli_says_it_in_one_line_and_a_resume_does_not_send_it_again(server: FaultServer, tmp_path: Path) -> None:
    url = server.route(faults.refuses(("prompt_cache_options",), OPENAI.text("All fine.")))
    workspace = tmp_path / "ws"
    workspace.mkdir()
    env = cli_env(tmp_path, OPENAI_API_KEY=KEY)
    argv = [sys.executable, "-m", "tiny_agent", "--provider", "openai", "--base-url", f"{url}/v1"]
    argv += ["--model", "gpt-5.6", "--workspace", str(workspace)]

    def run(*extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*argv, *extra], env=env, capture_output=True, text=True, timeout=120)

    first = run("What is this?")
    assert (first.returncode, first.stdout) == (0, "All fine.\n"), first.stderr
    said = [line for line in first.stderr.splitlines() if "prompt_cache_options" in line]
    assert said == ["[resent: gpt-5.6 does not take prompt_cache_options (400); sent without it from now on]"]
    again = run("-c", "And now?")
    assert again.returncode == 0 and "prompt_cache_options" not in again.stderr, again.stderr
    sent = [carries(s, "prompt_cache_options") for s in server.seen(url)]
    assert sent == [True, False, False]
    assert "Traceback" not in first.stderr + again.stderr and KEY not in first.stderr + again.stderr
