"""Walking the standard library's syntax tree fast, and where a node is: the tables the
extractor's walks look node kinds up in, and a node's span and a file's module name."""

from __future__ import annotations

import ast
from typing import Any

from agentguard.diagnostics import Span

# Leaf node kinds that carry no facts: skipping them keeps every walk's order otherwise the
# same as ``ast.walk`` (they never have children) while visiting about a third fewer nodes.
_LEAF_KINDS = (ast.expr_context, ast.boolop, ast.operator, ast.unaryop, ast.cmpop)
# Fields that never hold a node (names, flags, the leaf kinds above): not worth a look.
_SCALAR_FIELDS = {
    "ctx",
    "op",
    "ops",
    "id",
    "attr",
    "kind",
    "conversion",
    "is_async",
    "type_comment",
    "level",
    "module",
    "asname",
}


def _node_types() -> list[type[ast.AST]]:
    """Every node class of the running Python's ``ast`` (the grammar differs by version)."""
    found: list[type[ast.AST]] = []
    todo: list[type[ast.AST]] = [ast.AST]
    while todo:
        for sub in todo.pop().__subclasses__():
            if sub not in found:
                found.append(sub)
                todo.append(sub)
    return found


# Walks look a node's kind up in these tables instead of asking ``isinstance`` per field
# per node: one dict or set probe answers "is this a node, and where are its children".
NODE_FIELDS: dict[type, tuple[str, ...]] = {
    kind: tuple(f for f in kind._fields if f not in _SCALAR_FIELDS) for kind in _node_types()
}
WALKED_KINDS = frozenset(kind for kind in NODE_FIELDS if not issubclass(kind, _LEAF_KINDS))
# What a search for names, calls and attributes queues: names are taken when found, and a
# constant holds none of the three.
QUEUED_KINDS = WALKED_KINDS - {ast.Name, ast.Constant}


def walk(node: ast.AST) -> list[ast.AST]:
    """``ast.walk`` order (breadth first), without the fact-free leaf kinds; a list, not a
    generator, because a list is cheaper for the short walks this module does."""
    result = [node]
    walked, fields = WALKED_KINDS, NODE_FIELDS
    for current in result:  # extended while iterated: breadth first
        for name in fields[type(current)]:
            child: Any = getattr(current, name, None)
            if type(child) is list:
                for item in child:
                    if type(item) in walked:
                        result.append(item)
            elif type(child) in walked:
                result.append(child)
    return result


def span_of(node: ast.AST) -> Span:
    line = getattr(node, "lineno", 1)
    col = getattr(node, "col_offset", 0)
    end_line = getattr(node, "end_lineno", None) or line
    end_col = getattr(node, "end_col_offset", None)
    return Span(line, col + 1, end_line, (end_col if end_col is not None else col) + 1)


def module_name_for(path: str) -> str:
    parts = path[:-3].split("/") if path.endswith(".py") else path.split("/")
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(p for p in parts if p) or "__main__"
