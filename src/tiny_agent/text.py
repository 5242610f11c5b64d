"""Bytes that may not be UTF-8, made into text: stdin, argv, file names, file contents, subprocess output.

The rule is small and predictable: a byte-order mark says the encoding (UTF-8, UTF-16, UTF-32);
else UTF-8 if the bytes are valid UTF-8; else Windows-1252 (Latin-1 for the five bytes it leaves
undefined), which is what a non-UTF-8 European file almost always is. ``charset-normalizer`` was
tried and guessed wrong on exactly these inputs: cp1250 for "café crème brûlée" in Latin-1, cp1006
for "review café", big5 for a 1 MB Latin-1 file; a wrong guess that looks plausible is worse than a
known fallback the result names.

Python hands argv, environment values and file names over as ``str`` with each undecodable byte as
a lone surrogate (``surrogateescape``); such a string cannot be written to the session store or
sent to a provider. ``from_os`` decodes it again by the rule above; ``scrub`` replaces what is left.
"""

from __future__ import annotations

import codecs
import os
import re

__all__ = ["Decoded", "decode", "from_os", "has_surrogates", "scrub", "shown_name", "unescape_bytes"]

_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
_SURROGATE = re.compile("[\ud800-\udfff]")


class Decoded(str):
    """Decoded text that remembers its encoding (``"utf-8"`` for the common case)."""

    encoding: str

    def __new__(cls, text: str, encoding: str) -> Decoded:
        made = super().__new__(cls, text)
        made.encoding = encoding
        return made


def decode(data: bytes) -> Decoded:
    """``data`` as text by the rule of this module; never raises."""
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            try:
                return Decoded(data.decode(encoding), encoding)
            except UnicodeDecodeError:
                break
    try:
        return Decoded(data.decode("utf-8"), "utf-8")
    except UnicodeDecodeError:
        pass
    try:
        return Decoded(data.decode("cp1252"), "cp1252")
    except UnicodeDecodeError:
        return Decoded(data.decode("latin-1"), "latin-1")


def has_surrogates(text: str) -> bool:
    return _SURROGATE.search(text) is not None


def from_os(text: str) -> str:
    """A string from the OS (argv, an environment value, stdin decoded with ``surrogateescape``)
    with its undecodable bytes decoded by the rule of this module; unchanged when it has none."""
    if not has_surrogates(text):
        return text
    try:
        return str(decode(os.fsencode(text)))
    except UnicodeEncodeError:  # a surrogate that is not an escaped byte
        return scrub(text)


def scrub(text: str) -> str:
    """``text`` with every lone surrogate replaced by U+FFFD, so it can be encoded as UTF-8."""
    return _SURROGATE.sub("\ufffd", text) if has_surrogates(text) else text


def shown_name(name: str) -> str:
    """A file name as the model is shown it: undecodable bytes as ``\\xff`` escapes."""
    if not has_surrogates(name):
        return name
    return os.fsencode(name).decode("utf-8", "backslashreplace")


_BYTE_ESCAPE = re.compile(r"\\x([89a-fA-F][0-9a-fA-F])")


def unescape_bytes(name: str) -> str:
    """``shown_name`` undone: each ``\\xNN`` escape of a byte past ASCII made that byte again (as an
    escaped surrogate, the way Python holds a file name that is not UTF-8)."""
    return _BYTE_ESCAPE.sub(lambda m: chr(0xDC00 + int(m.group(1), 16)), name) if "\\x" in name else name
