"""The local server's locks and the local provider's request options, without starting a server.

The same locks are tested against the real llama.cpp server in tests/integration/test_local_security.py.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from tiny_agent.errors import ConfigError
from tiny_agent.providers.local.llama_server import LlamaServer, WarmServer, write_private
from tiny_agent.providers.local.provider import LocalProvider
from tiny_agent.types import Message, Prompt, ToolSpec


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def open_umask() -> Iterator[None]:
    """The most permissive umask: modes must come from the code, not from the umask."""
    old = os.umask(0)
    try:
        yield
    finally:
        os.umask(old)


def server() -> LlamaServer:
    return LlamaServer(Path("/models/m.gguf"), port=8123, binary=Path("/opt/llama-server"))


def test_the_key_is_in_the_environment_and_not_on_the_command_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LLAMA_ARG_TOOLS", "all")  # would switch on the server's shell tool
    monkeypatch.setenv("LLAMA_API_KEY", "someone-elses-key")
    monkeypatch.setenv("LLAMA_ARG_CORS_ORIGINS", "*")
    s = server()
    assert len(s.api_key) >= 40 and s.api_key != server().api_key  # fresh for each server
    assert not any(s.api_key in part for part in s.command())
    assert s.api_key not in repr(s)
    env = s.environment()
    assert env["LLAMA_API_KEY"] == s.api_key
    assert not [k for k in env if k.startswith("LLAMA_ARG_")]
    assert env["PATH"] == os.environ["PATH"]


def test_the_command_turns_off_what_the_engine_does_not_use() -> None:
    cmd = server().command()
    assert "--no-slots" in cmd and "--no-webui" in cmd
    assert cmd[cmd.index("--cors-origins") + 1] == "http://127.0.0.1:8123"
    assert cmd[cmd.index("--host") + 1] == "127.0.0.1"
    assert "--api-key" not in cmd


@pytest.mark.usefixtures("open_umask")
def test_a_private_file_is_0600_in_a_0700_folder_even_where_they_existed_open(tmp_path: Path) -> None:
    folder = tmp_path / "state" / "tiny-agent"
    folder.mkdir(parents=True, mode=0o755)
    path = folder / "llama-server.json"
    path.write_text("old")
    path.chmod(0o644)
    write_private(path, json.dumps({"api_key": "k"}))
    assert json.loads(path.read_text()) == {"api_key": "k"}
    assert (mode(path), mode(folder)) == (0o600, 0o700)
    assert [p.name for p in folder.iterdir()] == ["llama-server.json"]  # no temporary file left


@pytest.mark.usefixtures("open_umask")
def test_a_private_file_in_a_new_folder(tmp_path: Path) -> None:
    path = tmp_path / "new" / "state.json"
    write_private(path, "{}")
    assert (mode(path), mode(path.parent)) == (0o600, 0o700)


def test_the_warm_server_key_is_not_in_its_repr() -> None:
    warm = WarmServer(1, 2, "m.gguf", "secret-key")
    assert "secret-key" not in repr(warm)


def prompt() -> Prompt:
    return Prompt(("Be brief.",), (), (Message.user("hi"),))


def test_sampling_settings_join_every_body() -> None:
    local = LocalProvider(base_url="http://127.0.0.1:9", api_key="k", sampling={"temperature": 0.2, "seed": 3})
    body = local.render(prompt())
    assert (body["temperature"], body["seed"]) == (0.2, 3)
    assert "extra_body" not in body


def test_fields_the_sdk_does_not_know_go_in_extra_body() -> None:
    local = LocalProvider(base_url="http://127.0.0.1:9", api_key="k", sampling={"top_k": 1, "temperature": 0})
    body = local.render(prompt())
    assert body["extra_body"] == {"top_k": 1} and body["temperature"] == 0
    anthropic = LocalProvider(base_url="http://127.0.0.1:9", api_key="k", wire="anthropic", sampling={"top_k": 1})
    assert anthropic.render(prompt())["top_k"] == 1


def test_the_local_model_gets_minutes_not_the_remote_default() -> None:
    """Its replies arrive whole and a long summary on two cores takes minutes (issue 9's run timed out)."""
    local = LocalProvider(base_url="http://127.0.0.1:9", api_key="k").start()
    assert local.inner._client.timeout.read == 600.0  # type: ignore[attr-defined]
    quick = LocalProvider(base_url="http://127.0.0.1:9", api_key="k", timeout=5, max_retries=0).start()
    assert quick.inner._client.timeout.read == 5.0  # type: ignore[attr-defined]
    assert quick.inner._policy.max_retries == 0  # type: ignore[attr-defined]


def test_the_registry_passes_timeout_and_accepts_the_embedded_model_by_name() -> None:
    from tiny_agent.providers.registry import resolve_provider

    local = resolve_provider("local", model="SmolLM2-135M-Instruct", base_url="http://127.0.0.1:9", timeout=7)
    assert isinstance(local, LocalProvider) and local.model_path is None
    assert local.start().inner._client.timeout.read == 7.0  # type: ignore[attr-defined]


def test_forbidding_tools_leaves_the_json_mode_prompt_alone() -> None:
    """So the summary call may forbid them: the guide would otherwise hold the model to a call or a quote."""
    tools = (ToolSpec("read_file", "Read a file", {"type": "object", "properties": {"path": {"type": "string"}}}),)
    local = LocalProvider(base_url="http://127.0.0.1:9", api_key="k").start()
    auto = local.render(Prompt(("Be brief.",), tools, (Message.user("hi"),)))
    none = local.render(Prompt(("Be brief.",), tools, (Message.user("hi"),), tool_choice="none"))
    assert local.profile.tool_choice_keeps_prefix
    assert none["messages"] == auto["messages"] and "response_format" in auto and "response_format" not in none
    assert not LocalProvider(
        base_url="http://127.0.0.1:9", api_key="k", wire="anthropic"
    ).profile.tool_choice_keeps_prefix


def test_a_given_server_gets_the_key_from_llama_api_key_and_a_401_names_it() -> None:
    from tiny_agent.providers.registry import resolve_provider

    given = resolve_provider("local", base_url="http://127.0.0.1:9", env={"LLAMA_API_KEY": "s3cret"})
    assert isinstance(given, LocalProvider)
    inner = given.start().inner
    assert inner._client.api_key == "s3cret" and inner.key_env == "LLAMA_API_KEY"  # type: ignore[attr-defined]
    started = resolve_provider("local", env={"LLAMA_API_KEY": "s3cret"})
    assert isinstance(started, LocalProvider) and started._given_key is None, "a server it starts has its own key"


def test_a_server_url_with_credentials_is_refused_without_showing_them() -> None:
    for url in ("http://bob:hunter2pass@127.0.0.1:9/v1", "http://127.0.0.1:9/v1?key=abc123"):
        with pytest.raises(ConfigError) as refused:
            LocalProvider(base_url=url, api_key="k")
        assert "LLAMA_API_KEY" in str(refused.value)
        assert "hunter2pass" not in str(refused.value) and "bob" not in str(refused.value)
        assert "abc123" not in str(refused.value)
    local = LocalProvider(base_url="http://127.0.0.1:9/v1", api_key="k")
    assert local.profile.cache_home.startswith("http://127.0.0.1:9")


def test_a_warm_server_names_the_model_it_runs_and_a_bigger_one_is_not_guided(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    warm = WarmServer(pid=1, port=9, model="/models/qwen2.5-7b-instruct-q4_k_m.gguf", api_key="k")
    monkeypatch.setattr("tiny_agent.providers.local.provider.read_warm_server", lambda: warm)
    local = LocalProvider().start()
    assert local.model == "qwen2.5-7b-instruct-q4_k_m" and not local.guided
    forced = LocalProvider(guided=True).start()
    assert forced.guided
