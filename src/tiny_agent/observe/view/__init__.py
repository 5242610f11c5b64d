"""``tiny-agent view``: a session in the browser, served on 127.0.0.1 behind a random token.

- ``data``: what the page shows, as JSON-ready values: the calls' timeline, one call's request
  beside the previous one (shared prefix, first divergence, both diagnoses), the replay what-ifs.
- ``miss_line``: what a per-call miss line says of its place (its character, the simulator's break), read back.
- ``layers``: a request drawn as the blocks a prompt cache reads, and where two requests first part.
- ``server``: the web server (the standard library's, in a thread) and ``serve(store, id)``.
- ``whatifs``: the what-if table: the session replayed under a few other policies, nothing sent.
- ``static/``: the page itself: ``index.html``, ``view.css`` and ``view.js`` (no framework, no build).
"""

from tiny_agent.observe.view.server import ViewServer, serve

__all__ = ["ViewServer", "serve"]
