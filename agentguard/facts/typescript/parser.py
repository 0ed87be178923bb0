"""The TypeScript and JavaScript parser: tree-sitter with the TypeScript grammar, the TSX
grammar for files that may hold JSX (``.tsx``, and JavaScript, whose ``<`` is never a type
assertion). One parser per grammar per process."""

from __future__ import annotations

import functools
from importlib.metadata import PackageNotFoundError, version

import tree_sitter
import tree_sitter_typescript

# Suffixes read with the TSX grammar: JSX may appear in them, and a type assertion ``<T>x``
# (which the TSX grammar cannot read) cannot.
_TSX_SUFFIXES = (".tsx", ".jsx", ".js", ".mjs", ".cjs")


@functools.lru_cache(maxsize=2)
def _parser(tsx: bool) -> tree_sitter.Parser:
    grammar = (
        tree_sitter_typescript.language_tsx()
        if tsx
        else tree_sitter_typescript.language_typescript()
    )
    return tree_sitter.Parser(tree_sitter.Language(grammar))


def parse(source: bytes, path: str) -> tree_sitter.Tree:
    """The syntax tree of one file; a syntax error leaves an ``ERROR`` node where it is and
    the rest of the file read (tree-sitter recovers)."""
    return _parser(path.endswith(_TSX_SUFFIXES)).parse(source)


def grammar_version() -> str:
    """The parser's and the grammar's versions: part of every TypeScript file's cache key,
    since another grammar may read the same bytes otherwise."""
    found = []
    for package in ("tree-sitter", "tree-sitter-typescript"):
        try:
            found.append(f"{package} {version(package)}")
        except PackageNotFoundError:  # pragma: no cover - installed with agentguard
            found.append(f"{package} ?")
    return ", ".join(found)
