"""The fault server, started once for the fault-injection suite."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.faults.server import FaultServer


@pytest.fixture(scope="session")
def server() -> Iterator[FaultServer]:
    running = FaultServer()
    yield running
    running.close()
