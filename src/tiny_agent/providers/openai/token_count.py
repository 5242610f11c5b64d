"""OpenAI's token counts offline: tiktoken's o200k_base, from a file that is installed, never downloaded.

tiktoken fetches its BPE files from the network the first time an encoding is asked for; here the
o200k_base file comes from the ``bpe-openai`` package (which ships it), checked against the sha256
tiktoken itself expects, and the encoding is built from it in memory. The pattern below is tiktoken's
own for o200k_base (``tiktoken_ext.openai_public``): the encoding is the one ``get_encoding`` gives.

A Chat Completions body is counted the way OpenAI's cookbook counts a chat (3 tokens a message, the
text of every field, 3 to prime the reply), with the tools as their JSON: close to what the server
reports, and counted again only after a compaction (``ProviderProfile.free_count``).
"""

from __future__ import annotations

import base64
import functools
import gzip
import hashlib
import importlib.util
import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import tiktoken

__all__ = ["count_chat_body", "counts_offline", "o200k", "text_tokens"]

O200K_SHA256 = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"
"""tiktoken's expected hash of o200k_base.tiktoken (``tiktoken_ext.openai_public``)."""
_PATTERN = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)
PER_MESSAGE = 3
REPLY_PRIMING = 3


@functools.cache
def o200k() -> tiktoken.Encoding:
    """The o200k_base encoding, built from the installed file (ImportError if it is not installed)."""
    import tiktoken

    packed = _packed().read_bytes()
    raw = gzip.decompress(packed)
    if hashlib.sha256(raw).hexdigest() != O200K_SHA256:
        raise ImportError("the o200k_base file installed with bpe-openai is not the one tiktoken expects")
    ranks = {base64.b64decode(token): int(rank) for token, rank in (line.split() for line in raw.splitlines() if line)}
    specials = {"<|endoftext|>": 199999, "<|endofprompt|>": 200018}
    return tiktoken.Encoding("o200k_base", pat_str=_PATTERN, mergeable_ranks=ranks, special_tokens=specials)


def _packed() -> Path:
    """Where bpe-openai keeps o200k_base (found without importing it: its import is not needed)."""
    spec = importlib.util.find_spec("bpe_openai")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError("bpe-openai is not installed: pip install bpe-openai")
    return Path(next(iter(spec.submodule_search_locations))) / "data" / "o200k_base.tiktoken.gz"


def counts_offline(model: str) -> bool:
    """Whether ``model`` is counted by o200k_base (gpt-4o, 4.1, 5 and later, o1, o3, o4) and the
    encoding is installed."""
    try:
        import tiktoken

        if tiktoken.encoding_name_for_model(model) != "o200k_base":
            return False
        return _packed().is_file()
    except (ImportError, KeyError, OSError):
        return False


def text_tokens(value: Any) -> int:
    """o200k tokens of the text in a JSON value: every string in it (a tool's arguments as JSON)."""
    if isinstance(value, str):
        return len(o200k().encode(value, disallowed_special=()))
    if isinstance(value, Mapping):
        return sum(text_tokens(v) for k, v in value.items() if k not in ("type", "cache_control", "id"))
    if isinstance(value, list):
        return sum(text_tokens(v) for v in value)
    return 0 if value is None else text_tokens(json.dumps(value))


def count_chat_body(body: Mapping[str, Any]) -> int:
    """Prompt tokens of a Chat Completions body, as OpenAI's cookbook counts them."""
    messages = body.get("messages") or []
    tools = body.get("tools") or []
    total = sum(PER_MESSAGE + text_tokens(m) for m in messages) + REPLY_PRIMING
    return total + (text_tokens(json.dumps(tools, ensure_ascii=False)) if tools else 0)
