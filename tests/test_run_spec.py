"""A run is one ``RunSpec``: ``Run.open(spec)``, ``Run.open(**fields)`` and the old keyword form build
the same run; the local model's differences are read from its profile and its protocol, not its class."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tiny_agent import Run, RunSettings
from tiny_agent.agent.spec import SPEC_FIELDS, RunSpec
from tiny_agent.cli import main
from tiny_agent.errors import ConfigError
from tiny_agent.store.sqlite import SQLiteStore
from tiny_agent.testing import ScriptedProvider
from tiny_agent.types import Message


@pytest.fixture
def built(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """The provider the run builds is scripted; each build's arguments are kept."""
    calls: list[dict[str, Any]] = []

    def resolve(name: str | None, **kwargs: Any) -> ScriptedProvider:
        calls.append({"name": name, **kwargs})
        return ScriptedProvider([Message.assistant("done")], name=name or "scripted")

    monkeypatch.setattr("tiny_agent.agent.parts.resolve_provider", resolve)
    return calls


def _recorded(store: SQLiteStore, session_id: str) -> dict[str, Any]:
    with Run.open(store, resume=session_id) as again:
        return dict(again.context.run_settings)


@pytest.mark.parametrize("form", ["spec", "fields", "positional store"])
def test_each_form_opens_the_same_run(tmp_path: Path, built: list[dict[str, Any]], form: str) -> None:
    settings = RunSettings(provider="anthropic", workspace=str(tmp_path), max_tokens=300)
    with SQLiteStore(tmp_path / "s.db") as store:
        given: dict[str, Any] = {"settings": settings, "pins": ["never edit dev.mjs"], "config": {"keep_turns": 3}}
        if form == "spec":
            run = Run.open(RunSpec(store=store, **given))
        elif form == "fields":
            run = Run.open(store=store, **given)
        else:
            run = Run.open(store, **given)
        with run:
            assert run.run("hello").answer == "done"
            assert run.context.state.pins == ["never edit dev.mjs"]
            assert run.context.config.keep_turns == 3
            assert run.session is not None and run.store is store
            session_id = run.session.id
        stored = _recorded(store, session_id)
    assert built[0]["name"] == "anthropic" and built[0]["max_tokens"] == 300
    assert stored["provider"] == "anthropic" and stored["max_tokens"] == 300
    assert stored["workspace"] == str(tmp_path)


def test_keywords_beside_a_spec_replace_its_fields(tmp_path: Path, built: list[dict[str, Any]]) -> None:
    spec = RunSpec(settings=RunSettings(workspace=str(tmp_path)), pins=("a",))
    with Run.open(spec, pins=["b"], settings=None) as run:
        assert run.context.state.pins == ["b"], "pins replaced"
        assert run.workspace.root == tmp_path.resolve(), "settings=None is not given: the spec's stay"
    assert spec.pins == ("a",), "the spec itself is not changed"


def test_a_field_that_is_none_means_its_default(built: list[dict[str, Any]]) -> None:
    spec = RunSpec.of(settings=None, agent=None, config=None, provider_options=None, system=None)
    assert spec == RunSpec(), "None for settings, agent, config... is the default, as the old keywords took it"


def test_a_name_that_is_no_field_is_one_line_naming_the_fields(built: list[dict[str, Any]]) -> None:
    with pytest.raises(TypeError, match=r"'pin' is not a RunSpec field; the fields are: store, settings"):
        Run.open(None, pin=["x"])
    assert built == [], "nothing was built"


def test_the_spec_holds_every_keyword_run_open_took() -> None:
    old = (
        "store settings config system append_system pins resume continue_latest force agent on_event "
        "provider_options otel env keepalive tools mcp hooks report"
    )
    old += " approve"  # the shell tool's question to the user, added with it
    assert set(SPEC_FIELDS) == set(old.split())


class _HeldProvider(ScriptedProvider):
    """A provider holding a resource (as the local model holds its server), with a display-only model name."""

    def __init__(self) -> None:
        super().__init__([Message.assistant("done")], name="held", model="tiny", model_is_display_name=True)
        self.events: list[str] = []

    def __enter__(self) -> _HeldProvider:
        self.events.append("enter")
        return self

    def __exit__(self, *exc: object) -> None:
        self.events.append("exit")


