"""``ADAPTER_OPTIONS`` (what ``provider_options`` may hold) is every keyword some adapter takes, read
from the adapters' own signatures; a keyword the wire's adapter does not take is one line."""

from __future__ import annotations

import importlib
import inspect

import pytest

from tiny_agent.errors import ConfigError
from tiny_agent.providers.adapters import ADAPTER_OPTIONS, keywords_of, wire_adapter
from tiny_agent.providers.local.provider import LocalProvider
from tiny_agent.providers.local.tuning import LocalTuning
from tiny_agent.providers.wire import WIRES


def test_the_declared_options_are_the_adapters_keywords() -> None:
    taken: set[str] = set()
    for wire in WIRES.values():
        module, _, name = wire.adapter.partition(":")
        keywords = keywords_of(getattr(importlib.import_module(module), name))
        assert keywords is not None, f"{name} takes keywords it does not name"
        taken |= keywords
    assert keywords_of(LocalProvider) is None, "the local provider's **tuning are LocalTuning's"
    local = {p.name for p in inspect.signature(LocalProvider).parameters.values() if p.kind is p.KEYWORD_ONLY}
    taken |= local | set(LocalTuning.__annotations__)
    assert taken - {"model", "model_path"} == ADAPTER_OPTIONS


@pytest.mark.parametrize("wire", list(WIRES))
def test_a_keyword_the_wires_adapter_does_not_take_is_one_line(wire: str) -> None:
    with pytest.raises(ConfigError, match=f"the {wire} adapter does not take 'ctx_size'; it takes: "):
        wire_adapter(wire, "m", ctx_size=4096)
