"""The size estimate after a compaction, held against the server's own count on every provider path.

The billing fake here counts with a real BPE tokenizer (o200k), not the characters-over-four the
engine's estimator resembles, and the files are JSON, code, prose and other scripts: the estimate
calibrated on the turns before a compaction drifts on the window after it. After each compaction the
engine asks the provider's free count once (Anthropic's count_tokens, which the fake answers like the
API; tiktoken offline for OpenAI models), and the next request's size must be within 2% of what the
server billed.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tiny_agent.testing.estimates import after_compactions

from .recorded import ENV, MODELS


def errors_after_compactions(tmp_path: Path, wire: str, *, count: bool) -> tuple[list[float], int, int]:
    run = after_compactions(tmp_path, wire, MODELS[wire], ENV, count=count)
    assert run.stop == "done"
    assert run.turns_after == run.compactions >= 2, "the task compacts, and a turn follows each compaction"
    return run.errors, run.compactions, run.counts


@pytest.mark.parametrize("wire", ["anthropic", "openai"])
def test_the_size_after_a_compaction_is_within_two_percent_of_the_servers_count(tmp_path: Path, wire: str) -> None:
    errors, compactions, counts = errors_after_compactions(tmp_path, wire, count=True)
    assert max(abs(e) for e in errors) <= 0.02, errors
    if wire == "anthropic":
        assert counts == compactions, "count_tokens once per compaction, never on a turn"
    else:
        assert counts == 0, "OpenAI models are counted offline"


def test_without_the_count_the_estimate_drifts_on_such_content(tmp_path: Path) -> None:
    errors, _, counts = errors_after_compactions(tmp_path, "anthropic", count=False)
    assert counts == 0
    assert max(abs(e) for e in errors) > 0.02, "the content is unlike what the estimate was calibrated on"
