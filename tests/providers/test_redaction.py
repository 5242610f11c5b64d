"""Secrets never shown: registered values are hidden wherever they appear."""

from __future__ import annotations

import uuid

from tiny_agent.redaction import REDACTED, redact, redact_json, register_secret, registered_secrets


def secret(prefix: str = "sk-test-") -> str:
    return prefix + uuid.uuid4().hex  # unique per test: the list is process-wide


def test_a_registered_secret_is_hidden_wherever_it_appears() -> None:
    key = secret()
    register_secret(key)
    assert redact(f"invalid x-api-key: {key}.") == f"invalid x-api-key: {REDACTED}."
    assert redact(f"{key}{key}") == REDACTED * 2
    assert redact("nothing here") == "nothing here"
    assert key in registered_secrets()


def test_short_blank_and_missing_values_are_not_registered() -> None:
    before = registered_secrets()
    for value in (None, "", "   ", "local", "1234567"):
        register_secret(value)
    assert registered_secrets() == before
    assert redact("local 1234567") == "local 1234567"


def test_surrounding_blanks_are_not_part_of_the_secret() -> None:
    key = secret()
    register_secret(f"  {key}\n")
    assert redact(f"x {key} y") == f"x {REDACTED} y"


def test_a_secret_containing_another_is_hidden_whole() -> None:
    short = secret("sk-")
    long = short + "-suffix-that-makes-it-longer"
    register_secret(short)
    register_secret(long)
    assert redact(f"a {long} b {short}") == f"a {REDACTED} b {REDACTED}"


def test_nested_values_keys_included() -> None:
    key = secret()
    register_secret(key)
    value = {"error": {"message": f"bad key {key}", key: [1, f"{key}!", (key, 2.5, None)]}, "n": 3}
    assert redact_json(value) == {
        "error": {"message": f"bad key {REDACTED}", REDACTED: [1, f"{REDACTED}!", (REDACTED, 2.5, None)]},
        "n": 3,
    }
    assert key in value["error"]["message"]  # a copy: the original is untouched
