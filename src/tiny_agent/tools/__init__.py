"""Tool sources, each behind the one ``Tool`` interface: the workspace, Python functions, MCP, hooks.

- ``edit``: ``edit_file``: an exact string replaced once, shown as a diff, encoding and line endings kept.
- ``files``: file input and output under the tools: a streamed, bounded read and an atomic write.
- ``grammar``: decoding grammars that narrow each file tool's paths to the ones that can succeed.
- ``guard_lists``: the paths the guards refuse by default (hooks, VCS folders, secrets), each with its reason.
- ``guards``: what the file tools refuse inside the workspace: protected paths, secret-looking files.
- ``hooks``: commands run at a run's events, told what happens as JSON on stdin (as Claude Code's are).
- ``mcp``: MCP servers' tools, through the official ``mcp`` SDK (a package).
- ``path_pattern``: the regular expression of a new path ``write_file`` may create, as one trie.
- ``python_tools``: ``@tool``: typed Python functions whose signature and docstring are the definition.
- ``search``: ``search``: a regular expression over the files, or names by glob, .gitignore obeyed, bounded.
- ``shell``: ``shell``: one command in the workspace, off unless turned on, asked first, no secrets in its env.
- ``toolbox``: ``Tool``, ``Toolbox``, ``ToolFailure``: the tools a model may call, run without crashing the loop.
- ``toolset``: a run's tools in their fixed order, with the hooks around them.
- ``workspace``: the file tools (``read_file``, ``write_file``, ``list_dir``), confined to one folder.
- ``workspace_tools``: the file tools as the model sees them: names, descriptions, input schemas.
"""
