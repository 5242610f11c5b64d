"""Fakes for tests and examples: a scripted provider in this process, and a billing fake on loopback.

``ScriptedProvider`` answers from a list without any network. ``BillingFake`` is a model API on
127.0.0.1 that both adapters reach through their real SDKs: it plays a scripted task (``ScriptedTask``)
and bills every request the way the provider's cache does (``providers.cache_sim``), so what a
session records can be checked against what a faithful server billed.

- ``anthropic_compaction``: ``ServerCompaction``: Anthropic's server-side compaction on the billing fake.
- ``billing``: ``BillingFake``: a model API on 127.0.0.1 that bills like the provider, through the real SDKs.
- ``claude_models``: which thinking each Claude model takes, as the thinking server enforces it.
- ``contents``: file contents unlike repeated English lines: JSON, code, prose and other scripts.
- ``estimates``: the after-compaction size runs shared by a test, an integration test and a benchmark.
- ``responses_replies``: the Responses test server's answers: usage, its cache diagnosis, stream events.
- ``responses_server``: ``ResponsesServer``: a Responses API on 127.0.0.1 that validates bodies and bills.
- ``scripted``: ``ScriptedProvider``: replies come from a list, requests are kept.
- ``tasks``: ``ScriptedTask``: a scripted model that reads the request as a model would, on either wire.
- ``thinking_server``: the thinking rules of the model APIs, enforced by the billing fake...
- ``thinking_wires``: the thinking server's rules on each wire.
- ``wire_replies``: what the billing fake answers on each wire.
- ``loopback``: an HTTP server on 127.0.0.1 for the fakes.
"""

from tiny_agent.testing.billing import Bill, BillingFake
from tiny_agent.testing.scripted import ScriptedProvider, tool_call
from tiny_agent.testing.tasks import ScriptedTask, Task

__all__ = ["Bill", "BillingFake", "ScriptedProvider", "ScriptedTask", "Task", "tool_call"]
