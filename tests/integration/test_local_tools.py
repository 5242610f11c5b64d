"""search, edit_file and shell on the real server with the real model: the guide's forced first call.

A request that spells out the call (the word to search for, the string to replace, the command in
backticks) gets that one call on offer, so whatever the model's speed or taste, the call is made
and its result is real; the reply after it is an answer (a quote of the result).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tiny_agent.agent.loop import Agent, AgentConfig, RunResult, ToolEvent
from tiny_agent.providers.local.llama_server import LlamaServer
from tiny_agent.providers.local.provider import LocalProvider
from tiny_agent.tools.shell import shell_tool
from tiny_agent.tools.toolbox import Toolbox
from tiny_agent.tools.workspace import Workspace

pytestmark = pytest.mark.integration


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    root = tmp_path / "ws"
    (root / "staff").mkdir(parents=True)
    (root / "hours.md").write_text("Open 8am to 5pm, Monday to Saturday.\n")
    (root / "staff" / "rota.txt").write_text("Anna: Monday\nBen: Tuesday\n")
    return Workspace(root)


def run(server: LlamaServer, workspace: Workspace, task: str, *, shell: bool = False) -> tuple[RunResult, ToolEvent]:
    provider = LocalProvider(base_url=server.base_url, api_key=server.api_key, max_tokens=128)
    tools = [*workspace.tools(), *([shell_tool(workspace.root, mode="yes")] if shell else [])]
    result = Agent(provider, Toolbox(tools), config=AgentConfig(max_steps=3)).run(task)
    calls = [e for e in result.events if isinstance(e, ToolEvent)]
    assert calls, result.message
    return result, calls[0]


def test_a_search_request_calls_search(llama_server: LlamaServer, workspace: Workspace) -> None:
    result, call = run(llama_server, workspace, "Search for Anna")
    assert (call.call.name, dict(call.call.input)) == ("search", {"pattern": "Anna"})
    assert not call.result.is_error and "staff/rota.txt:1:Anna: Monday" in call.result.content
    assert result.stop == "done" and "Anna" in result.answer, result.message


def test_a_replace_request_calls_edit_file_and_the_file_changes(
    llama_server: LlamaServer, workspace: Workspace
) -> None:
    _, call = run(llama_server, workspace, "Replace 8am with 9am in hours.md")
    assert call.call.name == "edit_file" and not call.result.is_error, call.result.content
    assert (workspace.root / "hours.md").read_text() == "Open 9am to 5pm, Monday to Saturday.\n"


def test_with_the_shell_allowed_a_command_in_backticks_calls_shell(
    llama_server: LlamaServer, workspace: Workspace
) -> None:
    _, call = run(llama_server, workspace, "Run `ls` in the workspace", shell=True)
    assert (call.call.name, dict(call.call.input)) == ("shell", {"command": "ls"})
    assert not call.result.is_error and "hours.md" in call.result.content and "staff" in call.result.content
