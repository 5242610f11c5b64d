"""A misspelt command is said as one, with the name it was close to, rather than run as a task.

Click already offers "did you mean" for an unknown option and for a subcommand of a group; the
default group alone cannot, since any word it does not know is the start of a task.
"""

from __future__ import annotations

import difflib
import shlex

import click

__all__ = ["refuse_a_misspelt_command"]


def refuse_a_misspelt_command(group: click.Group, args: list[str]) -> None:
    """``tiny-agent sesions list`` would run the task "sesions list" (a model call): a first word
    close to a command's name, alone or followed by one of that command's own, is taken for a typo."""
    if not args or args[0] in group.commands or args[0].startswith("-"):
        return
    close = difflib.get_close_matches(args[0], [n for n in group.commands if n != "run"], n=1, cutoff=0.75)
    if not close:
        return
    sub = group.commands[close[0]]
    follows = len(args) > 1 and isinstance(sub, click.Group) and args[1] in sub.commands
    if len(args) == 1 or follows:
        task = shlex.join(args)
        raise click.UsageError(
            f"No such command {args[0]!r}. Did you mean {close[0]!r}? (to run it as a task: tiny-agent run {task})"
        )
