"""The wire registry is the one place a wire is named: each wire in ``WIRES`` is its folder's ``wire``
module, nothing else imports those modules, and what differs by wire (lint, export, the miss
diagnosis, the request check, the CLI's choices) works for every registered wire by asking it."""

from __future__ import annotations

import ast
import dataclasses
import importlib
import json
from pathlib import Path

import click
import pytest

from tiny_agent.cli.lint import lint_command
from tiny_agent.cli.sessions import export_command
from tiny_agent.context.diagnosis import Before, diagnose
from tiny_agent.context.engine import Context
from tiny_agent.context.render import Rendered
from tiny_agent.observe.export import export_lines
from tiny_agent.observe.lint import detect_wire, lint_body
from tiny_agent.providers.adapters import wire_adapter
from tiny_agent.providers.profile import profile_for
from tiny_agent.providers.wire import WIRES, wire_of
from tiny_agent.store.base import SessionInfo
from tiny_agent.types import Prompt, ToolSpec, Usage

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "tiny_agent"
READ = ToolSpec("read_file", "Read a file", {"type": "object", "properties": {"path": {"type": "string"}}})
MODEL = "a-model"


@pytest.mark.parametrize("name", sorted(WIRES))
def test_each_wire_is_its_folders_wire_module(name: str) -> None:
    wire = WIRES[name]
    assert wire.name == name
    assert (PACKAGE / "providers" / name / "wire.py").is_file()
    assert type(wire).__module__ == f"tiny_agent.providers.{name}.wire"
    module, _, cls = wire.adapter.partition(":")
    assert module.startswith(f"tiny_agent.providers.{name}."), "a wire's adapter lives in its folder"
    assert isinstance(getattr(importlib.import_module(module), cls), type)


def test_only_the_registry_imports_a_wires_module() -> None:
    wire_modules = {f"tiny_agent.providers.{name}.wire" for name in WIRES}
    importers = {
        path.relative_to(PACKAGE).as_posix()
        for path in PACKAGE.rglob("*.py")
        if wire_modules & set(_imported(path.read_text(encoding="utf-8")))
    }
    assert importers == {"providers/wire.py"}


def _imported(source: str) -> list[str]:
    """Each module an import names (``from pkg import mod`` counted as both ``pkg`` and ``pkg.mod``)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.extend(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.append(node.module)
            found.extend(f"{node.module}.{a.name}" for a in node.names)
    return found


def test_an_unknown_wire_is_a_one_line_error() -> None:
    from tiny_agent.errors import ConfigError

    with pytest.raises(ConfigError, match="unknown wire format 'smoke-signals'; known: "):
        wire_of("smoke-signals")


def _context() -> Context:
    ctx = Context("You are terse.", [READ])
    ctx.add_user("What is in notes.txt?")
    return ctx


@pytest.mark.parametrize("name", sorted(WIRES))
def test_lint_reads_a_body_of_each_wire_as_that_wire(name: str) -> None:
    ctx = _context()
    body = wire_adapter(name, MODEL).render(Prompt(ctx.system_blocks(), ctx.tools, ctx.messages))
    assert detect_wire(body) == name
    assert [f for f in lint_body(body) if f.severity == "error"] == []
    assert profile_for(name, name, MODEL).check(body) == []
    broken = {**body, "messages": []}
    assert any(f.rule == "illegal-order" for f in lint_body(broken, name))


@pytest.mark.parametrize("name", sorted(WIRES))
def test_a_session_exports_as_each_wire(name: str) -> None:
    ctx = _context()
    info = SessionInfo("s1", 0.0, 0.0, None, "notes", len(ctx.entries) - 1)
    (text,) = export_lines(info, ctx.entries, name)
    body = json.loads(text)
    assert body == wire_adapter(name, "unknown").render(Prompt(ctx.system_blocks(), ctx.tools, ctx.messages))
    assert detect_wire(body) == name


@pytest.mark.parametrize("name", sorted(WIRES))
def test_the_miss_diagnosis_names_each_wires_mark(name: str) -> None:
    profile = profile_for(name, name, MODEL)
    profile = dataclasses.replace(profile, cache=dataclasses.replace(profile.cache, mode="explicit"))
    prompt = Prompt(("You are terse.",), (READ,), ())
    fingerprint = {"tools": "t", "system": "s", "pins": "p", "messages": 1, "chain": "h"}
    before = Before(0.0, MODEL, fingerprint, 50_000, None)
    rendered = Rendered(prompt, {}, (), 0, fingerprint, ("h",), 0)
    cause = diagnose(before, rendered, profile, Usage(50_000, 1, 0, 0), 1.0)
    assert cause is not None and cause.startswith("no cache breakpoint")
    assert f"({wire_of(name).mark_field})" in cause


def _choices(command: click.Command, option: str) -> list[str]:
    found = next(p for p in command.params if p.name == option)
    assert isinstance(found.type, click.Choice)
    return list(found.type.choices)


def test_the_cli_offers_every_wire() -> None:
    assert _choices(lint_command, "wire") == list(WIRES)
    assert _choices(export_command, "fmt") == ["jsonl", *WIRES]
