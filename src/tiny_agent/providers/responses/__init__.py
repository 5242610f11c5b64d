"""The OpenAI Responses API as a wire: stateless, the whole input rendered from the log each turn.

- ``adapter``: ``ResponsesProvider``, over the official ``openai`` SDK's ``responses.create``.
- ``breaks``: what breaks the prompt cache on the wire beside the prefix's bytes (settings, tool paths).
- ``cache``: the cache key, GPT-5.6's breakpoints and options, the comparison id for the server's diagnosis.
- ``check``: the item rules (pairing, reasoning and its following item, store:false ids, breakpoints).
- ``items``: neutral messages as input items, legal by construction; a model's own reasoning only.
- ``reply``: reading a Responses answer, whole or streamed: output items and usage.
- ``wire``: what a wire object needs: prefix blocks, the check, detecting a body, export as a request.
"""
