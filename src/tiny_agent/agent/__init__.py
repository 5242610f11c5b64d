"""The agent: the loop and a run's assembly.

- ``budget``: a spending limit: the next request priced from the counted context before each call.
- ``control``: how a run stops early (``BudgetSpent``, ``StepLimit``, ``Repeating``, ``CutTwice``), as exceptions.
- ``events``: what a run reports as it goes (one line each in the CLI) and how it ended (``RunResult``).
- ``keepalive``: the thread that pings the prompt cache while the run is idle (the user thinks, a tool runs).
- ``resume``: the session a run goes on with (``--resume``, ``--continue``) and what the user should know of it.
- ``origin``: where a refused setting was set (``(set by the session: --thinking off)``, a config file's key).
- ``loop``: the agent loop (``Agent``): compact if needed, complete, run the tools, repeat until the model stops.
- ``parts``: the parts of a run made from its settings: the provider, the workspace, the system prompt.
- ``run``: ``Run.open``: a ``RunSpec`` built into a run, step by step (session, settings, tools, context, telemetry).
- ``settings``: ``RunSettings``: the settings of a run that a session remembers, each with its one default.
- ``spec``: ``RunSpec``: everything a run is opened from, as one typed value (CLI, config file, library).
- ``thinking_text``: A reply's reasoning folded onto one line, for people.
"""
