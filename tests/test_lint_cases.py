"""``lint`` on cases written by hand after the providers' documentation (tests/data/lint_cases/, each
naming its source): every class of cache break is named with its rule and position, and a clean
sequence gets no finding at all (hints included)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tiny_agent.observe.lint import lint_bodies

CASES = sorted((Path(__file__).parent / "data" / "lint_cases").glob("*.json"))


def load(path: Path) -> dict[str, Any]:
    case: dict[str, Any] = json.loads(path.read_text())
    return case


@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_each_case_gets_exactly_its_rule_at_its_place(path: Path) -> None:
    case = load(path)
    findings = [f for f in lint_bodies(case["bodies"], case.get("wire")) if f.severity != "info"]
    got = [{"request": f.request, "rule": f.rule, "path": f.path} for f in findings]
    expected = [{k: e[k] for k in ("request", "rule", "path")} for e in case["expect"]]
    assert got == expected, [str(f) for f in findings]
    for finding, want in zip(findings, case["expect"], strict=True):
        if "character" in want:
            assert f"character {want['character']}" in finding.message, finding.message


def test_the_cases_cover_every_class_the_issue_lists() -> None:
    rules = {e["rule"] for path in CASES for e in load(path)["expect"]}
    assert rules >= {
        "system-changed",
        "tools-reordered",
        "tool-added",
        "tool-removed",
        "tool-schema-changed",
        "tool-description-changed",
        "message-edited",
        "message-removed",
        "model-changed",
        "thinking-changed",
        "effort-changed",
        "tool-choice-changed",
        "response-format-changed",
        "too-many-breakpoints",
        "no-breakpoint",
        "breakpoint-lookback",
        "below-minimum",
        "breakpoint-on-uncacheable",
        "cache-key-changed",
        "illegal-order",
    }
    assert sum(not load(p)["expect"] for p in CASES) >= 3, "clean sequences too"
