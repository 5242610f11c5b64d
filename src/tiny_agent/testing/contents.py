"""File contents unlike the benchmarks' repeated English lines: JSON, code, prose, and other scripts.

A size estimate calibrated on one kind of text drifts on another (JSON and CJK take far more tokens
a character than English prose): these are what the estimate tests and benchmarks read.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from tiny_agent.providers.openai.token_count import PER_MESSAGE, text_tokens
from tiny_agent.testing.tasks import Task

__all__ = ["KINDS", "content", "mixed_reads", "o200k_counter"]

_PROSE = [
    "The",
    "service",
    "reads",
    "its",
    "settings",
    "once",
    "at",
    "start",
    "and",
    "keeps",
    "them",
    "until",
    "it",
    "stops;",
    "a",
    "worker",
    "that",
    "fails",
    "three",
    "times",
    "in",
    "a",
    "row",
    "is",
    "taken",
    "out",
    "of",
    "the",
    "pool,",
    "and",
    "the",
    "queue",
    "is",
    "drained",
    "before",
    "a",
    "restart.",
]
_GERMAN = [
    "Der",
    "Dienst",
    "liest",
    "die",
    "Einstellungen",
    "beim",
    "Start",
    "und",
    "behält",
    "sie,",
    "bis",
    "er",
    "beendet",
    "wird.",
]
_CJK = "服务在启动时读取设置并一直保留到停止。設定は起動時に読み込まれ、停止するまで保持されます。"


def _prose(rng: random.Random, chars: int) -> str:
    return " ".join(rng.choice(_PROSE) for _ in range(chars // 6))[:chars]


def _json(rng: random.Random, chars: int) -> str:
    rows: list[dict[str, object]] = []
    while len(json.dumps(rows, indent=2)) < chars:
        rows.append({"id": len(rows), "name": f"item-{rng.randint(100, 999)}", "ok": rng.random() > 0.5, "w": 1.5})
    return json.dumps(rows, indent=2)


def _code(rng: random.Random, chars: int) -> str:
    lines: list[str] = []
    while sum(len(line) + 1 for line in lines) < chars:
        n = len(lines)
        lines += [
            f"def handler_{n}(request, limit={rng.randint(1, 99)}):",
            f"    return request.get('k{n}', 0) * limit",
        ]
    return "\n".join(lines)


def _other_scripts(rng: random.Random, chars: int) -> str:
    parts: list[str] = []
    while sum(map(len, parts)) < chars:
        parts.append(_CJK if rng.random() < 0.5 else " ".join(_GERMAN))
    return "\n".join(parts)[:chars]


KINDS = {"json": _json, "code": _code, "prose": _prose, "other scripts": _other_scripts}


def content(kind: str, chars: int, seed: int = 0) -> str:
    """About ``chars`` characters of ``kind`` (one of ``KINDS``), the same for the same seed."""
    return KINDS[kind](random.Random(seed), chars)


def mixed_reads(root: Path, files: int = 16) -> Task:
    """A task that reads ``files`` files of every kind in turn (2,500-3,700 characters each)."""
    steps = []
    for i in range(files):
        kind = list(KINDS)[i % len(KINDS)]
        (root / f"f{i:02d}.txt").write_text(content(kind, 2500 + 300 * (i % 5), seed=i))
        steps.append([("read_file", {"path": f"f{i:02d}.txt"})])
    return Task("read the mixed files", steps, "All read.")


def o200k_counter(block: Any) -> int:
    """A billing fake's tokenizer (``BillingFake(counter=...)``) unlike characters over four: o200k over
    the text of each message or content block with a few tokens of framing, and over each tool
    definition as JSON (as OpenAI's cookbook counts a chat)."""
    if isinstance(block, dict) and ("input_schema" in block or block.get("type") == "function"):
        return text_tokens(json.dumps(block, ensure_ascii=False))
    return PER_MESSAGE + text_tokens(block)
