"""Puts the crash test's kill points into a real ``tiny-agent`` process started with this folder on
``PYTHONPATH`` (and ``$TINY_AGENT_CRASH`` set); does nothing otherwise."""

import killpoints

killpoints.install()
