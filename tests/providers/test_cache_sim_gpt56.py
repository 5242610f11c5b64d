"""The billing simulator on GPT-5.6's explicit caching, against figures worked out by hand.

The rules (the SDK's ``PromptCacheOptions`` docs, facts/providers.md section 2): breakpoints are
``prompt_cache_breakpoint`` marks on content parts; a request writes at most its latest four; a read
matches at one of its latest 80 breakpoints and nowhere else (no lookback); entries live 30 minutes;
the minimum is 1,024 tokens; writes cost 1.25x input, reads 0.1x.

Prices are GPT-5.6's in USD per million tokens (genai-prices 0.2.3, the base tier): input 4, cache
read 0.40, cache write 5, output 20.

Block sizes are exact under the estimator, ceil(len(canonical JSON) / 4): a message whose text is
one part, ``{"content":[{"text":"<k chars>","type":"text"}],"role":"<role>"}``, is k + 49 + len(role)
characters, so k = 4n - 49 - len(role) gives n tokens. The helper checks that length with ``json``.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tiny_agent.providers.cache_sim import Prices, SimCall, Simulator

MODEL = "gpt-5.6"
PRICES = Prices(input=4.0, output=20.0, cache_read=0.40, cache_write_5m=5.0, cache_write_1h=5.0)
EXPLICIT = {"mode": "explicit", "ttl": "30m"}


def message(role: str, tokens: int, fill: str = "a", *, mark: bool = False) -> dict[str, Any]:
    part: dict[str, Any] = {"type": "text", "text": fill * (4 * tokens - 49 - len(role))}
    built = {"role": role, "content": [part]}
    assert len(json.dumps(built, sort_keys=True, separators=(",", ":"))) == 4 * tokens
    if mark:
        part["prompt_cache_breakpoint"] = {"mode": "explicit"}
    return built


def body(*messages: dict[str, Any], options: dict[str, str] | None = EXPLICIT, key: str = "k1") -> dict[str, Any]:
    out: dict[str, Any] = {"model": MODEL, "max_tokens": 1024, "messages": list(messages), "prompt_cache_key": key}
    if options is not None:
        out["prompt_cache_options"] = options
    return out


def sim() -> Simulator:
    return Simulator("openai", MODEL, pricer=PRICES)


def counts(call: SimCall) -> tuple[int, int, int, int]:
    return call.uncached, call.cache_read, call.cache_write, call.output_tokens


def turn_one() -> dict[str, Any]:
    return body(message("system", 2000, "s", mark=True), message("user", 1000, "u", mark=True))


def turn_two(*, mark_first_user: bool = True, key: str = "k1") -> dict[str, Any]:
    return body(
        message("system", 2000, "s", mark=True),
        message("user", 1000, "u", mark=mark_first_user),
        message("assistant", 500, "r"),
        message("user", 500, "v", mark=True),
        key=key,
    )


def test_a_turn_reads_the_previous_turns_newest_breakpoint_and_writes_the_rest() -> None:
    s = sim()
    first = s.send(0, turn_one(), output_tokens=100)
    # Both breakpoints (2,000 and 3,000 tokens) pass the 1,024 minimum: 3,000 written.
    # 3,000 x 5 + 100 x 20 = 15,000 + 2,000 = 17,000 per million = $0.017
    assert counts(first) == (0, 0, 3000, 100)
    assert first.usd == pytest.approx(0.017)
    second = s.send(60, turn_two(), output_tokens=50)
    # Marks at 2,000 (system), 3,000 (the first user message, turn one's newest) and 4,000: read 3,000.
    # 3,000 x 0.40 + 1,000 x 5 + 50 x 20 = 1,200 + 5,000 + 1,000 = 7,200 per million = $0.0072
    assert counts(second) == (0, 3000, 1000, 50)
    assert second.usd == pytest.approx(0.0072)
    assert (first.miss, second.miss) == (None, None)


def test_there_is_no_lookback_a_read_matches_only_at_a_breakpoint() -> None:
    s = sim()
    s.send(0, turn_one())
    second = s.send(60, turn_two(mark_first_user=False))
    # Turn one's entry at 3,000 tokens is alive, but no breakpoint of this request is there: only the
    # system message's entry (2,000) is read. (Anthropic would walk back 2 blocks and read 3,000.)
    # 2,000 x 0.40 + 2,000 x 5 = 800 + 10,000 = 10,800 per million = $0.0108
    assert counts(second) == (0, 2000, 2000, 0)
    assert second.usd == pytest.approx(0.0108)
    assert second.miss == "no-breakpoint-at-prefix"


def test_entries_live_thirty_minutes() -> None:
    paused = sim()
    paused.send(0, turn_one())
    assert paused.send(600, turn_two()).cache_read == 3000, "a 10-minute pause still reads (Anthropic's 5m would not)"
    edge = sim()
    edge.send(0, turn_one())
    assert edge.send(1800, turn_two()).cache_read == 3000, "alive up to and including 30 minutes"
    late = sim()
    late.send(0, turn_one())
    expired = late.send(1801, turn_two())
    # Everything expired: 4,000 written again. 4,000 x 5 = 20,000 per million = $0.02
    assert counts(expired) == (0, 0, 4000, 0)
    assert expired.usd == pytest.approx(0.02)
    assert expired.miss == "ttl"


def test_a_request_writes_only_its_latest_four_breakpoints() -> None:
    six = [message("system", 1100, "s", mark=True)]
    six += [message(("user", "assistant")[i % 2], 100, str(i), mark=True) for i in range(5)]
    s = sim()
    # Six marks at 1,100 ... 1,600 tokens: the latest four (1,300 to 1,600) are written, billed once: 1,600.
    assert counts(s.send(0, body(*six))) == (0, 0, 1600, 0)
    # Sharing the first two messages only (entries at 1,100 and 1,200 were never written): no read.
    two = body(six[0], six[1], message("assistant", 100, "x", mark=True), message("user", 100, "y", mark=True))
    assert counts(s.send(10, two)) == (0, 0, 1400, 0)
    # Sharing the first three (the entry at 1,300 was written): 1,300 read, the new 200 written.
    three = body(*six[:3], message("user", 100, "z", mark=True))
    assert counts(s.send(20, three)) == (0, 1300, 100, 0)


def test_a_read_considers_the_latest_eighty_breakpoints() -> None:
    head = [message("system", 1100, "s", mark=True), message("user", 100, "u", mark=True)]

    def padded(extra: int) -> dict[str, Any]:
        tail = [message(("assistant", "user")[i % 2], 20, f"{i % 10}", mark=True) for i in range(extra)]
        return body(*head, *tail)

    near = sim()
    near.send(0, body(*head))  # writes at 1,100 and 1,200
    # 79 more marks: 81 in all, the latest 80 still include the user message's (index 1): read 1,200.
    assert near.send(10, padded(79)).cache_read == 1200
    far = sim()
    far.send(0, body(*head))
    # 80 more: 82 in all, the latest 80 start after it: nothing read, though the entry is alive.
    assert far.send(10, padded(80)).cache_read == 0


def test_explicit_mode_without_breakpoints_caches_nothing_and_implicit_mode_caches_the_prompt() -> None:
    bare = (message("system", 2000, "s"), message("user", 1000, "u"))
    longer = (*bare, message("assistant", 500, "r"), message("user", 500, "v"))
    off = sim()
    off.send(0, body(*bare))
    assert counts(off.send(10, body(*longer))) == (4000, 0, 0, 0)
    assert off.calls[-1].miss == "no-breakpoint"
    implicit = sim()
    # No prompt_cache_options: OpenAI's own breakpoint (taken at the end) writes the whole prompt...
    assert counts(implicit.send(0, body(*bare, options=None))) == (0, 0, 3000, 0)
    # ...and the next request reads the longest live prefix before its own: 3,000 read, 1,000 written.
    assert counts(implicit.send(10, body(*longer, options=None))) == (0, 3000, 1000, 0)


def test_another_cache_key_is_another_cache() -> None:
    s = sim()
    s.send(0, turn_one())
    other = s.send(10, turn_two(key="k2"))
    assert counts(other) == (0, 0, 4000, 0)
    assert other.miss == "changed:settings"


def test_genai_prices_bill_gpt_5_6_writes_at_one_and_a_quarter_and_gpt_5_5_writes_free() -> None:
    first = Simulator("openai", MODEL).send(0, turn_one(), output_tokens=100)
    # 3,000 x $5 + 100 x $20 per million (genai-prices' GPT-5.6 write price is 1.25 x $4).
    assert first.usd == pytest.approx(0.017)
    older = turn_one()
    older.update(model="gpt-5.5")
    plain = Simulator("openai", "gpt-5.5").send(0, older, output_tokens=100)
    # Automatic caching before 5.6: nothing billed as a write; 3,000 x $5 + 100 x $30 per million.
    assert (plain.cache_write, plain.usd) == (0, pytest.approx(0.018))
