"""``python -m tiny_agent`` runs the CLI."""

import sys

from tiny_agent.cli import main

sys.exit(main())
