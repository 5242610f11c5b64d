"""The OpenAI Chat Completions wire (OpenAI, DeepSeek, Moonshot, llama.cpp and any compatible URL).

- ``adapter``: ``OpenAICompatProvider``, over the official ``openai`` SDK.
- ``breaks``: the settings that break the cache on this wire (``cache_breaks``' table).
- ``cache``: prompt caching on Chat Completions: GPT-5.6's breakpoints, the cache key, refused fields.
- ``check``: Chat Completions' request rules on the exact body.
- ``json_tools``: tool calls for models that cannot make them: grammar-constrained JSON.
- ``messages``: one neutral message as Chat Completions messages (tool results as ``tool`` messages).
- ``reply``: reading a Chat Completions answer, whole or streamed.
- ``rules``: the cache rules of models on the wire (OpenAI's own, DeepSeek, Moonshot, other servers).
- ``sdk``: the SDK's client and its exceptions as ours, shared with the Responses wire.
- ``token_count``: OpenAI's token counts offline (tiktoken's o200k_base, installed, never downloaded).
- ``wire``: the wire as a value (``OPENAI``): prefix blocks, breakpoints, check, shape.
- ``reasoning``: ``reasoning_content`` on Chat Completions (DeepSeek, Kimi).
"""
