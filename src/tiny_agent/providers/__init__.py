"""Model APIs: the shared contract, and one subpackage per wire.

A wire is a value (``wire.WireFormat``) that lives in its folder (``<name>/wire.py``) and is named
in one registry (``wire.WIRES``): adding a wire is a folder and one line there.

- ``adapters``: an adapter for a wire, built from the wire's description (its SDK loaded only then).
- ``anthropic``: the Anthropic Messages wire (a package).
- ``base``: the ``Provider`` protocol: the seam between the context engine and a model API.
- ``break_settings``: each wire's table of the settings that break the cache, and what a change costs.
- ``cache_breaks``: why a request would not read what the one before it cached: each cause, its rule and place.
- ``first_change``: where two texts, or two blocks of a request, first differ.
- ``cache_expiry``: the miss in the clock, not the bytes: the previous request's entries outlived.
- ``cache_bill``: what a simulated request was billed (``SimCall``) and the prices that make it dollars.
- ``cache_rules``: prompt-cache rules as data: minimums per model, lifetimes, multipliers, limits.
- ``cache_sim``: a billing simulator of prompt caching, written from the providers' published rules.
- ``check``: the neutral rules every request keeps, and the shape of a wire's incremental check.
- ``decode``: the reading half of each adapter: bytes to plain JSON values, checked.
- ``endpoint``: ``Endpoint``: where an adapter sends its calls and how it retries them, for every wire.
- ``http_errors``: the error half of each adapter: which class a failure is, and its one-line message.
- ``lines``: text split into lines where its format does: event streams, JSON lines.
- ``local``: the embedded local model: a llama.cpp server on loopback (a package).
- ``openai``: the OpenAI Chat Completions wire, for OpenAI, DeepSeek, Moonshot and llama.cpp (a package).
- ``prefix``: a request's prefix as a prompt cache sees it: blocks in order, canonical bytes, estimates.
- ``pricing``: prices and context windows from the bundled genai-prices snapshot (offline).
- ``profile``: ``ProviderProfile``: what a provider is and can do, declared, never probed.
- ``registry``: the provider profiles (anthropic, openai, deepseek, moonshot, local) and the choice of one.
- ``remark``: a recorded body's cache marks rewritten: another lifetime, none, or a plan's placement.
- ``responses``: the OpenAI Responses API wire, stateless, reasoning items kept (a package).
- ``retry``: retries and time limits, in one place for every adapter.
- ``settings_check``: the reasoning and server-compaction settings held against the endpoint, before any call.
- ``streaming``: a streamed answer, from its first event to the ``ModelResponse``.
- ``wire``: ``WireFormat`` and the registry of wires (``WIRES``, ``wire_of``, ``detect_wire``).
- ``reasoning_check``: the reasoning rules of each wire, by wire.
- ``reasoning_shown``: a reply's reasoning as text, a placeholder where it has none to show (omitted, redacted).
- ``thinking``: reasoning settings and what a model can do with them (``ThinkingCaps``).
- ``thinking_caps``: what each model does with reasoning, declared per maker (never probed).
- ``thinking_check``: a run's reasoning settings held against what the model takes, before any call.
- ``thinking_sent``: what reasoning settings ask of a model in effect, and the output room they take.
"""
