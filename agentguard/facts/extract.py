"""Extract :class:`ModuleFacts` from Python source: one ``ast`` parse, one traversal.

Comments (suppressions) come from ``tokenize`` only when the bytes contain the marker.
Nothing here imports or runs the scanned code.
"""

from __future__ import annotations

import ast
import gc
import io
import re
import sys
import tokenize
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from agentguard.diagnostics import Span
from agentguard.facts.extract_definitions import DefinitionVisitor
from agentguard.facts.extract_flow import FlowVisitor
from agentguard.facts.module_facts import (
    ModuleFacts,
    Suppression,
)
from agentguard.facts.syntax_walk import NODE_FIELDS, WALKED_KINDS, module_name_for
from agentguard.knowledge.catalog import ContextCarriers

__all__ = ["compiles", "extract", "is_test_path", "module_name_for"]

SUPPRESSION_RE = re.compile(
    r"#\s*agentguard:\s*ignore(?:\[(?P<codes>[A-Za-z0-9_,\s-]*)\])?(?P<reason>[^#]*)"
)


def is_test_path(path: str) -> bool:
    name = path.rsplit("/", 1)[-1]
    return (
        name.startswith("test_")
        or name.endswith("_test.py")
        or name == "conftest.py"
        or "/tests/" in f"/{path}"
        or "/test/" in f"/{path}"
    )


def extract(
    source: bytes,
    path: str,
    carriers: ContextCarriers,
    is_test: bool | None = None,
    module: str | None = None,
    import_heads: Mapping[str, str] | None = None,
) -> ModuleFacts:
    """Parse ``source`` and return its facts. Raises SyntaxError/ValueError on bad input.

    ``carriers``: the catalogue's context carriers (``project.catalog.context_carriers``).
    ``is_test``: whether the file is a test (the config's ``test-paths``); by default, by
    its name (``is_test_path``). ``module``: the file's module name, when its package root
    is not the scan root (``src/pkg/mod.py`` is ``pkg.mod``); by default, from its path.
    ``import_heads``: the first names of absolute imports that name modules of the file's
    own program, with the names the project gives those modules
    (``agentguard.engine.module_roots.import_heads``)."""
    # A parse and its facts allocate hundreds of thousands of objects, none in a reference
    # cycle, so the cyclic collector finds nothing here; it would scan them again and again
    # (a seventh of the time). Reference counting still frees every one.
    collecting = gc.isenabled()
    gc.disable()
    try:
        unread: list[Span] = []
        try:
            tree = ast.parse(source, filename=path, type_comments=False)
        except SyntaxError:
            # PEP 701 f-strings (quotes or comments nested, Python 3.12) under an older
            # interpreter: each f-string it cannot read is read as a plain string of the same
            # shape, and named; the rest of the file (its tools and calls) is read as written
            if sys.version_info >= (3, 12):
                raise
            source_text, unread = newer_fstrings_blanked(source)
            if not unread:
                raise
            tree = ast.parse(source_text, filename=path, type_comments=False)
        test = is_test_path(path) if is_test is None else is_test
        extractor = _Extractor(source, path, test, carriers, module, import_heads)
        extractor.run(tree)
        facts = extractor.facts
        if unread:
            facts.unread = unread
        if b"agentguard:" in source:
            facts.suppressions = list(_suppressions(source))
        return facts
    finally:
        if collecting:
            gc.enable()


def newer_fstrings_blanked(source: bytes) -> tuple[bytes, list[Span]]:
    """``source`` with each f-string this interpreter cannot parse (PEP 701's nested quotes
    or comments, Python 3.12) replaced by a plain string literal of the same lines and
    columns, and where each was. An older tokenizer cannot even find where such a string
    ends (``f"{d["id"]}"``), so the strings are found here with PEP 701's own rules: inside
    a replacement field, a string may use any quotes."""
    text = source.decode("utf-8", "replace")
    chars = list(text)
    blanked: list[Span] = []
    for start, end in _fstrings(text):
        literal = text[start:end]
        try:
            ast.parse(literal, mode="eval")
            continue
        except SyntaxError:
            pass
        opening = _STRING_PREFIX.match(literal)
        assert opening is not None
        prefix, quote = opening.group("prefix"), opening.group("quote")
        for index in range(start, end):
            inside = start + len(prefix) + len(quote) <= index < end - len(quote)
            if index < start + len(prefix) or (inside and chars[index] != "\n"):
                chars[index] = " "
        blanked.append(_span_of(text, start, end))
    return "".join(chars).encode(), blanked


_STRING_PREFIX = re.compile(r"(?P<prefix>[A-Za-z]*)(?P<quote>\"\"\"|'''|\"|')")


def _fstrings(text: str) -> Iterator[tuple[int, int]]:
    """Where each top-level f-string literal starts and ends (end exclusive)."""
    index, size = 0, len(text)
    while index < size:
        char = text[index]
        if char == "#":
            newline = text.find("\n", index)
            index = size if newline < 0 else newline
        elif char in "'\"":
            start = index
            while start > 0 and text[start - 1].isalpha():
                start -= 1
            quote = text[index : index + 3] if text[index : index + 3] in ('"""', "'''") else char
            if "f" in text[start:index].lower():
                end = _fstring_end(text, index, quote)
                yield start, end
            else:
                end = _plain_end(text, index, quote)
            index = end
        else:
            index += 1


def _plain_end(text: str, index: int, quote: str) -> int:
    cursor = index + len(quote)
    while cursor < len(text):
        if text[cursor] == "\\":
            cursor += 2
        elif text.startswith(quote, cursor):
            return cursor + len(quote)
        elif len(quote) == 1 and text[cursor] == "\n":
            return cursor  # an unterminated line: the parser reports it
        else:
            cursor += 1
    return len(text)


