"""The package's public names: complete, each importable, and none of them loading an SDK early."""

from __future__ import annotations

import subprocess
import sys

import tiny_agent


def test_all_lists_every_public_name_once() -> None:
    assert sorted(tiny_agent.__all__) == sorted(tiny_agent._MODULE_OF)
    assert len(set(tiny_agent.__all__)) == len(tiny_agent.__all__)


def test_every_exported_name_resolves() -> None:
    for name in tiny_agent.__all__:
        value = getattr(tiny_agent, name)
        assert getattr(value, "__name__", name) == name


def test_importing_the_cli_loads_no_provider_sdk() -> None:
    code = "import sys, tiny_agent.cli; print(sorted(m for m in ('anthropic', 'openai') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_the_cli_start_up_loads_no_price_data_plot_or_tracing_library() -> None:
    heavy = ("genai_prices", "matplotlib", "opentelemetry")
    code = f"import sys, tiny_agent.cli.app; print(sorted(m for m in {heavy!r} if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
