"""Model APIs: the shared contract, and one subpackage per wire.

- ``anthropic``: the Anthropic Messages wire (a package).
- ``base``: the ``Provider`` protocol: the seam between the context engine and a model API.
- ``cache_rules``: prompt-cache rules as data: minimums per model, lifetimes, multipliers, limits.
- ``cache_sim``: a billing simulator of prompt caching, written from the providers' published rules.
- ``decode``: the reading half of each adapter: bytes to plain JSON values, checked.
- ``http_errors``: the error half of each adapter: which class a failure is, and its one-line message.
- ``local``: the embedded local model: a llama.cpp server on loopback (a package).
- ``openai``: the OpenAI Chat Completions wire, for OpenAI, DeepSeek, Moonshot and llama.cpp (a package).
- ``prefix``: a request's prefix as a prompt cache sees it: blocks in order, canonical bytes, estimates.
- ``pricing``: prices and context windows from the bundled genai-prices snapshot (offline).
- ``profile``: ``ProviderProfile``: what a provider is and can do, declared, never probed.
- ``registry``: the provider profiles (anthropic, openai, deepseek, moonshot, local) and the choice of one.
- ``responses``: the OpenAI Responses API wire, stateless, reasoning items kept (a package).
- ``retry``: retries and time limits, in one place for every adapter.
- ``streaming``: a streamed answer, from its first event to the ``ModelResponse``.
- ``wire_check``: the rules a request must keep, on the neutral messages and on each wire's body.
"""
