"""After a compaction on the real llama.cpp server, the engine's size of the window is the server's own.

The local provider counts every prompt with the server (``/apply-template`` + ``/tokenize``), so the
size a compaction records is a count, not an estimate: the next request's ``prompt_tokens`` must agree
within 2%, on tool output of JSON, code, prose and other scripts.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tiny_agent.providers.local.llama_server import LlamaServer
from tiny_agent.testing.estimates import local_compaction

pytestmark = pytest.mark.integration


def test_the_size_after_a_compaction_is_the_servers_count(llama_server: LlamaServer, tmp_path: object) -> None:
    done, served = local_compaction(Path(str(tmp_path)), llama_server.base_url, llama_server.api_key)
    assert done is not None and done.tokens_after is not None
    assert served, "the server reported the prompt's size"
    assert abs(done.tokens_after - served) / served <= 0.02, (done.tokens_after, served)
