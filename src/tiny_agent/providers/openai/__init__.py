"""The OpenAI Chat Completions wire (OpenAI, DeepSeek, Moonshot, llama.cpp and any compatible URL).

- ``adapter``: ``OpenAICompatProvider``, over the official ``openai`` SDK.
- ``cache``: prompt caching on Chat Completions: GPT-5.6's breakpoints, the cache key, refused fields.
- ``json_tools``: tool calls for models that cannot make them: grammar-constrained JSON.
- ``reply``: reading a Chat Completions answer, whole or streamed.
- ``sdk``: the SDK's client and its exceptions as ours, shared with the Responses wire.
- ``token_count``: OpenAI's token counts offline (tiktoken's o200k_base, installed, never downloaded).
"""
