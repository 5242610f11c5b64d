"""Records the session behind docs/stats-session.png against the billing fake, then plots it.

One long session on the Anthropic wire (claude-sonnet-4-6 prices, billed by the cache simulator):
a tour of 12 files that compacts as it goes, then a stretch where the system prompt carries the time
(moved on a second before every call, the seed's crash), then the time taken out again, a pin
added, and a last tour. Nothing leaves the machine.

    PYTHONPATH=src .venv/bin/python docs/stats_demo.py [STORE]     # prints the stats, writes the PNG
"""

from __future__ import annotations

import datetime
import sys
import tempfile
from pathlib import Path

from tiny_agent.agent.loop import DEFAULT_SYSTEM, Agent, AgentConfig, Event, TurnEvent
from tiny_agent.context.engine import ContextConfig
from tiny_agent.context.session import Session
from tiny_agent.observe import stats
from tiny_agent.observe.plot import plot_session
from tiny_agent.observe.report import format_stats
from tiny_agent.providers.registry import resolve_provider
from tiny_agent.store.sqlite import SQLiteStore
from tiny_agent.testing import BillingFake, Task
from tiny_agent.tools.toolbox import Toolbox
from tiny_agent.tools.workspace import Workspace

PNG = Path(__file__).parent / "stats-session.png"


def tour(root: Path, name: str, files: int) -> Task:
    for i in range(files):
        (root / f"{name}{i}.txt").write_text(f"line {i} of the {name} notes, with words to read " * 200)
    return Task(f"tour the {name} files", [[("read_file", {"path": f"{name}{i}.txt"})] for i in range(files)])


def main() -> int:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        store_path = Path(sys.argv[1]) if len(sys.argv) > 1 else root / "sessions.db"
        tasks = [tour(root, "alpha", 12), tour(root, "beta", 6), tour(root, "gamma", 8)]
        with BillingFake(tasks) as fake, SQLiteStore(store_path) as store:
            env = {"ANTHROPIC_API_KEY": "sk-demo-billing-fake"}
            provider = resolve_provider(
                "anthropic", model="claude-sonnet-4-6", base_url=fake.url("demo", "anthropic"), env=env
            )
            toolbox = Toolbox(Workspace(root).tools())
            session = Session.start(
                store,
                workspace=str(root),
                tools=toolbox.specs,
                system=DEFAULT_SYSTEM,
                config=ContextConfig(compact_at=9000, keep_turns=2),
                settings={"provider": "anthropic", "model": "claude-sonnet-4-6"},
            )
            ctx = session.context
            clock = [datetime.datetime(2026, 12, 1, 10, 0, 0, tzinfo=datetime.UTC)]
            stamping = [False]

            def stamp(event: Event) -> None:
                if stamping[0] and isinstance(event, TurnEvent):
                    clock[0] += datetime.timedelta(seconds=7)
                    ctx.system = f"{DEFAULT_SYSTEM}\nCurrent time: {clock[0]:%Y-%m-%dT%H:%M:%SZ}."

            agent = Agent(provider, toolbox, context=ctx, config=AgentConfig(), on_event=stamp)
            agent.run("Please tour the alpha files")
            stamping[0] = True
            ctx.system = f"{DEFAULT_SYSTEM}\nCurrent time: {clock[0]:%Y-%m-%dT%H:%M:%SZ}."
            agent.run("now tour the beta files")
            stamping[0] = False
            ctx.system = DEFAULT_SYSTEM
            ctx.pin("Answer in one line.")
            agent.run("and tour the gamma files")
            session.close()
            result = stats(store, [session.id])
            for line in format_stats(result):
                print(line)
            plot_session(store, session.id, PNG)
            print(f"wrote {PNG}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
