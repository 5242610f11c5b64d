"""The agent: the loop and a run's assembly.

- ``budget``: a spending limit: the next request priced from the counted context before each call.
- ``control``: how a run stops early (``BudgetSpent``, ``StepLimit``, ``Repeating``, ``CutTwice``), as exceptions.
- ``events``: what a run reports as it goes (one line each in the CLI) and how it ended (``RunResult``).
- ``keepalive``: the thread that pings the prompt cache while the run is idle (the user thinks, a tool runs).
- ``loop``: the agent loop (``Agent``): compact if needed, complete, run the tools, repeat until the model stops.
- ``run``: ``Run.open``: the session, its settings, the provider, the workspace and the agent in one call.
- ``settings``: ``RunSettings``: the settings of a run that a session remembers, each with its one default.
"""
