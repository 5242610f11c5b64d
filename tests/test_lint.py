"""lint finds each hazard in the sample requests under tests/data/lint/ and passes the clean ones."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest

from tiny_agent.observe.lint import Finding, detect_wire, is_clean, lint_bodies, lint_body, lint_files, load_bodies

DATA = Path(__file__).parent / "data" / "lint"


def load(name: str) -> dict[str, Any]:
    body: dict[str, Any] = json.loads((DATA / name).read_text())
    return body


@pytest.mark.parametrize("name", ["clean.json", "clean-openai.json"])
def test_a_clean_request_has_no_findings(name: str) -> None:
    assert lint_files([DATA / name]) == []


@pytest.mark.parametrize(
    ("name", "rule", "severity", "path"),
    [
        ("illegal-order.json", "illegal-order", "error", "messages[1]"),
        ("volatile-system.json", "volatile-in-prefix", "warning", "system[0].text"),
        ("volatile-tools.json", "volatile-in-prefix", "warning", "tools[0].description"),
        ("volatile-openai-system.json", "volatile-in-prefix", "warning", "messages[0].content"),
        ("too-many-breakpoints.json", "too-many-breakpoints", "error", "messages[0].content[0]"),
        ("ttl-order.json", "ttl-order", "error", "$"),
        ("below-minimum.json", "below-minimum", "warning", "messages[0].content[0]"),
        ("no-breakpoint.json", "no-breakpoint", "warning", "$"),
        ("tools-reordered.jsonl", "tools-reordered", "warning", "tools"),
        ("system-changed.jsonl", "system-changed", "warning", "system[0]"),
    ],
)
def test_each_hazard_is_found(name: str, rule: str, severity: str, path: str) -> None:
    findings = lint_files([DATA / name])
    assert not is_clean(findings)
    assert {f.rule for f in findings} == {rule}, [str(f) for f in findings]
    assert any(f.severity == severity and f.path == path for f in findings), [str(f) for f in findings]
    assert all(f.fix for f in findings)


def test_the_seed_timestamp_is_named_with_its_excerpt() -> None:
    (finding,) = lint_body(load("volatile-system.json"))
    assert "ISO timestamp" in finding.message
    assert "2026-11-30T09:33:12.481Z" in finding.excerpt
    assert "Current time" in finding.excerpt


def test_tool_order_is_compared_across_files_given_together(tmp_path: Path) -> None:
    first, second = (json.loads(line) for line in (DATA / "tools-reordered.jsonl").read_text().splitlines())
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps(first))
    b.write_text(json.dumps(second))
    assert lint_files([a]) == [] and lint_files([b]) == [], "one body alone cannot show an unstable order"
    (finding,) = lint_files([a, b])
    assert (finding.rule, finding.request, finding.source) == ("tools-reordered", 1, str(b))


def test_added_tools_are_a_change_not_a_reorder() -> None:
    first = load("clean.json")
    second = copy.deepcopy(first)
    second["tools"] = [*second["tools"], {"name": "run_tests", "description": "Run the tests.", "input_schema": {}}]
    (finding,) = lint_bodies([first, second])
    assert finding.rule == "tool-added" and "run_tests" in finding.message


def test_the_system_change_names_the_character_and_both_sides() -> None:
    (finding,) = lint_files([DATA / "system-changed.jsonl"])
    assert "character 42" in finding.message
    assert "41." in finding.excerpt and "42." in finding.excerpt


def test_volatile_content_in_history_is_only_a_hint() -> None:
    body = load("clean.json")
    body["messages"][0]["content"][0]["text"] += " The deploy ran at 2026-11-29T17:02:00Z."
    (finding,) = lint_body(body)
    assert (finding.rule, finding.severity) == ("volatile-in-prefix", "info")
    assert finding.path == "messages[0].content[0].text"
    assert is_clean([finding])


def test_volatile_content_after_the_last_breakpoint_is_fine() -> None:
    body = load("clean.json")
    for message in body["messages"]:
        for block in message["content"]:
            block.pop("cache_control", None)
    body["messages"][-1]["content"].append({"type": "text", "text": "It is 09:41:07 now."})
    assert lint_body(body) == []


@pytest.mark.parametrize(
    ("text", "flagged"),
    [
        ("request id aZ3kQ9xP2mL7vB1nR8tY", True),
        ("commit 9fceb02d0ae598e95dc970b74767f19372d61af8", True),
        ("started at 1764495180", True),
        ("a 09:41 PM deadline", True),
        ("call getHTTPResponseCode2024Value", False),
        ("the max_inflight_requests_per_host setting", False),
        ("port 8080, 3 retries, 1024 tokens", False),
    ],
)
def test_volatile_patterns_and_what_they_leave_alone(text: str, flagged: bool) -> None:
    body = load("clean.json")
    body["system"][0]["text"] += " " + text
    rules = [f.rule for f in lint_body(body)]
    assert rules == (["volatile-in-prefix"] if flagged else [])


def test_the_minimum_follows_the_model() -> None:
    body = load("clean.json")  # about 1,250 tokens up to its last breakpoint
    assert lint_body(body, model="claude-sonnet-4-6") == []
    (finding,) = lint_body(body, model="claude-haiku-4-5")  # Haiku 4.5 caches from 4,096
    assert finding.rule == "below-minimum" and "4,096" in finding.message


def test_wire_is_detected_from_the_shape() -> None:
    assert detect_wire(load("clean.json")) == "anthropic"
    assert detect_wire(load("clean-openai.json")) == "openai"
    assert detect_wire({"messages": [{"role": "user", "content": "hi"}]}) == "openai"


def test_a_json_list_is_several_requests(tmp_path: Path) -> None:
    path = tmp_path / "both.json"
    path.write_text(json.dumps([load("clean.json"), load("clean.json")]))
    assert [source for source, _ in load_bodies(path)] == [f"{path}[0]", f"{path}[1]"]
    assert lint_files([path]) == []


def test_a_finding_prints_on_one_line_and_serialises() -> None:
    finding = Finding("below-minimum", "warning", "system[0]", "too short", "18 < 1024", "mark later", 2, "a.jsonl:3")
    line = str(finding)
    assert "\n" not in line
    assert line.startswith("a.jsonl:3: system[0]: warning below-minimum: too short [18 < 1024]; fix: mark later")
    assert json.loads(json.dumps(finding.to_dict()))["rule"] == "below-minimum"


def _emitted_rules() -> set[str]:
    """Every rule id lint can report: its own, the causes of a miss (each wire's settings and the block
    changes), an expired entry, and the reasoning rules but one (a marker on a thinking block is
    reported as ``breakpoint-on-uncacheable``, with the block's own path)."""
    from tiny_agent.observe import lint
    from tiny_agent.providers import cache_breaks, cache_expiry
    from tiny_agent.providers.reasoning_check import RULES

    sources = "".join(Path(m.__file__ or "").read_text() for m in (lint, cache_breaks, cache_expiry))
    ids = set(re.findall(r'"([a-z]+(?:-[a-z]+)+)"', sources)) | set(RULES)
    ids |= {s.rule for wire in ("anthropic", "openai", "responses") for s in cache_breaks.wire_breaks(wire).settings}
    return ids - {"thinking-cache-control"}


def test_every_rule_lint_reports_is_on_the_rules_page_and_no_other() -> None:
    page = (Path(__file__).resolve().parents[1] / "docs" / "lint.md").read_text()
    cells = [line.split(" | ")[0] for line in page.splitlines() if line.startswith("| `")]
    documented = {rule for cell in cells for rule in re.findall(r"`([a-z-]+)`", cell)}
    assert documented == _emitted_rules()


def test_the_thinking_page_names_only_rules_lint_reports() -> None:
    page = (Path(__file__).resolve().parents[1] / "docs" / "thinking.md").read_text()
    named = set(re.findall(r"`((?:thinking|reasoning|effort)-[a-z-]+)`", page))
    assert named and named <= _emitted_rules(), named - _emitted_rules()
