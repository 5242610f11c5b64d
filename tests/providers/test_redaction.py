"""Secrets never shown: registered values are hidden wherever they appear."""

from __future__ import annotations

import uuid

import pytest

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


def test_credentials_that_were_never_registered_are_hidden_by_their_shape() -> None:
    """What a server echoes back, a URL with a password, a key in a query: hidden though no one
    registered them (a key shorter than a registered one can be, a proxy's Basic credentials)."""
    basic = "YWxpY2U6cHctMTIzNA=="  # alice:pw-1234
    cases = {
        f"you sent Authorization: Basic {basic}": "you sent Authorization: Basic [REDACTED]",
        "you sent Authorization: Bearer k-7chr": "you sent Authorization: Bearer [REDACTED]",
        '{"authorization": "Bearer sk-proj-abcdefghijklmnopqrstuv"}': '{"authorization": "Bearer [REDACTED]"}',
        "POST http://alice:pw-1234@127.0.0.1:8080/v1/chat": "POST http://alice:[REDACTED]@127.0.0.1:8080/v1/chat",
        "GET https://h/v1?api_key=abc123&x=1": "GET https://h/v1?api_key=[REDACTED]&x=1",
        "GET https://h/v1?api-version=2024&key=AIzaSy0": "GET https://h/v1?api-version=2024&key=[REDACTED]",
        "https://h/p?access_token=t0k&token=t1": "https://h/p?access_token=[REDACTED]&token=[REDACTED]",
    }
    for text, hidden in cases.items():
        assert redact(text) == hidden
    for prose in (
        "Basic usage: run it twice.",
        "Bearer tokens are sent in a header.",
        "basic auth is a header",
        "see https://example.com/docs?page=2",
        "mailto:alice@example.com and http://example.com:8080/path",
    ):
        assert redact(prose) == prose, prose


def test_the_log_handler_hides_credentials_in_urls(capsys: pytest.CaptureFixture[str]) -> None:
    import logging

    from tiny_agent.cli.printer import Printer

    printer = Printer(verbose=True)
    try:
        logging.getLogger("httpx2").info("HTTP Request: POST http://alice:pw-1234@h/v1?api_key=q-s3cret 200")
    finally:
        printer.close()
    err = capsys.readouterr().err
    assert "HTTP Request" in err and "pw-1234" not in err and "q-s3cret" not in err
