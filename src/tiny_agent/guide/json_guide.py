"""What a small model may reply this turn: the grammar follows the request and the conversation.

The embedded 135M model cannot be told much; its decoding can be constrained instead. Starting from
this turn's workspace grammar (``Prompt.tool_grammar``: existing files for ``read_file``, folders for
``list_dir``), the guide narrows what the reply may be, measured on ``benchmarks/tool_choice.py`` and
``benchmarks/phrasings.py``:

- A request that asks nothing of the workspace (a greeting, thanks, a joke: ``request_kind``) gets
  a short free reply and no tool.
- The paths the request is about are the paths on offer: the paths it writes out, and the files and
  folders a word of it names or that hold its words (``path_rank``: "the soup recipe" is
  recipes/soup.md, "who works on Friday?" the rota); "here" is the root.
- No write unless the request asks for one (``write_request``); a write that names files to read is
  offered once they are read, and the content on offer is what the request says to write or what
  was read.
- Optional arguments are left out (the model filled ``start_line`` with numbers past the end).
- Each request looks anew: no answer before this request's first tool result, and the answer quotes
  only what was gathered for it (``quotes``: the whole result when the request asks to see a file,
  else the lines that hold its words), unless the request refers back ("and the host?").
- A read that already succeeded for this request is not offered again; after two looks it answers.
- edit_file, search and shell only as the one call a request spells out (``tool_request``).

All of it is decoding-side: the prompt text, and so the server's cached prefix, is the same.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from tiny_agent.guide.options import MAX_QUOTE, MAX_QUOTES, UNGUIDED, WRITE_TOOLS, GuideOptions
from tiny_agent.guide.path_rank import best_paths, rank
from tiny_agent.guide.quotes import Result, answers, lines_holding, whole
from tiny_agent.guide.request_kind import Request, read_request, subject
from tiny_agent.guide.tool_request import asked_turn
from tiny_agent.guide.write_request import asks_for_a_write, content_in_request, named_paths, write_targets
from tiny_agent.types import Message, Prompt, TextBlock, ToolResultBlock, ToolSpec, ToolUseBlock

__all__ = ["UNGUIDED", "WRITE_TOOLS", "Guide", "GuideOptions", "asks_for_a_write", "guide", "named_paths"]

ALL_ON = GuideOptions()
CHAT_WORDS = 12
"""Most words of the sentence after the opening of a reply to small talk."""
_REGEX_SPECIAL = frozenset(".^$*+?()[]{}|\\")
WORD_CHARS = 12
"""Longest word of that reply."""


@dataclass(frozen=True)
class Guide:
    """The replies allowed this turn."""

    tools: tuple[ToolSpec, ...]
    """The tools on offer, in the prompt's order."""
    grammar: Mapping[str, Mapping[str, Any]]
    """Their argument schemas for this turn."""
    answer: Mapping[str, Any] | None
    """The schema of the answer's text, or None when the reply must be a tool call."""


def guide(prompt: Prompt, options: GuideOptions = ALL_ON) -> Guide:
    """The allowed replies for ``prompt``, with the narrowings ``options`` turns on."""
    schemas = {
        t.name: dict(prompt.tool_grammar.get(t.name, t.input_schema)) for t in prompt.tools if t.name not in UNGUIDED
    }
    request_at = _request_index(prompt.messages)
    text = _text(prompt.messages[request_at]) if request_at is not None else ""
    request = read_request(text)
    if not options.phrasing:
        request = Request(text, request.terms, False, False, False, False, request.refers_back)
    scope = request_at if options.own_request else 0
    results = _results(prompt.messages, scope)
    succeeded = _succeeded_since(prompt.messages, request_at)
    targets = write_targets(text) if options.follow_request else set()
    if (turn := asked_turn(prompt, request_at, text) if options.follow_request else None) is not None:
        found = [w for r in results if (w := whole(r.text, options.max_quote))] or _failures(prompt.messages, scope)
        return Guide(*turn, None if turn[0] else _quote_schema(found, options.quote))
    if request.chat and targets is None and request_at is not None:
        return Guide((), {}, _free_reply(request.opening))
    if options.own_request and request.refers_back and not results and request_at is not None:
        earlier = _earlier(prompt.messages, request_at)
        if earlier is not None:
            return Guide((), {}, _quote_schema(earlier, options.quote))
    schemas = _not_again(schemas, succeeded, options)
    if targets is not None:  # "write a shopping list to x.txt" asks for no listing
        request = replace(request, listing=False)
    given = content_in_request(text, targets) if targets is not None else []
    if given:  # what to write is in the request: its words say what to write, not where to look
        request = replace(request, terms=subject(text[: text.find(given[0])]))
    if options.follow_request and request_at is not None:
        looked = bool(results) or bool(given)
        refers_back = options.own_request and request.refers_back and not results
        before = _previous_subject(prompt.messages, request_at) if refers_back else Counter[str]()
        words = (options.root_words, before)
        schemas = _follow(schemas, request, prompt, targets, options.write_tools, words, options.match_words, looked)
    if options.required_only:
        schemas = {name: _required_only(schema) for name, schema in schemas.items()}
    if targets is not None and options.quote:
        schemas = _content(schemas, options.write_tools, given, results, options.max_quote)
    offered = {name: s for name, s in schemas.items() if _enum(s) != []}
    if options.max_calls is not None and len(succeeded) >= options.max_calls:
        offered = {}
    looked = bool(results) if options.own_request else any(_results(prompt.messages, 0))
    answer: Mapping[str, Any] | None = None
    if looked or not options.look_first or not offered:
        quotes = answers(results, request.terms, whole_only=request.whole or request.listing, limit=options.max_quote)
        answer = _quote_schema(quotes or _failures(prompt.messages, scope), options.quote)
    return Guide(tuple(t for t in prompt.tools if t.name in offered), offered, answer)