def test_a_provider_holding_a_resource_is_entered_and_its_display_name_not_remembered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What the local model does differently is asked of its profile (``model_is_display_name``) and
    of the provider (a context manager), so any provider like it gets the same treatment."""
    held = _HeldProvider()
    monkeypatch.setattr("tiny_agent.agent.parts.resolve_provider", lambda *a, **k: held)
    with SQLiteStore(tmp_path / "s.db") as store:
        with Run.open(store, settings=RunSettings(workspace=str(tmp_path))) as run:
            assert held.events == ["enter"]
            session_id = run.session.id if run.session else ""
        assert held.events == ["enter", "exit"], "exited when the run closed"
        stored = _recorded(store, session_id)
    assert stored["provider"] == "held"
    assert "model" not in stored, "a display name is not remembered as the model to ask for"


def test_a_remote_model_is_remembered(tmp_path: Path, built: list[dict[str, Any]]) -> None:
    with SQLiteStore(tmp_path / "s.db") as store:
        with Run.open(store, settings=RunSettings(workspace=str(tmp_path))) as run:
            session_id = run.session.id if run.session else ""
        assert _recorded(store, session_id)["model"] == "scripted"


def test_the_command_line_opens_one_spec(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, built: list[dict[str, Any]]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TINY_AGENT_STORE", str(tmp_path / "sessions.db"))
    (tmp_path / "tiny-agent.toml").write_text('pins = ["from the file"]\n', encoding="utf-8")
    opened: list[RunSpec] = []
    real = Run.open

    def spy(spec: Any = None, /, **fields: Any) -> Run:
        opened.append(RunSpec.of(**fields) if spec is None else spec)
        return real(spec, **fields)

    monkeypatch.setattr(Run, "open", staticmethod(spy))
    assert main(["--pin", "from a flag", "--max-steps", "4", "hi"]) == 0
    (spec,) = opened
    assert isinstance(spec, RunSpec)
    assert tuple(spec.pins) == ("from the file", "from a flag"), "the file's pins, then the flags'"
    assert spec.agent.max_steps == 4


@pytest.mark.parametrize(
    ("settings", "options", "named"),
    [
        ({"thinking": "2048"}, {"thinking": "adaptive"}, "RunSettings(thinking=...)"),
        ({"max_tokens": 300}, {"max_tokens": 900}, "RunSettings(max_tokens=...)"),
        ({"server_compact_at": 50_000}, {"compact_threshold": 80_000}, "RunSettings(server_compact_at=...)"),
        ({}, {"model": "claude-sonnet-5"}, "RunSettings(model=...)"),
        ({}, {"env": {}}, "RunSpec(env=...)"),
    ],
)
def test_a_setting_given_twice_is_one_line_not_a_silent_choice(
    tmp_path: Path, built: list[dict[str, Any]], settings: dict[str, Any], options: dict[str, Any], named: str
) -> None:
    spec = RunSpec(
        settings=RunSettings(provider="anthropic", workspace=str(tmp_path), **settings), provider_options=options
    )
    with pytest.raises(ConfigError) as caught:
        Run.open(spec)
    assert named in str(caught.value) and "\n" not in str(caught.value)
    assert built == [], "refused before any provider is built"


@pytest.mark.parametrize(
    ("options", "named"),
    [
        ({"thinking": "adaptive", "max_tokens": 1000}, "RunSettings(max_tokens=...)"),
        ({"thinking": "adaptive"}, "RunSettings(thinking=...)"),
        ({"effort": "low"}, "RunSettings(effort=...)"),
        ({"thinking_display": "omitted"}, "RunSettings(thinking_display=...)"),
        ({"compact_threshold": 60_000}, "RunSettings(server_compact_at=...)"),
        ({"cache_ttl": "1h"}, "RunSettings(cache_ttl=...)"),
    ],
)
def test_a_run_setting_in_provider_options_is_refused_even_when_settings_leave_it_out(
    tmp_path: Path, built: list[dict[str, Any]], options: dict[str, Any], named: str
) -> None:
    """provider_options are not remembered: a resume would drop the thinking and the cap they carried."""
    settings = RunSettings(provider="anthropic", model="claude-sonnet-5", workspace=str(tmp_path))
    with pytest.raises(ConfigError) as caught:
        Run.open(RunSpec(settings=settings, provider_options=options))
    assert named in str(caught.value) and "\n" not in str(caught.value)
    assert built == []


def test_an_unknown_provider_option_is_one_line_not_a_type_error(tmp_path: Path, built: list[dict[str, Any]]) -> None:
    spec = RunSpec(settings=RunSettings(provider="anthropic", workspace=str(tmp_path)), provider_options={"timout": 5})
    with pytest.raises(ConfigError, match=r"provider_options\['timout'\] is no adapter option; they are: .*timeout"):
        Run.open(spec)
    assert built == []


def test_an_option_another_adapter_takes_is_one_line_not_a_type_error(tmp_path: Path) -> None:
    settings = RunSettings(provider="anthropic", base_url="http://127.0.0.1:9", workspace=str(tmp_path))
    spec = RunSpec(settings=settings, provider_options={"tool_mode": "json_schema"}, env={"ANTHROPIC_API_KEY": "k"})
    with pytest.raises(ConfigError, match="the anthropic adapter does not take 'tool_mode'"):
        Run.open(spec)


def test_provider_options_still_carry_what_no_setting_holds(tmp_path: Path, built: list[dict[str, Any]]) -> None:
    spec = RunSpec(settings=RunSettings(workspace=str(tmp_path), max_tokens=300), provider_options={"timeout": 5.0})
    with Run.open(spec) as run:
        assert run.run("hello").answer == "done"
    assert built[0]["timeout"] == 5.0 and built[0]["max_tokens"] == 300
