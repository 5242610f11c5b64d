"""The fault server, started once for the fault-injection suite."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.faults.server import FaultServer


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "needs_lead(what): passes once the lead's CLI/loop change named in `what` is merged; fails until then",
    )


@pytest.fixture(scope="session")
def server() -> Iterator[FaultServer]:
    running = FaultServer()
    yield running
    running.close()