def _previous_subject(messages: Sequence[Message], request_at: int) -> Counter[str]:
    """What the request before this one was about: "and the apple tart?" is priced like the loaf."""
    previous = _request_index(messages[:request_at])
    return subject(_text(messages[previous])) if previous is not None else Counter()


def _not_again(
    schemas: dict[str, dict[str, Any]], succeeded: Sequence[tuple[str, str]], options: GuideOptions
) -> dict[str, dict[str, Any]]:
    """One write per request, and (``no_repeat``) no read again that already succeeded for it."""
    if any(name in options.write_tools for name, _ in succeeded):
        schemas = {name: s for name, s in schemas.items() if name not in options.write_tools}
    if options.no_repeat:
        for name, path in succeeded:
            enum = _enum(schemas.get(name, {}))
            if enum is not None and path in enum:
                schemas[name] = _with_paths(schemas[name], [p for p in enum if p != path])
    return schemas


def _follow(
    schemas: dict[str, dict[str, Any]],
    request: Request,
    prompt: Prompt,
    targets: set[str] | None,
    write_tools: frozenset[str],
    words_around: tuple[frozenset[str], Counter[str]],
    match_words: bool,
    looked: bool,
) -> dict[str, dict[str, Any]]:
    """The tools and paths the request is about; ``words_around``: the words that name the root, and
    the words of the request this one refers back to."""
    root_words, before = words_around
    if targets is None:
        schemas = {name: s for name, s in schemas.items() if name not in write_tools}
    existing = {p for s in schemas.values() for p in _enum(s) or ()}
    existing |= {p for s in prompt.tool_grammar.values() for p in _enum(s) or ()}
    words = named_paths(request.text)
    # Written like a path ("notes.txt", "staff/rota.txt"): that path. A bare word ("staff") names a
    # path as any word does, weighed against the others (``path_rank``).
    named = {w for w in words if "/" in w or "." in w[1:]} if match_words else set(words)
    if words & root_words:
        named.add(".")
    files = _enum(prompt.tool_grammar.get("read_file", {})) or []
    folders = _enum(prompt.tool_grammar.get("list_dir", {})) or []
    if match_words:  # "rota.txt" for staff/rota.txt: a name written without its folders
        named |= {p for p in [*files, *folders] if any(p.endswith(f"/{w}") for w in named)}
    if match_words:
        best = set(best_paths(rank(request, files, folders, prompt.path_terms, named & existing, before)))
    else:
        best = named & existing
    # A name missing from the lists may still exist (a binary or secret file, a workspace past the
    # grammar's bound): only a file the write command names is offered to write_file.
    new_files = sorted((targets or set()) - existing)
    out: dict[str, dict[str, Any]] = {}
    for name, schema in schemas.items():
        enum = _enum(schema)
        if name in write_tools:
            if best and not looked:
                continue  # look first at what the request names; write what was read
            out[name] = _with_paths(schema, new_files) if targets else schema
        elif targets is not None and not best:
            continue  # a write that names nothing to read: write it
        elif best and enum is not None:
            out[name] = _with_paths(schema, [p for p in enum if p in best])
        else:
            out[name] = schema
    return out


def _content(
    schemas: dict[str, dict[str, Any]],
    write_tools: frozenset[str],
    asked: list[str],
    results: Sequence[Result],
    limit: int,
) -> dict[str, dict[str, Any]]:
    """The write's content: the words the request gives, or what was read for it, when there are any."""
    options = [*asked, *(w for r in results if (w := whole(r.text, limit)))]
    if not options:
        return schemas
    out = dict(schemas)
    for name in write_tools & set(schemas):
        properties = dict(schemas[name].get("properties", {}))
        if "content" in properties:
            properties["content"] = {"type": "string", "enum": list(dict.fromkeys(options))}
            out[name] = {**schemas[name], "properties": properties}
    return out


