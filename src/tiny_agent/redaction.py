"""Secrets never shown: API keys are registered once and replaced in every message that is printed
or stored. (Placeholder until the providers' version lands.)"""

from __future__ import annotations

__all__ = ["redact", "register_secret"]

_SECRETS: set[str] = set()


def register_secret(value: str | None) -> None:
    if value and len(value) >= 8:
        _SECRETS.add(value)


def redact(text: str) -> str:
    for secret in sorted(_SECRETS, key=len, reverse=True):
        text = text.replace(secret, "[redacted]")
    return text
