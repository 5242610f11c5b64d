"""Writes store_v1.db: a session store as schema version 1 (the first migration only) left it.

Run once, by hand, when the fixture was made; kept so the fixture's content is reviewable:
    python tests/data/make_store_v1.py
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from tiny_agent.store.migrations import MIGRATIONS

HERE = Path(__file__).resolve().parent
ENTRIES = [
    ("config", {"v": 1, "settings": {"system": "You are terse.", "compact_at": 0.8, "keep_turns": 4}}),
    ("user", {"v": 1, "content": [{"type": "text", "text": "what is in notes.txt?"}]}),
    ("call", {"v": 1, "purpose": "turn", "model": "claude-sonnet-4-6", "chars": 400, "fingerprint": {}}),
    (
        "response",
        {
            "v": 1,
            "call": 2,
            "content": [{"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {"path": "notes.txt"}}],
        },
    ),
    (
        "call_done",
        {
            "v": 1,
            "call": 2,
            "usage": {"input_tokens": 120, "output_tokens": 20, "cache_read_tokens": 0, "cache_write_tokens": 0},
            "cost_usd": 0.00066,
            "seconds": 1.2,
            "model": "claude-sonnet-4-6",
            "purpose": "turn",
            "stop_reason": "tool_use",
        },
    ),
    ("tool_result", {"v": 1, "block": {"type": "tool_result", "tool_use_id": "toolu_1", "content": "buy milk"}}),
]


def main() -> None:
    path = HERE / "store_v1.db"
    path.unlink(missing_ok=True)
    db = sqlite3.connect(path, isolation_level=None)
    MIGRATIONS[0](db)
    db.execute("PRAGMA user_version = 1")
    db.execute(
        "INSERT INTO sessions (id, created_at, updated_at, workspace, head) VALUES (?, ?, ?, ?, ?)",
        ("0f1e2d3c4b5a69788796a5b4c3d2e1f0", 1764500000.0, 1764500060.0, "/home/user/project", len(ENTRIES) - 1),
    )
    for seq, (kind, body) in enumerate(ENTRIES):
        db.execute(
            "INSERT INTO entries (session_id, seq, id, kind, body, at) VALUES (?, ?, ?, ?, ?, ?)",
            ("0f1e2d3c4b5a69788796a5b4c3d2e1f0", seq, f"e{seq:031d}", kind, json.dumps(body), 1764500000.0 + seq),
        )
    db.execute("VACUUM")
    db.close()


if __name__ == "__main__":
    main()
