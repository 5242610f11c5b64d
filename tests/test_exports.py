"""The package's public names: complete, sorted, and each one importable."""

from __future__ import annotations

import types

import tiny_agent


def test_all_is_complete() -> None:
    """Every public name is in ``__all__`` (its order is ruff's RUF022 job)."""
    public = [
        name
        for name, value in vars(tiny_agent).items()
        if not name.startswith("_") and not isinstance(value, types.ModuleType)
    ]
    assert sorted(tiny_agent.__all__) == sorted(public)
    assert len(set(tiny_agent.__all__)) == len(tiny_agent.__all__)


def test_every_exported_name_exists() -> None:
    for name in tiny_agent.__all__:
        assert getattr(tiny_agent, name) is not None
