"""The ``tiny-agent`` command line; ``main`` is the console entry point."""

from tiny_agent.cli.app import main

__all__ = ["main"]
