"""One ``Endpoint`` for both adapters: given as a value or as its fields, with the same result."""

from __future__ import annotations

import ast
import inspect
import textwrap

import pytest

from tiny_agent.errors import ConfigError
from tiny_agent.providers.anthropic.adapter import AnthropicProvider
from tiny_agent.providers.endpoint import ENDPOINT_FIELDS, Endpoint, EndpointFields
from tiny_agent.providers.openai.adapter import OpenAICompatProvider

ADAPTERS = (AnthropicProvider, OpenAICompatProvider)


@pytest.mark.parametrize("adapter", ADAPTERS)
def test_an_endpoint_value_and_its_fields_as_keywords_are_the_same(adapter: type) -> None:
    endpoint = Endpoint(api_key="k", base_url="http://127.0.0.1:9", name="mine", key_env="MY_KEY", timeout=5)
    by_value = adapter(model="m", endpoint=endpoint, max_retries=1)
    by_fields = adapter(model="m", api_key="k", base_url="http://127.0.0.1:9", name="mine", key_env="MY_KEY",
                        timeout=5, max_retries=1)  # fmt: skip
    assert (
        by_value.endpoint
        == by_fields.endpoint
        == Endpoint(api_key="k", base_url="http://127.0.0.1:9", name="mine", key_env="MY_KEY", timeout=5, max_retries=1)
    ), "a keyword beside an endpoint replaces its field"
    for provider in (by_value, by_fields):
        assert provider.name == "mine" and provider.profile.name == "mine" and provider.key_env == "MY_KEY"
        assert provider._policy.max_retries == 1 and provider._timeout == 5
        assert provider.url.startswith("http://127.0.0.1:9")


@pytest.mark.parametrize(("adapter", "name"), [(AnthropicProvider, "anthropic"), (OpenAICompatProvider, "openai")])
def test_without_a_name_the_adapter_is_named_after_its_wire(adapter: type, name: str) -> None:
    assert adapter(model="m", api_key="k").name == name


@pytest.mark.parametrize("adapter", ADAPTERS)
def test_a_bad_endpoint_is_one_line(adapter: type) -> None:
    with pytest.raises(TypeError, match="'api_keys' is not an Endpoint field"):
        adapter(model="m", api_keys="k")
    with pytest.raises(ConfigError, match="timeout"):
        adapter(model="m", api_key="k", timeout=0)
    with pytest.raises(ConfigError, match="not an http"):
        adapter(model="m", api_key="k", base_url="ftp://x")


def test_the_keywords_type_lists_every_field() -> None:
    assert set(EndpointFields.__annotations__) == set(ENDPOINT_FIELDS)


@pytest.mark.parametrize("adapter", ADAPTERS)
def test_neither_constructor_repeats_the_endpoint(adapter: type) -> None:
    tree = ast.parse(textwrap.dedent(inspect.getsource(adapter.__init__)))
    function = tree.body[0]
    assert isinstance(function, ast.FunctionDef)
    named = {a.arg for a in (*function.args.args, *function.args.kwonlyargs)} - {"self"}
    assert len(named) + 1 <= 8, named
    assert not named & set(ENDPOINT_FIELDS), "the endpoint's fields come in through Endpoint"
