"""``sessions export --format anthropic|responses`` of a DeepSeek or Kimi session: the reasoning_content
texts cannot go to another wire, and one line on stderr says how many were left out (default thinking
included); DeepSeek's thinking switch and effort go where the Anthropic format has them (its
``thinking: {type}`` and ``output_config.effort``); settings a format has no place for are named in
one line that does not contradict what ``run`` took."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tiny_agent.agent.run import Run
from tiny_agent.agent.settings import RunSettings
from tiny_agent.cli import main
from tiny_agent.store.sqlite import SQLiteStore
from tiny_agent.testing import BillingFake, Task
from tiny_agent.testing.thinking_server import ThinkingRules

ENV = {"DEEPSEEK_API_KEY": "sk-test-1", "MOONSHOT_API_KEY": "sk-test-2"}
MODELS = {"deepseek": "deepseek-v4-flash", "moonshot": "kimi-k2.6"}


def session(tmp_path: Path, provider: str, thinking: str | None = None, effort: str | None = None) -> str:
    """A three-read session of ``provider``'s thinking model on the billing fake's reasoning rules."""
    ws = tmp_path / "ws"
    ws.mkdir()
    for i in range(3):
        (ws / f"p{i}.txt").write_text(f"words of file {i} " * 40)
    task = Task("read", [[("read_file", {"path": f"p{i}.txt"})] for i in range(3)], "Done.")
    rules = ThinkingRules()
    with BillingFake([task], thinking=rules) as fake:
        settings = RunSettings(
            provider=provider, model=MODELS[provider], base_url=fake.url("r", "openai", provider=provider),
            workspace=str(ws), code_tools=False, thinking=thinking, effort=effort,
        )  # fmt: skip
        with SQLiteStore(tmp_path / "s.db") as store, Run.open(store, settings=settings, env=ENV) as run:
            assert run.agent.run("Please read the files").stop == "done"
            assert run.session is not None
            sid = run.session.id
    assert rules.rejected == []
    return sid


def export(tmp_path: Path, sid: str, fmt: str, capsys: pytest.CaptureFixture[str]) -> tuple[dict[str, Any], list[str]]:
    capsys.readouterr()
    assert main(["sessions", "export", sid[:12], "--format", fmt, "--store", str(tmp_path / "s.db")]) == 0
    out = capsys.readouterr()
    body: dict[str, Any] = json.loads(out.out)
    return body, out.err.splitlines()


@pytest.mark.parametrize("fmt", ["anthropic", "responses"])
@pytest.mark.parametrize("provider", ["deepseek", "moonshot"])
def test_a_default_thinking_session_says_which_reasoning_it_left_out(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], provider: str, fmt: str
) -> None:
    sid = session(tmp_path, provider)
    body, err = export(tmp_path, sid, fmt, capsys)
    assert "reasoning_content" not in json.dumps(body) and "thinking" not in body and "reasoning" not in body
    assert err == [
        f"tiny-agent: the body leaves out 3 reasoning_content texts ({provider}'s own; the {fmt} format takes none)"
    ]
    body, err = export(tmp_path, sid, "openai", capsys)
    assert err == [] and json.dumps(body).count('"reasoning_content"') == 3, "its own wire takes them"


def test_deepseeks_switch_and_effort_go_where_the_anthropic_format_has_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sid = session(tmp_path, "deepseek", thinking="adaptive", effort="max")
    body, err = export(tmp_path, sid, "anthropic", capsys)
    assert body["thinking"] == {"type": "enabled"} and body["output_config"] == {"effort": "max"}
    assert err == [
        "tiny-agent: the body leaves out 3 reasoning_content texts (deepseek's own; the anthropic format takes none)"
    ]
    (tmp_path / "off").mkdir()
    sid = session(tmp_path / "off", "deepseek", thinking="off")
    body, err = export(tmp_path / "off", sid, "anthropic", capsys)
    assert body["thinking"] == {"type": "disabled"} and err == [], "no reasoning came back: nothing is left out"


@pytest.mark.parametrize(
    ("provider", "fmt", "settings", "key"),
    [
        ("deepseek", "responses", {"thinking": "adaptive", "effort": "max"}, "adaptive//max"),
        ("moonshot", "anthropic", {"thinking": "adaptive"}, "adaptive"),
    ],
    ids=["deepseek-responses", "kimi-anthropic"],
)
def test_settings_a_format_has_no_place_for_are_named_without_contradicting_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], provider: str, fmt: str, settings: dict[str, str], key: str
) -> None:
    sid = session(tmp_path, provider, **settings)
    body, err = export(tmp_path, sid, fmt, capsys)
    assert "thinking" not in body and "reasoning" not in body and "output_config" not in body
    where = f"Chat Completions (--provider {provider})" + (" and the Messages wire" if provider == "deepseek" else "")
    assert err == [
        f"tiny-agent: the body has no thinking settings (the session's: {key}): tiny-agent sends "
        f"{MODELS[provider]}'s on {where} only",
        f"tiny-agent: the body leaves out 3 reasoning_content texts ({provider}'s own; the {fmt} format takes none)",
    ]
