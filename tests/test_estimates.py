"""The size estimate after a compaction, held against the server's own count on every provider path.

The billing fake here counts with a real BPE tokenizer (o200k), not the characters-over-four the
engine's estimator resembles, and the files are JSON, code, prose and other scripts: the estimate
calibrated on the turns before a compaction drifts on the window after it. After each compaction the
engine asks the provider's free count once (Anthropic's count_tokens, which the fake answers like the
API; tiktoken offline for OpenAI models), and the next request's size must be within 2% of what the
server billed.
"""

from __future__ import annotations

import dataclasses
import itertools
from pathlib import Path
from typing import Any

import pytest

from tiny_agent.agent.loop import AgentConfig
from tiny_agent.agent.run import Run
from tiny_agent.agent.settings import RunSettings
from tiny_agent.store.sqlite import SQLiteStore
from tiny_agent.testing import BillingFake
from tiny_agent.testing.contents import mixed_reads, o200k_counter
from tiny_agent.testing.tasks import is_summary_request

from .recorded import ENV, MODELS


def errors_after_compactions(tmp_path: Path, wire: str, *, count: bool) -> tuple[list[float], int, int]:
    ws = tmp_path / f"ws-{wire}-{count}"
    ws.mkdir()
    task = mixed_reads(ws)
    db = tmp_path / f"{wire}{count}.db"
    with BillingFake([task], counter=o200k_counter) as fake, SQLiteStore(db) as store:
        settings = RunSettings(provider=wire, model=MODELS[wire], base_url=fake.url("r", wire), workspace=str(ws))
        config = {"compact_at": 9000, "keep_turns": 2, "policy": "fraction"}
        with Run.open(store, settings=settings, config=config, env=ENV, agent=AgentConfig(max_steps=60)) as run:
            if not count:
                provider: Any = run.provider
                provider._profile = dataclasses.replace(provider.profile, free_count=False)
            assert run.agent.run("Please read the mixed files one by one").stop == "done"
            compactions = list(run.context.compactions)
        bills = fake.bills("r")
        counts = fake.counts("r")
    firsts = [b for prev, b in itertools.pairwise(bills) if summary(prev, wire) and not summary(b, wire)]
    assert len(firsts) == len(compactions) >= 2, "the task compacts, and a turn follows each compaction"
    pairs = zip(compactions, firsts, strict=True)
    errors = [((m.tokens_after or 0) - b.call.input_tokens) / b.call.input_tokens for m, b in pairs]
    return errors, len(compactions), len(counts)


def summary(bill: Any, wire: str) -> bool:
    return is_summary_request(bill.body, wire)


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
