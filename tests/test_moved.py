"""The old import paths of 0.1 still import, as the new modules themselves, with a warning naming the new path."""

from __future__ import annotations

import importlib
import sys

import pytest

from tiny_agent._moved import MOVED


@pytest.mark.parametrize("old", sorted(MOVED))
def test_an_old_path_gives_the_new_module(old: str) -> None:
    sys.modules.pop(old, None)
    with pytest.warns(DeprecationWarning, match=MOVED[old]):
        module = importlib.import_module(old)
    assert module is importlib.import_module(MOVED[old])


def test_an_old_module_that_is_now_a_package_keeps_its_names() -> None:
    from tiny_agent.context.shrink import compact, maybe_compact
    from tiny_agent.providers.anthropic import AnthropicProvider
    from tiny_agent.providers.local import LocalProvider

    assert callable(compact) and callable(maybe_compact) and AnthropicProvider and LocalProvider
