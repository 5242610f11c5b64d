"""The billing simulator against figures worked out by hand from the published rules.

Prices are Sonnet 4.6's list prices in USD per million tokens: input 3, output 15, cache read 0.30,
5-minute write 3.75, 1-hour write 6. Its minimum cacheable prefix is 1,024 tokens.

Block sizes are exact under the documented estimator, ceil(len(canonical JSON) / 4):
- a text block ``{"text":"<k chars>","type":"text"}`` is k + 25 characters, so k = 4n - 25 gives n tokens;
- a tool ``{"description":"<k chars>","input_schema":{},"name":"tN"}`` is k + 48 characters: k = 4n - 48;
- an OpenAI message ``{"content":"<k chars>","role":"<role>"}`` is k + 24 + len(role) characters.
The helpers below check those lengths with ``json`` itself, not with the code under test.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tiny_agent.providers.cache_sim import (
    GenaiPricer,
    Prices,
    SimCall,
    SimulationError,
    Simulator,
    simulate,
)
from tiny_agent.providers.prefix import block_tokens

SONNET = "claude-sonnet-4-6"
PRICES = Prices(input=3.0, output=15.0, cache_read=0.30, cache_write_5m=3.75, cache_write_1h=6.0)
FIVE_MIN = {"type": "ephemeral"}
ONE_HOUR = {"type": "ephemeral", "ttl": "1h"}


def _compact(data: Any) -> str:
    return json.dumps(data, sort_keys=True, separators=(",", ":"))


def text(tokens: int, fill: str = "a", mark: dict[str, str] | None = None) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "text", "text": fill * (4 * tokens - 25)}
    assert len(_compact(block)) == 4 * tokens
    if mark:
        block["cache_control"] = dict(mark)
    return block


def tool(name: str, tokens: int, mark: bool = False) -> dict[str, Any]:
    spec: dict[str, Any] = {"name": name, "description": "d" * (4 * tokens - 48), "input_schema": {}}
    assert len(_compact(spec)) == 4 * tokens
    if mark:
        spec["cache_control"] = dict(FIVE_MIN)
    return spec


def user(*blocks: dict[str, Any]) -> dict[str, Any]:
    return {"role": "user", "content": list(blocks)}


def assistant(*blocks: dict[str, Any]) -> dict[str, Any]:
    return {"role": "assistant", "content": list(blocks)}


def body(system: list[dict[str, Any]], *messages: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"model": SONNET, "max_tokens": 1024, "system": system, "messages": list(messages), **extra}


def sim(**kwargs: Any) -> Simulator:
    return Simulator("anthropic", SONNET, pricer=PRICES, **kwargs)


def counts(call: SimCall) -> tuple[int, int, int, int, int]:
    return call.uncached, call.cache_read, call.cache_write_5m, call.cache_write_1h, call.output_tokens


def test_the_estimator_counts_canonical_json_without_the_marker() -> None:
    # {"text":"abcd","type":"text"} is 29 characters: ceil(29 / 4) = 8 tokens, marker or not.
    assert block_tokens({"type": "text", "text": "abcd"}) == 8
    assert block_tokens({"type": "text", "text": "abcd", "cache_control": FIVE_MIN}) == 8


def turn_one() -> dict[str, Any]:
    return body([text(2000, "s", FIVE_MIN)], user(text(1000, "u", FIVE_MIN)))


def turn_two() -> dict[str, Any]:
    return body(
        [text(2000, "s", FIVE_MIN)], user(text(1000, "u")), assistant(text(500, "r")), user(text(500, "v", FIVE_MIN))
    )


def test_a_hit_reads_the_previous_turn_and_writes_only_what_is_new() -> None:
    s = sim()
    first = s.send(0, turn_one(), output_tokens=100)
    # Nothing cached yet; both breakpoints (2,000 and 3,000 tokens) pass the 1,024 minimum: write 3,000.
    # 3,000 x 3.75 + 100 x 15 = 11,250 + 1,500 = 12,750 per million = $0.01275
    assert counts(first) == (0, 0, 3000, 0, 100)
    assert first.usd == pytest.approx(0.01275)
    second = s.send(60, turn_two(), output_tokens=50)
    # Blocks: system (cum 2,000, marked), u (3,000), r (3,500), v (4,000, marked). Walking back from v
    # finds turn one's entry at u: read 3,000; write 4,000 - 3,000 = 1,000.
    # 3,000 x 0.30 + 1,000 x 3.75 + 50 x 15 = 900 + 3,750 + 750 = 5,400 per million = $0.0054
    assert counts(second) == (0, 3000, 1000, 0, 50)
    assert second.usd == pytest.approx(0.0054)
    assert (first.miss, second.miss) == (None, None)


def test_the_cache_expires_after_five_minutes() -> None:
    s = sim()
    s.send(0, turn_one())
    late = s.send(301, turn_two(), output_tokens=50)
    # Turn one's entries expired at 300 s: nothing read, the whole 4,000 written again.
    # 4,000 x 3.75 + 50 x 15 = 15,000 + 750 = 15,750 per million = $0.01575
    assert counts(late) == (0, 0, 4000, 0, 50)
    assert late.usd == pytest.approx(0.01575)
    assert late.miss == "ttl"
    on_time = sim()
    on_time.send(0, turn_one())
    assert on_time.send(300, turn_two()).cache_read == 3000, "alive up to and including 300 s"


def test_each_hit_refreshes_the_ttl() -> None:
    s = sim()
    s.send(0, turn_one())
    assert s.send(200, turn_one()).cache_read == 3000  # refreshed: now alive until 500 s
    # 450 s is past the first write's 300 s but within the refreshed 500 s.
    assert counts(s.send(450, turn_one())) == (0, 3000, 0, 0, 0)


def test_a_prefix_below_the_minimum_is_neither_written_nor_read() -> None:
    small = body([text(600, "s", FIVE_MIN)], user(text(300, "u", FIVE_MIN)))
    s = sim()
    # Breakpoints at 600 and 900 tokens, both under 1,024: all 900 billed at 3: 2,700 per million.
    for at in (0, 10):
        call = s.send(at, small)
        assert counts(call) == (900, 0, 0, 0, 0)
        assert call.usd == pytest.approx(0.0027)
    assert [c.miss for c in s.calls] == [None, "below-minimum"]


def test_a_minimum_override_changes_what_is_cached() -> None:
    small = body([text(600, "s", FIVE_MIN)], user(text(300, "u", FIVE_MIN)))
    s = sim(min_tokens={SONNET: 512})
    assert counts(s.send(0, small)) == (0, 0, 900, 0, 0)
    assert counts(s.send(10, small)) == (0, 900, 0, 0, 0)
    stricter = sim(min_tokens={SONNET: 2048})
    s2 = body([text(1500, "s", FIVE_MIN)], user(text(100, "u", FIVE_MIN)))
    # 1,500 and 1,600 are above the documented 1,024 but below a reported 2,048: nothing cached.
    assert counts(stricter.send(0, s2)) == (1600, 0, 0, 0, 0)


def lookback_body(new_blocks: int) -> dict[str, Any]:
    """System (2,000, marked), the old user block (100), then ``new_blocks`` blocks of 50, the last marked."""
    fresh = [text(50, chr(ord("A") + i % 26)) for i in range(new_blocks)]
    fresh[-1]["cache_control"] = dict(FIVE_MIN)
    return body([text(2000, "s", FIVE_MIN)], user(text(100, "u")), assistant(text(50, "z")), user(*fresh[1:]))


def lookback_first() -> dict[str, Any]:
    return body([text(2000, "s", FIVE_MIN)], user(text(100, "u", FIVE_MIN)))


def test_a_breakpoint_more_than_20_blocks_after_the_entry_misses_it() -> None:
    s = sim()
    s.send(0, lookback_first())  # entries at block 0 (2,000) and block 1 (2,100)
    far = s.send(10, lookback_body(20))
    # Blocks 0 system, 1 u, 2 z, 3..21 nineteen user blocks: the new breakpoint is block 21. Counting
    # it as the first, 20 blocks back reaches block 2: the entry at block 1 is out of reach. The
    # system breakpoint still reads its own entry: read 2,000; write 100 + 20 x 50 = 1,100.
    # 2,000 x 0.30 + 1,100 x 3.75 = 600 + 4,125 = 4,725 per million = $0.004725
    assert counts(far) == (0, 2000, 1100, 0, 0)
    assert far.usd == pytest.approx(0.004725)
    assert far.miss == "lookback"


def test_a_breakpoint_20_blocks_from_the_entry_still_reads_it() -> None:
    s = sim()
    s.send(0, lookback_first())
    near = s.send(10, lookback_body(19))
    # The breakpoint is block 20: blocks 20 down to 1 are 20 blocks, so block 1's entry is found.
    # read 2,100; write 19 x 50 = 950. 2,100 x 0.30 + 950 x 3.75 = 630 + 3,562.5 = $0.0041925
    assert counts(near) == (0, 2100, 950, 0, 0)
    assert near.usd == pytest.approx(0.0041925)
    assert near.miss is None


def test_a_one_hour_breakpoint_is_written_at_twice_the_price_and_outlives_five_minutes() -> None:
    hour = body([text(2000, "s", ONE_HOUR)], user(text(1000, "u", FIVE_MIN)))
    s = sim()
    first = s.send(0, hour)
    # Up to the last 1h breakpoint (2,000) at 6, the rest up to the last breakpoint (1,000) at 3.75:
    # 12,000 + 3,750 = 15,750 per million = $0.01575
    assert counts(first) == (0, 0, 1000, 2000, 0)
    assert first.usd == pytest.approx(0.01575)
    later = s.send(1000, hour)
    # At 1,000 s the 5-minute entry is gone, the 1-hour one alive: read 2,000, write 1,000 at 3.75.
    # 600 + 3,750 = 4,350 per million = $0.00435
    assert counts(later) == (0, 2000, 1000, 0, 0)
    assert later.usd == pytest.approx(0.00435)


def test_a_changed_system_prompt_reads_nothing() -> None:
    s = sim()
    s.send(0, turn_one())
    changed = s.send(30, body([text(2000, "t", FIVE_MIN)], user(text(1000, "u", FIVE_MIN))))
    # The first block differs, so every prefix hash differs: write all 3,000 again at 3.75 = $0.01125.
    assert counts(changed) == (0, 0, 3000, 0, 0)
    assert changed.usd == pytest.approx(0.01125)
    assert changed.miss == "changed:system[0]"


def tools_body(*tools: dict[str, Any]) -> dict[str, Any]:
    return body([text(1000, "s", FIVE_MIN)], user(text(500, "u", FIVE_MIN)), tools=list(tools))


def test_reordered_tools_read_nothing() -> None:
    s = sim()
    first = s.send(0, tools_body(tool("t0", 600), tool("t1", 600, mark=True)))
    # Breakpoints at 1,200 (tools), 2,200 (system), 2,700 (user): write 2,700 x 3.75 = $0.010125.
    assert counts(first) == (0, 0, 2700, 0, 0)
    assert first.usd == pytest.approx(0.010125)
    swapped = s.send(10, tools_body(tool("t1", 600), tool("t0", 600, mark=True)))
    # Same tools, other order: the very first block differs, so nothing is read.
    assert counts(swapped) == (0, 0, 2700, 0, 0)
    assert swapped.miss == "changed:tools[0]"
    same = s.send(20, tools_body(tool("t0", 600), tool("t1", 600, mark=True)))
    # The original order is still cached: read 2,700 x 0.30 = $0.00081.
    assert counts(same) == (0, 2700, 0, 0, 0)
    assert same.usd == pytest.approx(0.00081)


def test_changing_tool_choice_invalidates_the_messages_only() -> None:
    s = sim()
    s.send(0, turn_one())
    summary = s.send(10, {**turn_one(), "tool_choice": {"type": "none"}})
    # The system entry (2,000) survives; the messages after it are written again: 1,000 at 3.75.
    # 600 + 3,750 = $0.00435
    assert counts(summary) == (0, 2000, 1000, 0, 0)
    assert summary.usd == pytest.approx(0.00435)
    assert summary.miss == "changed:settings"


def test_automatic_caching_marks_the_last_block() -> None:
    s = sim()
    plain = body([text(2000, "s")], user(text(1000, "u")), cache_control=FIVE_MIN)
    assert counts(s.send(0, plain)) == (0, 0, 3000, 0, 0)
    assert counts(s.send(5, plain)) == (0, 3000, 0, 0, 0)


def test_no_marker_caches_nothing() -> None:
    s = sim()
    plain = body([text(2000, "s")], user(text(1000, "u")))
    assert counts(s.send(0, plain)) == (3000, 0, 0, 0, 0)
    assert counts(s.send(5, plain)) == (3000, 0, 0, 0, 0)
    assert s.calls[-1].miss == "no-breakpoint"


def test_requests_the_api_would_reject_raise() -> None:
    five = body([text(10, "a", FIVE_MIN), text(10, "b", FIVE_MIN)], user(*(text(10, c, FIVE_MIN) for c in "cde")))
    with pytest.raises(SimulationError, match="5 cache breakpoints"):
        sim().send(0, five)
    disorder = body([text(2000, "s", FIVE_MIN)], user(text(1000, "u", ONE_HOUR)))
    with pytest.raises(SimulationError, match="longer TTLs must come first"):
        sim().send(0, disorder)


def test_genai_prices_agree_with_the_list_prices() -> None:
    call = SimCall(0, 10_000, 3000, 2000, 1000, 500, 0.0)
    # uncached 4,000 x 3 + 3,000 x 0.30 + 2,000 x 3.75 + 1,000 x 6 + 500 x 15
    # = 12,000 + 900 + 7,500 + 6,000 + 7,500 = 33,900 per million = $0.0339
    assert PRICES(call) == pytest.approx(0.0339)
    assert GenaiPricer(SONNET, "anthropic")(call) == pytest.approx(0.0339)


# -- OpenAI-style automatic prefix caching ----------------------------------------------------------

GPT4O = Prices(input=2.5, output=10.0, cache_read=1.25, cache_write_5m=2.5, cache_write_1h=2.5)


def message(role: str, tokens: int, fill: str = "m") -> dict[str, Any]:
    msg = {"role": role, "content": fill * (4 * tokens - 24 - len(role))}
    assert len(_compact(msg)) == 4 * tokens
    return msg


def chat(*messages: dict[str, Any]) -> dict[str, Any]:
    return {"model": "gpt-4o", "messages": list(messages)}


def test_openai_reads_the_shared_prefix_in_steps_of_128() -> None:
    first = chat(message("system", 1000, "s"), message("user", 300, "u"))
    second = chat(
        message("system", 1000, "s"), message("user", 300, "u"), message("assistant", 200), message("user", 100)
    )
    calls = simulate([(0, first), (10, second, 40)], wire="openai", model="gpt-4o", pricer=GPT4O)
    # First: 1,300 tokens, nothing seen before: 1,300 x 2.5 = 3,250 per million, and no write charge.
    assert counts(calls[0]) == (1300, 0, 0, 0, 0)
    assert calls[0].usd == pytest.approx(0.00325)
    # Second shares 1,300 tokens: floor(1,300 / 128) x 128 = 1,280 read, 1,600 - 1,280 = 320 uncached.
    # 320 x 2.5 + 1,280 x 1.25 + 40 x 10 = 800 + 1,600 + 400 = 2,800 per million = $0.0028
    assert counts(calls[1]) == (320, 1280, 0, 0, 40)
    assert calls[1].usd == pytest.approx(0.0028)
    assert calls[1].miss is None, "everything the first request cached (1,280 in steps of 128) was read"


def test_openai_caches_nothing_below_1024_tokens() -> None:
    short = chat(message("system", 500, "s"), message("user", 300, "u"))
    calls = simulate([(0, short), (10, short)], wire="openai", model="gpt-4o", pricer=GPT4O)
    assert [c.cache_read for c in calls] == [0, 0], "an 800-token prompt is never cached"
    # Both prompts are over the minimum, but they share only the 1,000-token system message.
    a = chat(message("system", 1000, "s"), message("user", 300, "u"))
    b = chat(message("system", 1000, "s"), message("user", 300, "w"))
    assert simulate([(0, a), (10, b)], wire="openai", model="gpt-4o", pricer=GPT4O)[1].cache_read == 0


def test_openai_cache_expires_when_idle() -> None:
    a = chat(message("system", 2000, "s"), message("user", 300, "u"))
    calls = simulate([(0, a), (301, a)], wire="openai", model="gpt-4o", pricer=GPT4O)
    assert calls[1].cache_read == 0
    assert calls[1].miss == "ttl"


def test_a_rewritten_window_is_named_at_its_first_changed_block() -> None:
    s = sim()
    s.send(0, turn_two())
    compacted = s.send(10, body([text(2000, "s", FIVE_MIN)], user(text(300, "q", FIVE_MIN))))
    # The system entry (2,000) is read; the summary (300) is new, so 2,300 reaches the minimum and is written.
    assert counts(compacted) == (0, 2000, 300, 0, 0)
    assert compacted.miss == "changed:messages[0].content[0]"