def _free_reply(opening: str | None) -> dict[str, Any]:
    """A short reply in words: the 135M model, free, wrote "jmzdzmjdzm..." to "hi". Small talk is
    answered in kind ("Hello!" to a greeting) and one sentence of at most ``CHAT_WORDS`` words;
    anything else (a joke) in at most ``2 * CHAT_WORDS`` words of at most ``WORD_CHARS`` letters."""
    word = f"[A-Za-z][A-Za-z'-]{{0,{WORD_CHARS - 1}}}"  # a letter first: "-----------" is no word
    if opening:
        literal = "".join(f"\\{c}" if c in _REGEX_SPECIAL else c for c in opening)
        return {"type": "string", "pattern": f"^{literal}( {word},?){{0,{CHAT_WORDS}}}[.!?]?$"}
    return {"type": "string", "pattern": f"^{word}[,.!?]?( {word}[,.!?]?){{0,{2 * CHAT_WORDS - 1}}}$"}


def _quote_schema(options: Sequence[str], quote: bool) -> dict[str, Any]:
    answer: dict[str, Any] = {"type": "string"}
    if quote and options:
        answer["enum"] = list(options)[-MAX_QUOTES:]
    return answer


def _earlier(messages: Sequence[Message], request_at: int) -> list[str] | None:
    """For a request that refers back: the lines gathered before it that hold its words (or, for
    "say that again", the answer given), or None when none holds what it asks about."""
    previous = _request_index(messages[:request_at])
    if previous is None:
        return None
    request = read_request(_text(messages[request_at]))
    given = [t for m in messages[previous + 1 : request_at] if m.role == "assistant" and (t := _text(m).strip())]
    gathered = _results(messages[:request_at], 0)
    if not request.terms:  # "what does it say?": the newest result whole; "say that again": the reply
        newest = [w for r in gathered[-1:] if (w := whole(r.text, MAX_QUOTE))]
        return (newest if request.whole else given[-1:]) or None
    return lines_holding(gathered, request.terms, MAX_QUOTE) or None  # None: no line holds it, look anew


def _request_index(messages: Sequence[Message]) -> int | None:
    """The newest user message with text: the request the model is working on."""
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if message.role == "user" and any(isinstance(b, TextBlock) and b.text.strip() for b in message.content):
            return index
    return None


def _text(message: Message) -> str:
    return " ".join(b.text for b in message.content if isinstance(b, TextBlock))


def _calls(messages: Sequence[Message]) -> dict[str, ToolUseBlock]:
    return {b.id: b for m in messages for b in m.content if isinstance(b, ToolUseBlock)}


def _results(messages: Sequence[Message], start: int | None) -> list[Result]:
    """The tool results after ``start`` that came back without an error, with their paths."""
    calls = _calls(messages)
    out: list[Result] = []
    for m in messages[(start or 0) :]:
        for b in m.content:
            if isinstance(b, ToolResultBlock) and not b.is_error:
                call = calls.get(b.tool_use_id)
                out.append(Result(str(call.input.get("path", ".")) if call else ".", b.content))
    return out


def _failures(messages: Sequence[Message], start: int | None) -> list[str]:
    """Error results after ``start``: the answer when nothing succeeded is what went wrong."""
    later = messages[(start or 0) :]
    return [b.content.strip() for m in later for b in m.content if isinstance(b, ToolResultBlock) and b.is_error]


def _succeeded_since(messages: Sequence[Message], start: int | None) -> list[tuple[str, str]]:
    """(tool, path) of the calls after the request whose results came back without an error."""
    later = messages[(start or 0) :]
    failed = {b.tool_use_id for m in later for b in m.content if isinstance(b, ToolResultBlock) and b.is_error}
    answered = {b.tool_use_id for m in later for b in m.content if isinstance(b, ToolResultBlock)}
    return [
        (b.name, str(b.input.get("path", ".")))
        for m in later
        for b in m.content
        if isinstance(b, ToolUseBlock) and b.id in answered and b.id not in failed
    ]


def _enum(schema: Mapping[str, Any]) -> list[str] | None:
    enum = schema.get("properties", {}).get("path", {}).get("enum")
    return list(enum) if isinstance(enum, list) else None


def _with_paths(schema: Mapping[str, Any], paths: list[str]) -> dict[str, Any]:
    properties = dict(schema["properties"])
    path = {k: v for k, v in properties["path"].items() if k != "minLength"}
    properties["path"] = {**path, "enum": paths}
    required = list(schema.get("required", []))
    return {**schema, "properties": properties, "required": required if "path" in required else ["path", *required]}


def _required_only(schema: Mapping[str, Any]) -> dict[str, Any]:
    required = list(schema.get("required", []))
    properties = {k: v for k, v in schema.get("properties", {}).items() if k in required}
    return {**schema, "properties": properties, "additionalProperties": False}
