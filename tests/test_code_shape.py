"""The size limits of issue 26, measured with ``ast`` over src/tiny_agent: small modules, short
functions, few parameters. A limit is broken by splitting along a real seam, not by raising it."""

from __future__ import annotations

import ast
from pathlib import Path

SOURCE = Path(__file__).resolve().parent.parent / "src" / "tiny_agent"

MAX_MODULE_LINES = 400
LONG_MODULE_LINES = 300
MAX_LONG_MODULES = 5
LONG_FUNCTION_LINES = 50
MAX_LONG_FUNCTIONS = 5
MAX_PARAMETERS = 10


def _modules() -> dict[str, str]:
    return {str(p.relative_to(SOURCE)): p.read_text(encoding="utf-8") for p in sorted(SOURCE.rglob("*.py"))}


def _functions() -> list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    out = []
    for name, text in _modules().items():
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                out.append((f"{name}:{node.lineno} {node.name}", node))
    return out


def parameters(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """Positional, keyword-only, ``*args`` and ``**kwargs`` each count one; ``self`` and ``cls`` do not."""
    args = node.args
    positional = [a.arg for a in (*args.posonlyargs, *args.args)]
    count = len(positional) + len(args.kwonlyargs) + (args.vararg is not None) + (args.kwarg is not None)
    return count - (1 if positional and positional[0] in ("self", "cls") else 0)


def lines(node: ast.AST) -> int:
    """From the ``def`` line to the last line of the body, docstring included, decorators not."""
    assert node.end_lineno is not None
    return node.end_lineno - node.lineno + 1


def test_no_module_is_over_400_lines_and_at_most_5_are_over_300() -> None:
    sizes = {name: len(text.splitlines()) for name, text in _modules().items()}
    too_long = {name: n for name, n in sizes.items() if n > MAX_MODULE_LINES}
    assert not too_long, f"modules over {MAX_MODULE_LINES} lines: {too_long}"
    long = {name: n for name, n in sizes.items() if n > LONG_MODULE_LINES}
    assert len(long) <= MAX_LONG_MODULES, f"{len(long)} modules over {LONG_MODULE_LINES} lines: {long}"


def test_at_most_5_functions_are_over_50_lines() -> None:
    long = {name: lines(node) for name, node in _functions() if lines(node) > LONG_FUNCTION_LINES}
    assert len(long) <= MAX_LONG_FUNCTIONS, f"{len(long)} functions over {LONG_FUNCTION_LINES} lines: {long}"


def test_no_function_takes_more_than_10_parameters() -> None:
    many = {name: parameters(node) for name, node in _functions() if parameters(node) > MAX_PARAMETERS}
    assert not many, f"functions with more than {MAX_PARAMETERS} parameters: {many}"


def test_the_measures_count_what_they_say() -> None:
    """The counting itself, on a function whose figures are known (a broken counter passes everything)."""
    source = "class A:\n    def f(self, a, /, b, *rest, c, d=1, **more):\n        x = 1\n        return x\n"
    method = next(n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.FunctionDef))
    assert parameters(method) == 6
    assert lines(method) == 3
    plain = next(n for n in ast.walk(ast.parse("def g(a, b):\n    pass\n")) if isinstance(n, ast.FunctionDef))
    assert parameters(plain) == 2
