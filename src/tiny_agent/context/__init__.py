"""The context engine: one append-only log, the window rendered from it, exact token accounting.

- ``byte_cause``: a miss's cause in the request bytes, from the simulator ``lint`` and the view run too.
- ``cache``: prompt-cache placement: which anchors get a breakpoint.
- ``calling``: one model call on the record: render once, check, send, record.
- ``config``: ``ContextConfig``, the engine's settings, and the words it writes into a conversation itself.
- ``conversation``: what a conversation holds and every way to add to it (messages, tool results, pins, notes).
- ``diagnosis``: why the cache missed: the per-call cause, checked in prefix order.
- ``engine``: ``Context``: render, call, size and shrink over the log.
- ``entries``: the log's entries as typed values, one frozen dataclass per kind.
- ``entry_codec``: typed entries to and from their stored JSON.
- ``keepalive``: whether a ping that keeps the cache warm pays, when, and how long to go on.
- ``legality``: the deterministic repair of a request that breaks the protocol's rules.
- ``miss_text``: the words of a miss line: where two texts differ, a quoted excerpt, what changed in a tool list.
- ``log``: the append-only log of entries (in memory, or stored through a store).
- ``render``: one render per model call: the body, its check, its size and its fingerprint in one pass.
- ``replayed``: a recorded turn request rendered again from the log, as it was sent.
- ``session``: a ``Context`` whose entries live in a store, so it outlives the process.
- ``size_guard``: no request that cannot fit in the window with its reply is ever sent.
- ``shrink``: making the window smaller: compaction, clearing and the policies that decide when (a package).
- ``state``: what the entries add up to: a pure fold, so a session is rebuilt exactly.
- ``tokens``: token accounting: the context's size now and what every call so far has cost.
- ``window``: the part of the log the model sees, kept up to date as entries arrive.
"""
