"""Thinking blocks and reasoning_content: decoded whole and streamed, rendered back byte-exact and in
place, never marked for the cache; the settings checked against the model before any call; the rules
known to the check (rule ids for lint) and enforced, with the APIs' texts, by the test server."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import anthropic
import openai
import pytest

from tiny_agent.cli.app import main
from tiny_agent.cli.config_file import load_config
from tiny_agent.context.diagnosis import Before, diagnose
from tiny_agent.context.engine import Context
from tiny_agent.context.render import Renderer
from tiny_agent.context.session import Session
from tiny_agent.errors import ConfigError
from tiny_agent.observe.export import export_lines, read_export
from tiny_agent.observe.lint import lint_bodies, lint_body
from tiny_agent.providers.anthropic.adapter import AnthropicProvider
from tiny_agent.providers.anthropic.reply import Accumulator, process
from tiny_agent.providers.anthropic.thinking import thinking_problems
from tiny_agent.providers.openai import reply as openai_reply
from tiny_agent.providers.openai.adapter import OpenAICompatProvider
from tiny_agent.providers.openai.reasoning import reasoning_fields, reasoning_problems
from tiny_agent.providers.thinking import named_key, parse_thinking, thinking_key, thinking_of_key
from tiny_agent.providers.thinking_caps import thinking_caps
from tiny_agent.store.sqlite import SQLiteStore
from tiny_agent.testing import BillingFake, Task
from tiny_agent.testing.thinking_server import ThinkingRules, errors
from tiny_agent.types import (
    Message,
    Prompt,
    ReasoningBlock,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolSpec,
    ToolUseBlock,
    Usage,
)

THOUGHT = ThinkingBlock("Let me think.\n  Carefully: é ✓", "sig/+=abc")
REDACTED = RedactedThinkingBlock("EmwKAhgBEgy3va3pzix/LafPsn4a")
READ = ToolSpec("read_file", "Read a file.", {"type": "object", "properties": {"path": {"type": "string"}}})


def loop_messages() -> tuple[Message, ...]:
    return (
        Message.user("read a"),
        Message(
            "assistant", (THOUGHT, REDACTED, TextBlock("Reading."), ToolUseBlock("t1", "read_file", {"path": "a"}))
        ),
        Message("user", (ToolResultBlock("t1", "alpha"),)),
    )


def test_a_whole_reply_keeps_thinking_and_redacted_blocks_and_the_thinking_tokens() -> None:
    data = {
        "id": "msg_1",
        "content": [THOUGHT.to_dict(), REDACTED.to_dict(), {"type": "text", "text": "Hi."}],
        "stop_reason": "end_turn",
        "usage": {"input_tokens": 10, "output_tokens": 1240, "output_tokens_details": {"thinking_tokens": 1100}},
    }
    response = process(data, "claude-sonnet-5")
    assert response.message.content == (THOUGHT, REDACTED, TextBlock("Hi."))
    assert response.usage.reasoning_tokens == 1100 and response.usage.output_tokens == 1240


def stream(*deltas: dict[str, object], stop: str | None = "end_turn") -> dict[str, object]:
    acc = Accumulator()
    acc.feed({"type": "message_start", "message": {"id": "m", "model": "x", "usage": {"input_tokens": 3}}})
    acc.feed({"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": ""}})
    for delta in deltas:
        acc.feed({"type": "content_block_delta", "index": 0, "delta": delta})
    acc.feed({"type": "content_block_stop", "index": 0})
    acc.feed({"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}})
    acc.feed({"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": "ok"}})
    acc.feed({"type": "message_delta", "delta": {"stop_reason": stop}, "usage": {"output_tokens": 9}})
    return acc.result("anthropic")


def test_a_stream_assembles_thinking_and_signature_deltas() -> None:
    pieces = [{"type": "thinking_delta", "thinking": t} for t in ("Let me think.\n", "  Carefully: é ✓")]
    data = stream(*pieces, {"type": "signature_delta", "signature": "sig/+=abc"})
    assert process(data, "x").message.content == (THOUGHT, TextBlock("ok"))


def test_a_stream_keeps_what_the_api_dropped_from_its_message_delta() -> None:
    dropped = [{"type": "thinking_dropped", "path": "messages.1.content.0", "reason": "prefix_binding_mismatch"}]
    acc = Accumulator()
    acc.feed({"type": "message_start", "message": {"id": "m", "model": "x", "usage": {"input_tokens": 3}}})
    acc.feed({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": "ok"}})
    delta = {"stop_reason": "end_turn"}
    acc.feed({"type": "message_delta", "delta": delta, "usage": {"output_tokens": 9}, "input_transformations": dropped})
    assert process(acc.result("anthropic"), "x").usage.details["input_transformations"] == dropped


def test_a_block_whose_signature_never_came_is_never_kept() -> None:
    data = stream({"type": "thinking_delta", "thinking": "half a thought"})
    assert process(data, "x").message.content == (TextBlock("ok"),)


def test_a_cut_stream_keeps_nothing() -> None:
    with pytest.raises(Exception, match="no stop reason"):
        stream({"type": "thinking_delta", "thinking": "cut"}, stop=None)


def adapter(model: str = "claude-sonnet-4-6", thinking: str | None = "2048", **kw: object) -> AnthropicProvider:
    """A budget by default: Claude 4.6 takes one (Claude 4.7 and 5 take adaptive thinking only)."""
    return AnthropicProvider(model=model, api_key="k", thinking=parse_thinking(thinking, **kw))  # type: ignore[arg-type]


def test_the_render_sends_thinking_back_exactly_in_place_and_never_marks_it() -> None:
    messages = (*loop_messages()[:2], Message("user", (ToolResultBlock("t1", "alpha"),)))
    only_thinking = Message("assistant", (THOUGHT,))
    prompt = Prompt(("sys",), (READ,), (*messages[:1], only_thinking, *messages[2:]))
    body = adapter().render(Prompt(("sys",), (READ,), messages))
    assert body["messages"][1]["content"][:2] == [THOUGHT.to_dict(), REDACTED.to_dict()]
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 2048}
    assert body["max_tokens"] > 2048
    marked = adapter().render(
        Prompt(("sys",), (READ,), prompt.messages, cache=prompt.cache.__class__(message_indices=(1,)))
    )
    assert all("cache_control" not in b for b in marked["messages"][1]["content"])
    assert thinking_problems(marked) == []


def test_thinking_fields_effort_display_and_betas() -> None:
    provider = adapter("claude-sonnet-4-6", "adaptive", display="omitted", effort="low")
    body = provider.render(Prompt(("s",), (READ,), (Message.user("hi"),)))
    assert body["thinking"] == {"type": "adaptive", "display": "omitted"}
    assert body["output_config"] == {"effort": "low"}
    manual = adapter("claude-sonnet-4-5", "4096")
    headers = manual._sdk_arguments(manual.render(Prompt(("s",), (READ,), (Message.user("hi"),))))["extra_headers"]
    assert "interleaved-thinking-2025-05-14" in headers["anthropic-beta"]
    budget = adapter("claude-sonnet-4-6", "4096")
    headers = budget._sdk_arguments(budget.render(Prompt(("s",), (READ,), (Message.user("hi"),))))["extra_headers"]
    assert "interleaved-thinking-2025-05-14" in headers["anthropic-beta"], "Claude 4.6 with a budget interleaves"
    drop = adapter("claude-sonnet-5", "adaptive", binding="drop_block")
    body = drop.render(Prompt(("s",), (READ,), (Message.user("hi"),)))
    assert body["thinking"]["block_binding"] == {"prefix_mismatch_behavior": "drop_block"}
    assert "thinking-binding-controls-2026-08-01" in drop._sdk_arguments(body)["extra_headers"]["anthropic-beta"]
    unasked = adapter("claude-sonnet-5", None, display="omitted", binding="drop_block")
    body = unasked.render(Prompt(("s",), (READ,), (Message.user("hi"),)))
    assert body["thinking"] == {
        "type": "adaptive",
        "display": "omitted",
        "block_binding": {"prefix_mismatch_behavior": "drop_block"},
    }, "Claude 5 thinks unasked: a display and a binding shape that thinking"
    assert "thinking" not in adapter("claude-sonnet-5", None).render(Prompt(("s",), (), (Message.user("hi"),)))
    off = adapter("claude-sonnet-5", "off").render(Prompt(("s",), (), (Message.user("hi"),)))
    assert off["thinking"] == {"type": "disabled"}


@pytest.mark.parametrize(
    ("model", "thinking", "kw", "message"),
    [
        ("claude-sonnet-5", "512", {}, "at least 1024"),
        ("claude-sonnet-5", "lots", {}, "off, adaptive or a token budget"),
        ("claude-sonnet-4-5", "adaptive", {}, "has no adaptive thinking"),
        ("claude-opus-5-5", "2048", {}, "does not take a thinking budget"),
        ("claude-sonnet-5", "2048", {}, r"claude-sonnet-5 does not take a thinking budget \(use --thinking adaptive;"),
        ("claude-opus-4-7", "2048", {}, "does not take a thinking budget"),
        ("claude-sonnet-4-6", "adaptive", {"effort": "xhigh"}, r"does not take --effort xhigh"),
        ("claude-fable-5", "off", {}, r"claude-fable-5 always thinks \(its API refuses thinking off\)"),
        ("claude-sonnet-5-5", "off", {}, "always thinks"),
        ("claude-sonnet-4-5", "2048", {"effort": "max"}, "has no reasoning effort: leave out --effort max"),
        ("claude-3-5-haiku", "adaptive", {}, "does not think: leave out --thinking adaptive"),
    ],
)
def test_an_unsupported_setting_is_one_line_before_any_call(model: str, thinking: str, kw: dict, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        adapter(model, thinking, **kw)


def test_the_check_knows_every_thinking_rule() -> None:
    body = adapter().render(Prompt(("s",), (READ,), loop_messages()))
    assert thinking_problems(body) == []
    stripped = {
        **body,
        "messages": [
            body["messages"][0],
            {**body["messages"][1], "content": body["messages"][1]["content"][2:]},
            body["messages"][2],
        ],
    }
    assert thinking_problems(stripped)[0].startswith("thinking-final-assistant")
    marked = {
        **body,
        "messages": [
            body["messages"][0],
            {
                **body["messages"][1],
                "content": [
                    {**THOUGHT.to_dict(), "cache_control": {"type": "ephemeral"}},
                    *body["messages"][1]["content"][1:],
                ],
            },
            body["messages"][2],
        ],
    }
    assert any(p.startswith("thinking-cache-control") for p in thinking_problems(marked))
    forced = {**body, "tool_choice": {"type": "tool", "name": "read_file"}}
    assert any(p.startswith("thinking-forced-tool-choice") for p in thinking_problems(forced))
    unsigned = {
        **body,
        "messages": [
            body["messages"][0],
            {
                **body["messages"][1],
                "content": [
                    {"type": "thinking", "thinking": "x", "signature": ""},
                    *body["messages"][1]["content"][1:],
                ],
            },
            body["messages"][2],
        ],
    }
    assert any(p.startswith("thinking-unsigned") for p in thinking_problems(unsigned))


def test_reasoning_content_goes_back_on_the_assistant_message() -> None:
    provider = OpenAICompatProvider(model="deepseek-v4-flash", api_key="k", name="deepseek")
    thought = ReasoningBlock("I should read a.", None, "deepseek-v4-flash")
    messages = (
        Message.user("read a"),
        Message("assistant", (thought, ToolUseBlock("t1", "read_file", {"path": "a"}))),
        Message("user", (ToolResultBlock("t1", "alpha"),)),
    )
    body = provider.render(Prompt(("s",), (READ,), messages))
    assert body["messages"][2]["reasoning_content"] == "I should read a."
    assert reasoning_problems(body, True) == []
    del body["messages"][2]["reasoning_content"]
    assert reasoning_problems(body, True)[0].startswith("reasoning-content-missing")
    reply = {
        "choices": [
            {"message": {"role": "assistant", "content": "hi", "reasoning_content": "hm"}, "finish_reason": "stop"}
        ],
        "usage": {"prompt_tokens": 5, "completion_tokens": 7, "completion_tokens_details": {"reasoning_tokens": 4}},
    }
    response = openai_reply.process(reply, "deepseek-v4-flash")
    assert response.message.content[0] == ReasoningBlock("hm", None, "deepseek-v4-flash")
    assert response.usage.reasoning_tokens == 4


def test_kimi_never_gets_both_switches_and_forced_tools_turn_thinking_off() -> None:
    caps = thinking_caps("moonshot", "kimi-k2.6")
    fields = reasoning_fields(parse_thinking("adaptive", effort="high"), caps)
    assert fields == {"thinking": {"type": "enabled", "keep": "all"}}
    assert reasoning_fields(parse_thinking(None), caps, forced_tool=True) == {"thinking": {"type": "disabled"}}


def test_thinking_and_redacted_blocks_survive_kill_resume_export_and_import(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "s.db")
    session = Session.start(store, workspace=str(tmp_path), tools=(READ,))
    for message in loop_messages():
        session.context.add(message)
    sid = session.id
    del session  # no close: a killed process
    again = Session.resume(SQLiteStore(tmp_path / "s.db"), sid, force=True)
    assert again.context.state.messages[1].content[:2] == (THOUGHT, REDACTED)
    info = store.get(sid)
    lines = list(export_lines(info, store.entries(sid)))
    _, entries = read_export(lines, "export.jsonl")
    blocks = [b for e in entries if e.kind == "response" for b in e.body["content"]]
    assert blocks[:2] == [THOUGHT.to_dict(), REDACTED.to_dict()]


def test_the_server_refuses_with_the_apis_texts() -> None:
    rules = ThinkingRules()
    with BillingFake([Task("go", [[("read_file", {"path": "a"})]])], thinking=rules) as fake:
        client = anthropic.Anthropic(api_key="k", base_url=fake.url("r", "anthropic"), max_retries=0)
        base = {"model": "claude-sonnet-5", "max_tokens": 4000, "thinking": {"type": "adaptive"}}
        tools = [{"name": "read_file", "description": "r", "input_schema": {"type": "object"}}]
        budget = {**base, "thinking": {"type": "enabled", "budget_tokens": 2048}}
        with pytest.raises(anthropic.BadRequestError) as caught:
            client.messages.create(**budget, messages=[{"role": "user", "content": "go"}])
        assert caught.value.body["error"]["message"] == (  # type: ignore[index]
            '"thinking.type.enabled" is not supported for this model. Use "thinking.type.adaptive" and '
            '"output_config.effort" to control thinking behavior.'
        )
        first = client.messages.create(**base, tools=tools, messages=[{"role": "user", "content": "go"}]).model_dump()
        content = [b for b in first["content"] if b["type"] in ("thinking", "tool_use")]
        content = [{k: v for k, v in b.items() if v is not None and k != "caller"} for b in content]
        loop = [
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": content},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": content[1]["id"], "content": "x"}]},
        ]
        client.messages.create(**base, tools=tools, messages=loop)  # legal
        cases = [
            (
                [loop[0], {"role": "assistant", "content": content[1:]}, loop[2]],
                errors["final"].format(i=1, found="tool_use"),
            ),
            (
                [
                    loop[0],
                    {"role": "assistant", "content": [{**content[0], "thinking": "edited"}, content[1]]},
                    loop[2],
                ],
                errors["modified"].format(i=1, j=0),
            ),
            ([{"role": "user", "content": "go, changed"}, *loop[1:]], errors["bound"].format(i=1, j=0)),
            (
                [
                    loop[0],
                    {
                        "role": "assistant",
                        "content": [{**content[0], "cache_control": {"type": "ephemeral"}}, content[1]],
                    },
                    loop[2],
                ],
                errors["cache_control"].format(i=1, j=0),
            ),
        ]
        for messages, text in cases:
            with pytest.raises(anthropic.BadRequestError) as caught:
                client.messages.create(**base, tools=tools, messages=messages)
            assert caught.value.body["error"]["message"] == text  # type: ignore[index]
        with pytest.raises(anthropic.BadRequestError, match="forces tool use"):
            client.messages.create(**base, tools=tools, tool_choice={"type": "any"}, messages=loop)
        dropped = client.messages.create(
            **{**base, "thinking": {**base["thinking"], "block_binding": {"prefix_mismatch_behavior": "drop_block"}}},
            tools=tools,
            messages=[{"role": "user", "content": "go, changed"}, *loop[1:]],
            extra_headers={"anthropic-beta": "thinking-binding-controls-2026-08-01"},
        ).model_dump()
        assert dropped["input_transformations"] == [{"type": "thinking_block_dropped", "message": 1, "block": 0}]
        assert dropped["usage"]["output_tokens_details"]["thinking_tokens"] > 0
        chat = openai.OpenAI(api_key="k", base_url=fake.url("d", "openai", provider="deepseek"), max_retries=0)
        call = {"id": "c1", "type": "function", "function": {"name": "read_file", "arguments": "{}"}}
        with pytest.raises(openai.BadRequestError, match="Missing `reasoning_content` field"):
            chat.chat.completions.create(
                model="deepseek-v4-flash",
                messages=[
                    {"role": "user", "content": "go"},
                    {"role": "assistant", "content": None, "tool_calls": [call]},
                    {"role": "tool", "tool_call_id": "c1", "content": "x"},
                ],
            )


def test_count_tokens_sends_the_betas_the_message_call_does() -> None:
    with BillingFake([Task("go", [[("read_file", {"path": "a"})]])], thinking=ThinkingRules()) as fake:
        url = fake.url("r", "anthropic")
        provider = AnthropicProvider(
            model="claude-sonnet-5",
            api_key="k",
            base_url=url,
            thinking=parse_thinking("adaptive", binding="drop_block"),
        )
        prompt = Prompt(("s",), (READ,), (Message.user("hi"),))
        assert "block_binding" in provider.render(prompt)["thinking"]
        assert provider.count_tokens(prompt) == fake.counts("r")[0] > 0


def test_the_recorded_thinking_settings_round_trip_whole() -> None:
    settings = [
        parse_thinking("2048", binding="drop_block"),
        parse_thinking("adaptive", "omitted", "low", "drop_block"),
        parse_thinking("2048"),
        parse_thinking(None, effort="low"),
        parse_thinking("off"),
    ]
    assert [thinking_of_key(thinking_key(t)) for t in settings] == settings
    assert thinking_key(settings[0]) == "2048///drop_block" and thinking_key(settings[2]) == "2048"
    assert thinking_of_key("2048/omitted") == parse_thinking("2048", "omitted"), "a key written before it named one"
    assert thinking_of_key("2048", "drop_block") == settings[0], "the binding of a key that names none"
    assert thinking_of_key("off", "drop_block") == settings[4], "only a thinking that is on binds its blocks"
    assert named_key("off", "drop_block") == "off" and named_key("2048", "drop_block") == "2048///drop_block"


def fcall(call_id: str) -> dict[str, object]:
    return {"id": call_id, "type": "function", "function": {"name": "f", "arguments": "{}"}}


def test_lint_reports_each_thinking_rule_by_its_id_and_a_change_of_settings() -> None:
    body = adapter().render(Prompt(("s",), (READ,), loop_messages()))
    assert [f.rule for f in lint_body(body, "anthropic") if f.severity == "error"] == []
    second = body["messages"][1]
    marked = [{**THOUGHT.to_dict(), "cache_control": {"type": "ephemeral"}}, *second["content"][1:]]
    bad = {**body, "messages": [body["messages"][0], {**second, "content": second["content"][2:]}, body["messages"][2]]}
    assert "thinking-final-assistant" in {f.rule for f in lint_body(bad, "anthropic")}
    bad = {**body, "messages": [body["messages"][0], {**second, "content": marked}, body["messages"][2]]}
    # lint names a marker on a thinking block once, by the breakpoint rule, at the block itself
    assert "breakpoint-on-uncacheable" in {f.rule for f in lint_body(bad, "anthropic")}
    other = {**body, "thinking": {"type": "adaptive"}}
    assert "thinking-changed" in {f.rule for f in lint_bodies([body, other], "anthropic")}
    chat = {
        "model": "deepseek-v4-flash",
        "messages": [
            {"role": "user", "content": "go"},
            {
                "role": "assistant",
                "content": None,
                "reasoning_content": "r",
                "tool_calls": [fcall("c")],
            },
            {"role": "tool", "tool_call_id": "c", "content": "x"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [fcall("d")],
            },
            {"role": "tool", "tool_call_id": "d", "content": "y"},
        ],
    }
    found = [f for f in lint_body(chat, "openai") if f.rule == "reasoning-content-missing"]
    assert [f.path for f in found] == ["messages[3]"]


def test_a_change_of_thinking_settings_is_a_named_miss_cause() -> None:
    ctx = Context("s", (READ,))
    ctx.add(Message.user("hello " * 400))
    first = adapter("claude-sonnet-4-6", "2048")
    second = adapter("claude-sonnet-4-6", "adaptive")
    before = ctx.renderer.render(ctx.prompt(), first)
    after = Renderer(ctx.state.ledger.texts).render(ctx.prompt(), second)
    prior = Before(0.0, "claude-sonnet-4-6", before.fingerprint, 4000, before.prompt, (), "", before.chain)
    cause = diagnose(prior, after, second.profile, Usage(4000, 10, 0, 4000), 1.0)
    assert cause == "thinking settings changed: 2048 -> adaptive (the cache misses from the first message on)"


@pytest.mark.parametrize(
    ("flags", "line"),
    [
        (["--thinking", "512"], "tiny-agent: --thinking 512: the budget must be at least 1024 tokens"),
        (["--model", "claude-sonnet-4-5", "--thinking", "adaptive"], "tiny-agent: claude-sonnet-4-5 has no adaptive"),
    ],
)
def test_the_cli_refuses_an_unsupported_setting_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, flags: list[str], line: str
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    argv = ["--provider", "anthropic", *flags, "--no-session", "--workspace", str(tmp_path), "hi"]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(line) and "\n" not in err


def test_the_cli_shows_thinking_folded_and_json_carries_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "a.txt").write_text("alpha " * 50)
    task = Task("read a", [[("read_file", {"path": "a.txt"})]], "Read.")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test")
    with BillingFake([task], thinking=ThinkingRules(words=80)) as fake:
        common = ["--provider", "anthropic", "--model", "claude-sonnet-5", "--base-url", fake.url("r", "anthropic")]
        common += ["--thinking", "adaptive", "--no-session", "--workspace", str(tmp_path)]
        assert main([*common, "please read a"]) == 0
        err = capsys.readouterr().err
        assert err.count("thinking: Reply ") == 2 and "chars)" in err, "folded to one line each"
        assert "(thinking " in err, "the per-call line shows the thinking tokens"
        again = [*common, "--json", "please read a"]
        again[again.index(fake.url("r", "anthropic"))] = fake.url("r2", "anthropic")  # a fresh conversation
        assert main(again) == 0
        payload = json.loads(capsys.readouterr().out)
    assert payload["answer"] == "Read." and len(payload["thinking"]) == 2
    assert payload["thinking"][0].startswith("Reply ") and payload["tokens"]["reasoning"] > 0


def test_the_config_file_takes_the_thinking_keys(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "nowhere"))
    (tmp_path / "tiny-agent.toml").write_text('thinking = 4096\nthinking_display = "omitted"\neffort = "low"\n')
    from tiny_agent.cli.run_keys import checked_value

    values = load_config(tmp_path).values  # run settings: applied where no flag is given
    found = tuple(checked_value(key, values[key], key) for key in ("thinking", "thinking_display", "effort"))
    assert found == ("4096", "omitted", "low")


@pytest.mark.parametrize(
    ("model", "sent"),
    [
        ("claude-3-5-haiku-latest", None),
        ("claude-sonnet-4-5", {"type": "disabled"}),
        ("claude-sonnet-5", {"type": "disabled"}),
    ],
)
def test_thinking_off_is_sent_only_to_a_model_that_thinks(model: str, sent: object) -> None:
    body = adapter(model, "off").render(Prompt(("sys",), (), (Message.user("hi"),)))
    assert body.get("thinking") == sent


def test_a_cap_at_or_under_the_budget_gets_the_budget_beside_it() -> None:
    prompt = Prompt(("sys",), (READ,), loop_messages()[:1])

    def sent(max_tokens: int, thinking: str) -> int:
        provider = AnthropicProvider(model="claude-sonnet-4-6", api_key="k", thinking=parse_thinking(thinking))
        return int(provider.render(dataclasses.replace(prompt, max_tokens=max_tokens))["max_tokens"])

    assert sent(1024, "2048") == 1024 + 2048
    assert sent(4096, "2048") == 4096, "room enough: the cap as given"
    assert sent(1024, "adaptive") == 1024, "no budget: the model's own measure"
