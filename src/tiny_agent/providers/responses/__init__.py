"""The OpenAI Responses API as a wire: ``adapter`` (``ResponsesProvider``, over the ``openai`` SDK),
``items`` (neutral messages as input items), ``reply`` (output items and usage back), ``cache``
(the key, GPT-5.6 breakpoints, the server's miss diagnosis), ``check`` (the item rules), ``wire``
(prefix blocks, detection, export: what a wire object needs)."""