def _fstring_end(text: str, index: int, quote: str) -> int:
    """The end of the f-string whose quote opens at ``index``, replacement fields holding
    strings of any quotes, nested f-strings and comments (PEP 701)."""
    cursor, depth, size = index + len(quote), 0, len(text)
    while cursor < size:
        char = text[cursor]
        if depth == 0:
            if text.startswith(quote, cursor):
                return cursor + len(quote)
            if char == "\\":
                cursor += 2
                continue
            if char == "{":
                if text.startswith("{{", cursor):
                    cursor += 2
                    continue
                depth = 1
            cursor += 1
            continue
        if char in "'\"":
            start = cursor
            while start > 0 and text[start - 1].isalpha():
                start -= 1
            inner = (
                text[cursor : cursor + 3] if text[cursor : cursor + 3] in ('"""', "'''") else char
            )
            if "f" in text[start:cursor].lower():
                cursor = _fstring_end(text, cursor, inner)
            else:
                cursor = _plain_end(text, cursor, inner)
            continue
        if char == "#":
            newline = text.find("\n", cursor)
            cursor = size if newline < 0 else newline
            continue
        if char in "{[(":
            depth += 1
        elif char in "}])":
            depth = max(depth - 1, 0)  # a stray closer in broken code ends the field
        cursor += 1
    return size


def _span_of(text: str, start: int, end: int) -> Span:
    line = text.count("\n", 0, start) + 1
    column = start - (text.rfind("\n", 0, start) + 1) + 1
    end_line = text.count("\n", 0, end) + 1
    end_column = end - (text.rfind("\n", 0, end) + 1) + 1
    return Span(line, column, end_line, end_column)


def compiles(text: str, filename: str) -> str | None:
    """None when the text compiles, else the reason it does not (a fixed file is checked
    before it is written)."""
    try:
        compile(text, filename, "exec", dont_inherit=True)
    except SyntaxError as exc:
        return f"line {exc.lineno}: {exc.msg}"
    except ValueError as exc:
        return str(exc)
    return None


def _suppressions(source: bytes) -> Iterator[Suppression]:
    try:
        tokens = list(tokenize.tokenize(io.BytesIO(source).readline))
    except (tokenize.TokenError, SyntaxError):
        return
    for tok in tokens:
        if tok.type != tokenize.COMMENT:
            continue
        match = SUPPRESSION_RE.search(tok.string)
        if not match:
            continue
        codes_text = match.group("codes")
        codes = [c.strip().upper() for c in (codes_text or "").split(",") if c.strip()]
        (line, col), (end_line, end_col) = tok.start, tok.end
        yield Suppression(
            line=line,
            codes=codes,
            reason=match.group("reason").strip(),
            span=Span(line, col + 1, end_line, end_col + 1),
        )


class _Extractor(DefinitionVisitor, FlowVisitor):
    """One traversal of a module: each node kind's ``visit_*`` comes from the visitor of its
    concern (``extract_definitions``, ``extract_flow``, ``extract_values``)."""

    # ------------------------------------------------------------------ traversal
    # ``ast.NodeVisitor`` looks each method up by name per node and walks every field
    # through generators; a per-kind plan (handler, child fields, is it a statement) found
    # with one dict probe, and children without facts (names, constants) never visited,
    # do the same traversal in a fraction of the time.
    def visit(self, node: ast.AST) -> None:
        handler, fields, is_statement = _PLANS[type(node)]
        if is_statement:
            self._forget_values()
        if handler is None:
            self._visit_children(node, fields)
        else:
            handler(self, node)

    def generic_visit(self, node: ast.AST) -> None:
        self._visit_children(node, NODE_FIELDS[type(node)])

    def _visit_children(self, node: ast.AST, fields: tuple[str, ...]) -> None:
        plans = _VISITED
        for name in fields:
            child: Any = getattr(node, name, None)
            if type(child) is list:
                for item in child:
                    plan = plans.get(type(item))
                    if plan is not None:
                        handler, inner, is_statement = plan
                        if is_statement:
                            self._forget_values()
                        if handler is None:
                            self._visit_children(item, inner)
                        else:
                            handler(self, item)
            else:
                plan = plans.get(type(child))
                if plan is not None:
                    handler, inner, is_statement = plan
                    if is_statement:
                        self._forget_values()
                    if handler is None:
                        self._visit_children(child, inner)
                    else:
                        handler(self, child)

    # ------------------------------------------------------------------ module
    def run(self, tree: ast.Module) -> None:
        self.tree = tree
        for stmt in tree.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                self.top_level.add(stmt.name)
            elif isinstance(stmt, ast.Assign):
                for target in stmt.targets:
                    if isinstance(target, ast.Name):
                        self.top_level.add(target.id)
        self.visit(tree)


_Plan = tuple["Callable[[_Extractor, Any], None] | None", tuple[str, ...], bool]


def _plan(kind: type) -> _Plan:
    handler = getattr(_Extractor, "visit_" + kind.__name__, None)
    return handler, NODE_FIELDS[kind], issubclass(kind, ast.stmt)


_PLANS: dict[type, _Plan] = {kind: _plan(kind) for kind in NODE_FIELDS}
# What a traversal steps into: not the leaf kinds, nor names and constants (no children,
# no handler), nor anything that is not a node.
_VISITED: dict[type, _Plan] = {
    kind: plan
    for kind, plan in _PLANS.items()
    if kind in WALKED_KINDS and kind not in (ast.Name, ast.Constant)
}
