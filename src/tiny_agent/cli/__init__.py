"""The ``tiny-agent`` command line; ``main`` is the console entry point. It parses and prints only.

- ``app``: the ``tiny-agent`` group, ``run`` and the subcommands' registration; ``main``.
- ``chat``: ``tiny-agent chat``: talk to the agent turn by turn on a stored session (the slash commands).
- ``config``: ``tiny-agent config show``: the ``tiny-agent.toml`` files merged, each value with its source.
- ``config_file``: reading ``tiny-agent.toml`` (the user's, then the workspace's), key by key.
- ``config_name``: the file's name, apart so the options can name it.
- ``lint``: ``tiny-agent lint FILE.json``: the hazards of a request body, before anything is spent.
- ``local``: ``tiny-agent local start|stop|status``: one warm llama.cpp server that outlives runs.
- ``options``: the flags ``run`` and ``chat`` share.
- ``output``: writing a command's output to a file the user named (atomically) or to stdout.
- ``param_types``: the flags' value types (a fraction or a count, a number above zero...), which say what to fix.
- ``printer``: everything the CLI prints: streamed text on stdout, one line per event on stderr, totals.
- ``record``: ``tiny-agent record -- CMD``: another program's model calls stored as a session.
- ``replay``: ``tiny-agent replay ID``: what a stored session would have cost under another policy.
- ``run_keys``: the run settings a ``tiny-agent.toml`` may set, derived from the options, and their sources.
- ``runtime``: the flags of ``run`` and ``chat`` turned into one ``Run.open`` call.
- ``sessions``: ``tiny-agent sessions list|show|export|import|fork|rm``.
- ``stats``: ``tiny-agent stats``: what stored sessions cost, what the cache read, which layers moved.
- ``task_input``: the task of ``run``: its words, what is piped in, or both, in whatever encoding.
- ``view``: ``tiny-agent view [ID]``: a stored session in the browser, served on 127.0.0.1 until Ctrl-C.
- ``typos``: a misspelt command said as one ("did you mean"), not run as a task.
"""

from tiny_agent.cli.app import main

__all__ = ["main"]
