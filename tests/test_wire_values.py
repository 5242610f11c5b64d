"""The wire format is a value: outside ``providers/`` no code branches on a wire's or a provider's name
or asks whether a provider is of a concrete class; what differs by wire is asked of the wire's object.

The walk reads the source with ``ast``: a comparison (``==``, ``!=``, ``in``, ``not in``, a ``match``
case) with a wire's or a provider's name as a string, or of a name or attribute called ``wire`` or
``provider`` (or a profile's ``name``) with a string or a named constant, and an ``isinstance`` of a
concrete provider class, are findings. The checker is itself tested on snippets, so the walk cannot
pass by finding nothing.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "tiny_agent"

NAMES = frozenset({"anthropic", "openai", "local", "deepseek", "moonshot"})
"""Wire and provider names that code outside providers/ must not compare against."""
IDENTITY = frozenset({"wire", "provider"})
"""Names and attributes that hold a wire's or a provider's name."""
CONCRETE = frozenset({"AnthropicProvider", "OpenAICompatProvider", "LocalProvider"})

ALLOWED: set[str] = set()
"""Modules outside providers/ still allowed a finding, each with the reason (none since the runspec merge)."""


def _name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _is_identity(node: ast.expr) -> bool:
    """``wire``, ``x.wire``, ``provider``, ``x.provider``, or the ``name`` of something called a profile."""
    name = _name(node)
    if name in IDENTITY:
        return True
    if isinstance(node, ast.Attribute) and node.attr == "name":
        owner = _name(node.value)
        return owner is not None and "profile" in owner.lower()
    return False


def _is_a_name(node: ast.expr) -> bool:
    """A wire's or a provider's name written out."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value.strip().lower() in NAMES
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return any(_is_a_name(e) for e in node.elts)
    return False


def _is_particular(node: ast.expr) -> bool:
    """A string, or a named constant (``LOCAL``): one particular name, not another value of the same kind
    (``provider != self._provider`` asks whether two are the same, which is no branch on a name)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return True
    name = _name(node)
    if name is not None and name.isupper():
        return True
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return any(_is_particular(e) for e in node.elts)
    return False


def findings(source: str) -> list[str]:
    """Every branch on a wire's or provider's name and every isinstance of a concrete provider in ``source``."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            ops = [op for op in node.ops if isinstance(op, ast.Eq | ast.NotEq | ast.In | ast.NotIn)]
            sides = [node.left, *node.comparators]
            named = any(_is_a_name(s) for s in sides)
            tested = any(_is_identity(s) for s in sides) and any(_is_particular(s) for s in sides)
            if ops and (named or tested):
                out.append(f"line {node.lineno}: compares {ast.unparse(node)}")
        elif isinstance(node, ast.Match):
            cases = [c.pattern for c in node.cases]
            named = any(isinstance(p, ast.MatchValue) and _is_a_name(p.value) for p in cases)
            if named or _is_identity(node.subject):
                out.append(f"line {node.lineno}: match on {ast.unparse(node.subject)}")
        elif isinstance(node, ast.Call) and _name(node.func) == "isinstance" and len(node.args) == 2:
            kinds = node.args[1].elts if isinstance(node.args[1], ast.Tuple) else [node.args[1]]
            if any(_name(k) in CONCRETE for k in kinds):
                out.append(f"line {node.lineno}: {ast.unparse(node)}")
    return out


def _outside_providers() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if p.relative_to(PACKAGE).parts[0] != "providers")


@pytest.mark.parametrize(
    "source",
    [
        'if wire == "anthropic": pass',
        'x = "toolu" if wire == "anthropic" else "call"',
        'if profile.wire in ("openai",): pass',
        'if provider == "local": pass',
        'if "deepseek" != name: pass',
        "if profile.name == LOCAL: pass",
        "if self.wire != DEFAULT_WIRE: pass",
        'match profile.wire:\n    case "anthropic": pass',
        'match kind:\n    case "openai": pass',
        "if isinstance(provider, LocalProvider): pass",
        "ok = isinstance(p, (str, providers.AnthropicProvider))",
    ],
)
def test_the_checker_finds_each_kind_of_branch(source: str) -> None:
    assert findings(source), source


@pytest.mark.parametrize(
    "source",
    [
        "marks = breakpoints(body, blocks) if fmt.marks_required else []",
        "adapter = SPOKEN[wire]",
        'if fmt == "jsonl": pass',
        "if provider is None: pass",
        'x = min_cacheable_tokens(model, "anthropic")',
        "if isinstance(block, TextBlock): pass",
        "if provider != self._provider: pass",
        "if policy.provider in (None, own.provider): pass",
    ],
)
def test_the_checker_leaves_lookups_and_other_comparisons_alone(source: str) -> None:
    assert findings(source) == [], source


def test_no_module_outside_providers_branches_on_a_wire_or_provider_name() -> None:
    found = {}
    for path in _outside_providers():
        where = path.relative_to(PACKAGE).as_posix()
        hits = findings(path.read_text(encoding="utf-8"))
        if hits and where not in ALLOWED:
            found[where] = hits
    assert found == {}, "ask the wire object or the profile instead: " + repr(found)


def test_the_allowed_exceptions_still_need_it() -> None:
    """An exception whose module no longer branches must be taken off the list."""
    for where in ALLOWED:
        assert findings((PACKAGE / where).read_text(encoding="utf-8")), f"{where} is clean: remove it from ALLOWED"
