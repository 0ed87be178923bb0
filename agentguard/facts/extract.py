"""Extract :class:`ModuleFacts` from Python source: one ``ast`` parse, one traversal.

Comments (suppressions) come from ``tokenize`` only when the bytes contain the marker.
Nothing here imports or runs the scanned code.
"""

from __future__ import annotations

import ast
import gc
import io
import re
import tokenize
from collections.abc import Callable, Iterator
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
) -> ModuleFacts:
    """Parse ``source`` and return its facts. Raises SyntaxError/ValueError on bad input.

    ``carriers``: the catalogue's context carriers (``project.catalog.context_carriers``).
    ``is_test``: whether the file is a test (the config's ``test-paths``); by default, by
    its name (``is_test_path``). ``module``: the file's module name, when its package root
    is not the scan root (``src/pkg/mod.py`` is ``pkg.mod``); by default, from its path."""
    # A parse and its facts allocate hundreds of thousands of objects, none in a reference
    # cycle, so the cyclic collector finds nothing here; it would scan them again and again
    # (a seventh of the time). Reference counting still frees every one.
    collecting = gc.isenabled()
    gc.disable()
    try:
        tree = ast.parse(source, filename=path, type_comments=False)
        test = is_test_path(path) if is_test is None else is_test
        extractor = _Extractor(source, path, test, carriers, module)
        extractor.run(tree)
        facts = extractor.facts
        if b"agentguard:" in source:
            facts.suppressions = list(_suppressions(source))
        return facts
    finally:
        if collecting:
            gc.enable()


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
