"""LibCST helpers shared by the rules' edit builders: locating nodes, imports, list surgery.

LibCST keeps every comment, blank line and quote of the file (a lossless round trip), so
the builders change only the nodes they mean to change. Only builders import this module,
inside their bodies: importing LibCST costs more than a whole text-output scan.
"""

from __future__ import annotations

import functools
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar, cast

import libcst as cst
from libcst._nodes.internal import CodegenState
from libcst.metadata import CodeRange
from libcst.metadata.position_provider import PositionProvidingCodegenState

NodeT = TypeVar("NodeT", bound=cst.CSTNode)
NEWLINE_RE = re.compile(r"\r\n?|\n")  # what LibCST counts as a line break


@functools.lru_cache(maxsize=16)
def parse_module_once(source: str, config: cst.PartialParserConfig) -> cst.Module:
    """``cst.parse_module(source, config=config)``, parsed once for every fix that adds the
    same code (a helper) to files written alike: LibCST's trees are immutable."""
    return cst.parse_module(source, config=config)


class ParsedFile:
    """One file's LibCST tree, parsed once per scan, with positions and parents on demand.

    No metadata provider runs: resolving positions and parents for the whole module costs
    several times the parse. A lookup by line descends to the innermost statement of a
    block that holds the line, counting the line breaks in the code before it, and
    computes positions (LibCST's own, by its position-tracking code generator) for that
    statement only. Parents are known along the way down, and inside that statement.
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self.lines = text.splitlines()
        self.module = cst.parse_module(text)
        self._line_breaks: dict[cst.CSTNode, int] = {}
        self._scope_of_line: dict[int, cst.CSTNode | None] = {}
        self._scopes: dict[cst.CSTNode, dict[cst.CSTNode, CodeRange]] = {}
        self._positions: dict[cst.CSTNode, CodeRange] = {}
        self._parents: dict[cst.CSTNode, cst.CSTNode] = {}
        self._walked: set[cst.CSTNode] = set()
        self._written_code: _WrittenCode | None = None
        self._added: dict[int, tuple[cst.CSTNode, str]] = {}

    @property
    def written(self) -> _WrittenCode:
        """The code of every node of the file as LibCST writes the whole file, generated
        once per file."""
        if self._written_code is None:
            self._written_code = _WrittenCode(self.module)
        return self._written_code

    def code(self, module: cst.Module) -> str:
        """``module.code`` of this file's module with nodes replaced (:meth:`replace`).

        A fix rebuilds only the nodes on the paths to what it replaces: every statement it
        leaves untouched is the file's own object, whose code is taken from the file's
        (generated once per file), not generated again for each fix.
        """
        if (
            not module.has_trailing_newline
            or module.default_indent != self.module.default_indent
            or module.default_newline != self.module.default_newline
        ):
            return module.code
        written = self.written
        reuse = _ReuseWritten(written)
        parts = [module.code_for_node(line) for line in module.header]
        for statement in module.body:
            code = written.statement(statement, ())
            if code is None and id(statement) in self._added:
                code = self._added[id(statement)][1]
            elif code is None:
                code = module.code_for_node(cast(cst.CSTNode, statement.visit(reuse)))
                # Kept with the statement (its id names no other while it lives): a
                # statement that fixes add as it is (a helper parsed once) is generated once.
                self._added[id(statement)] = (statement, code)
            parts.append(code)
        parts.extend(module.code_for_node(line) for line in module.footer)
        # As LibCST writes an empty module that keeps its trailing newline.
        return "".join(parts) or module.default_newline

    def position(self, node: cst.CSTNode) -> CodeRange:
        """The position of a node found through this file (by line, or as a parent)."""
        return self._positions[node]

    def nodes_at(self, line: int, char_column: int | None = None) -> list[cst.CSTNode]:
        """Nodes starting at a 1-based line (and 1-based code-point column), outermost first."""
        positions = self._scope_positions(line)
        found = []
        for node, where in positions.items():
            if where.start.line != line:
                continue
            if char_column is not None and where.start.column != char_column - 1:
                continue
            found.append(node)
        found.sort(key=lambda n: _size(positions[n]), reverse=True)
        return found

    def function_at(self, name: str, line: int) -> cst.FunctionDef | None:
        """The ``def name`` whose name is on ``line``."""
        positions = self._scope_positions(line)
        for node in positions:
            if isinstance(node, cst.FunctionDef) and node.name.value == name:
                if positions[node.name].start.line == line:
                    return node
        return None

    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        if node not in self._parents:
            for scope in self._scopes:
                if node in self._scopes[scope]:
                    self._walk_parents(scope)
                    break
        return self._parents.get(node)

    def replace(self, old: cst.CSTNode, new: cst.CSTNode) -> cst.Module:
        return self.replace_all({old: new})

    def replace_all(self, replacements: Mapping[NodeT, cst.CSTNode]) -> cst.Module:
        """The module with nodes replaced (by identity), rebuilding only their ancestors."""
        on_path: set[int] = {id(self.module)}
        for old in replacements:
            ancestor = self.parent(old)
            if ancestor is None and old is not self.module:
                # Not found through this file: search the whole tree.
                return _replaced_anywhere(self.module, replacements)
            while ancestor is not None:
                on_path.add(id(ancestor))
                ancestor = self.parent(ancestor)
        replaced = self.module.visit(
            _PathReplacer(on_path, {id(old): new for old, new in replacements.items()})
        )
        assert isinstance(replaced, cst.Module)
        return replaced

    def _scope_positions(self, line: int) -> Mapping[cst.CSTNode, CodeRange]:
        if line not in self._scope_of_line:
            self._scope_of_line[line] = self._locate(line)
        scope = self._scope_of_line[line]
        return self._scopes[scope] if scope is not None else {}

    def _locate(self, line: int) -> cst.CSTNode | None:
        """Position the innermost statement of a block (or the module) holding ``line``."""
        found = self._search(self.module, 1, line, [])
        if not isinstance(found, _Found) or found.scope is None:
            return None
        statement, first_line, indents = found.scope
        if statement not in self._scopes:
            self._scopes[statement] = self._positions_of(statement, first_line, indents)
            self._positions.update(self._scopes[statement])
        return statement

    def _search(
        self, node: cst.CSTNode, first_line: int, line: int, indents: list[str]
    ) -> _Found | int:
        """Where ``line`` is among the children of ``node`` (which starts on ``first_line``),
        or, when it is past them, the line breaks in ``node``.

        Compound statements and blocks are searched rather than measured, so that only the
        code before the line is generated: a node's own tokens hold no line break.
        """
        cursor = first_line
        for child in node.children:
            known = self._line_breaks.get(child)
            if _holds_statements(child) and (known is None or line < cursor + known):
                inner = list(indents)
                if isinstance(child, (cst.IndentedBlock, cst.Match)):
                    # What indents what it holds (``match`` indents its cases).
                    default = self.module.default_indent
                    inner.append(default if child.indent is None else child.indent)
                found = self._search(child, cursor, line, inner)
                if isinstance(found, int):
                    cursor += found
                    continue
            else:
                breaks = self._breaks(child)
                if not cursor <= line < cursor + breaks:
                    cursor += breaks
                    continue
                found = _Found(None)
            self._parents[child] = node
            if found.scope is None and _starts_a_line(node, child):
                found = _Found((child, cursor, indents))
            return found
        self._line_breaks[node] = cursor - first_line
        return cursor - first_line

    def _breaks(self, node: cst.CSTNode) -> int:
        """Line breaks in a node's code."""
        if node not in self._line_breaks:
            self._line_breaks[node] = len(NEWLINE_RE.findall(self.written.of(node)))
        return self._line_breaks[node]

    def _positions_of(
        self, statement: cst.CSTNode, first_line: int, indents: list[str]
    ) -> dict[cst.CSTNode, CodeRange]:
        """Positions of a block's statement and its nodes, as for the whole module: the
        statement starts a line, inside the indentation of its enclosing blocks."""
        holder = _Positions()
        state = PositionProvidingCodegenState(
            default_indent=self.module.default_indent,
            default_newline=self.module.default_newline,
            provider=cast(Any, holder),
            indent_tokens=indents,
            line=first_line,
            column=0,
        )
        statement._codegen(state)
        return holder._computed

    def _walk_parents(self, scope: cst.CSTNode) -> None:
        if scope in self._walked:
            return
        self._walked.add(scope)
        stack = [scope]
        while stack:
            node = stack.pop()
            for child in node.children:
                self._parents[child] = node
                stack.append(child)


class _WrittenCode(CodegenState):
    """LibCST's code generation of a whole module that notes where each node's code starts
    and ends among the tokens, and the indentation each statement is written in."""

    def __init__(self, module: cst.Module) -> None:
        super().__init__(
            default_indent=module.default_indent, default_newline=module.default_newline
        )
        self.module = module  # keeps the nodes, and so their ids, alive
        self.spans: dict[int, tuple[int, int]] = {}  # id(node) -> tokens[start:end]
        self.indents: dict[int, tuple[str, ...]] = {}  # id(statement) -> indentation
        self._starts: list[int] = []
        self._codes: dict[int, str] = {}
        module._codegen(self)

    def before_codegen(self, node: cst.CSTNode) -> None:
        self._starts.append(len(self.tokens))
        if isinstance(node, cst.BaseStatement):
            self.indents[id(node)] = tuple(self.indent_tokens)

    def after_codegen(self, node: cst.CSTNode) -> None:
        self.spans[id(node)] = (self._starts.pop(), len(self.tokens))

    def pop_trailing_newline(self) -> None:
        pass  # each node's code as written where it is, the last one's newline included

    def of(self, node: cst.CSTNode) -> str:
        """The code of a node of the module (its lines indented as they are in the file)."""
        key = id(node)
        if key not in self._codes:
            start, end = self.spans[key]
            self._codes[key] = "".join(self.tokens[start:end])
        return self._codes[key]

    def statement(self, node: cst.CSTNode, indents: Sequence[str]) -> str | None:
        """The code of a statement of the module written with ``indents`` around it, when
        that is where it is in the file (None otherwise: it is generated)."""
        written = self.indents.get(id(node))
        if written is None or written != tuple(indents):
            return None
        return self.of(node)


@dataclass(frozen=True)
class _Written(cst.BaseStatement):
    """An untouched statement of the file standing in for itself in a rebuilt tree: its
    code is the file's, unless the rebuilt tree indents it differently."""

    original: cst.BaseStatement
    written: _WrittenCode

    def _visit_and_replace_children(self, visitor: cst.CSTVisitorT) -> _Written:
        return self

    def _codegen_impl(self, state: CodegenState) -> None:
        code = self.written.statement(self.original, state.indent_tokens)
        if code is None:
            self.original._codegen(state)
        else:
            state.add_token(code)


class _ReuseWritten(cst.CSTTransformer):
    """Puts each of the file's own statements in a rebuilt tree as :class:`_Written`,
    visiting only the rebuilt nodes that hold statements."""

    def __init__(self, written: _WrittenCode) -> None:
        super().__init__()
        self.written = written

    def on_visit(self, node: cst.CSTNode) -> bool:
        return id(node) not in self.written.indents and _holds_statements(node)

    def on_leave(  # type: ignore[override]
        self, original_node: cst.CSTNode, updated_node: cst.CSTNode
    ) -> cst.CSTNode:
        if (
            isinstance(original_node, cst.BaseStatement)
            and id(original_node) in self.written.indents
        ):
            return _Written(original_node, self.written)
        return updated_node


class _Positions:
    """Where LibCST's position-tracking code generator records positions."""

    def __init__(self) -> None:
        self._computed: dict[cst.CSTNode, CodeRange] = {}


class _Found:
    """A line found inside a node: the innermost statement of a block holding it (or a
    comment line between statements), with its first line and enclosing indentation."""

    def __init__(self, scope: tuple[cst.CSTNode, int, list[str]] | None) -> None:
        self.scope = scope


def _starts_a_line(holder: cst.CSTNode, child: cst.CSTNode) -> bool:
    """A statement of a block or of the module, or a comment or blank line between them."""
    return isinstance(holder, (cst.Module, cst.IndentedBlock)) and isinstance(
        child, (cst.BaseStatement, cst.EmptyLine)
    )


def _holds_statements(node: cst.CSTNode) -> bool:
    """Whether statements of a block may be inside: a block, a compound statement, or a
    clause of one (``else:``, ``except:``, ``finally:``, ``case:``)."""
    return isinstance(node, (cst.IndentedBlock, cst.BaseCompoundStatement)) or isinstance(
        getattr(node, "body", None), cst.IndentedBlock
    )


class _PathReplacer(cst.CSTTransformer):
    """Replaces nodes by identity, visiting only the nodes on their paths from the root."""

    def __init__(self, on_path: set[int], replacements: dict[int, cst.CSTNode]) -> None:
        super().__init__()
        self.on_path = on_path
        self.replacements = replacements

    def on_visit(self, node: cst.CSTNode) -> bool:
        return id(node) in self.on_path

    def on_leave(  # type: ignore[override]
        self, original_node: cst.CSTNode, updated_node: cst.CSTNode
    ) -> cst.CSTNode:
        return self.replacements.get(id(original_node), updated_node)


def _replaced_anywhere(module: cst.Module, replacements: Mapping[NodeT, cst.CSTNode]) -> cst.Module:
    by_id = {id(old): new for old, new in replacements.items()}

    class Replacer(cst.CSTTransformer):
        def on_leave(  # type: ignore[override]
            self, original_node: cst.CSTNode, updated_node: cst.CSTNode
        ) -> cst.CSTNode:
            return by_id.get(id(original_node), updated_node)

    replaced = module.visit(Replacer())
    assert isinstance(replaced, cst.Module)
    return replaced


def _size(where: CodeRange) -> tuple[int, int]:
    return (where.end.line - where.start.line, where.end.column - where.start.column)


def with_appended_arg(call: cst.Call, arg: cst.Arg) -> cst.Call:
    """Append a keyword argument, keeping the call's comma style and a trailing comma."""
    args = list(call.args)
    if not args:
        return call.with_changes(args=[arg])
    last = args[-1]
    multiline = "\n" in cst.Module(body=[]).code_for_node(call)
    if isinstance(last.comma, cst.Comma):
        # A trailing comma: the new argument inherits it, and the old last gets a middle comma.
        middle = args[-2].comma if len(args) > 1 and isinstance(args[-2].comma, cst.Comma) else None
        args[-1] = last.with_changes(comma=middle or last.comma)
        args.append(arg.with_changes(comma=last.comma))
    else:
        comma: cst.Comma = (
            args[-2].comma
            if len(args) > 1 and isinstance(args[-2].comma, cst.Comma)
            else cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
        )
        if not multiline and "\n" in cst.Module(body=[]).code_for_node(comma):
            comma = cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
        args[-1] = last.with_changes(comma=comma)
        args.append(arg)
    return call.with_changes(args=args)


def without_items(items: Sequence[NodeT], drop: Callable[[NodeT], bool]) -> list[NodeT]:
    """Remove items from a comma-separated sequence (params, elements) keeping its style."""
    kept = [item for item in items if not drop(item)]
    if not kept or len(kept) == len(items):
        return kept
    old_last = items[-1]
    if drop(old_last):
        # The new last item takes the old last one's comma (trailing or none).
        kept[-1] = kept[-1].with_changes(comma=old_last.comma)  # type: ignore[attr-defined]
    return kept


def string_quote(module: cst.Module, near: cst.CSTNode | None = None) -> str:
    """The quote character the code already uses (near a node if given, else anywhere in
    the file), `"` by default. Plain strings and f-strings count; docstrings do not."""

    class Finder(cst.CSTVisitor):
        def __init__(self) -> None:
            super().__init__()
            self.quote: str | None = None

        def on_visit(self, node: cst.CSTNode) -> bool:
            # The first quote decides: the rest of the tree is not visited.
            return self.quote is None and super().on_visit(node)

        def visit_SimpleString(self, node: cst.SimpleString) -> None:
            if self.quote is None and len(node.quote) == 1:
                inner = node.value[len(node.prefix) + 1 : -1]
                if "'" not in inner and '"' not in inner:  # no quote forced by the content
                    self.quote = node.quote

        def visit_FormattedString(self, node: cst.FormattedString) -> None:
            quote = node.start[len(node.prefix) :]
            if self.quote is None and len(quote) == 1:
                texts = "".join(
                    p.value for p in node.parts if isinstance(p, cst.FormattedStringText)
                )
                if "'" not in texts and '"' not in texts:
                    self.quote = quote

    for scope in (near, module) if near is not None else (module,):
        finder = Finder()
        scope.visit(finder)
        if finder.quote is not None:
            return finder.quote
    return '"'


def _is_import(statement: cst.CSTNode) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and any(
        isinstance(s, (cst.Import, cst.ImportFrom)) for s in statement.body
    )


def _module_name(node: cst.ImportFrom) -> str | None:
    if node.relative or node.module is None:
        return None
    return cst.Module(body=[]).code_for_node(node.module)


def imported_name(module: cst.Module, source: str, name: str) -> str | None:
    """The local name under which ``source.name`` is already imported at module level."""
    for statement in module.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if isinstance(small, cst.ImportFrom) and _module_name(small) == source:
                if isinstance(small.names, cst.ImportStar):
                    return name
                for alias in small.names:
                    if isinstance(alias.name, cst.Name) and alias.name.value == name:
                        if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                            return alias.asname.name.value
                        return name
    return None


def add_import(
    module: cst.Module,
    source: str,
    names: Sequence[str],
    first_party: frozenset[str] = frozenset(),
) -> cst.Module:
    """Import ``names`` from ``source`` once: merged into an existing ``from source import``
    line (sorted in if that line is sorted), else a new line in the third-party group of the
    leading imports, in alphabetical place (isort/ruff order), or after the last import."""
    missing = [n for n in names if imported_name(module, source, n) is None]
    if not missing:
        return module
    body = list(module.body)
    for index, statement in enumerate(body):
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for position, small in enumerate(statement.body):
            if (
                isinstance(small, cst.ImportFrom)
                and _module_name(small) == source
                and not isinstance(small.names, cst.ImportStar)
            ):
                merged = _merge_names(small, missing)
                small_body = list(statement.body)
                small_body[position] = merged
                body[index] = statement.with_changes(body=small_body)
                return module.with_changes(body=body)
    line = cst.parse_statement(
        f"from {source} import {', '.join(sorted(missing))}", config=module.config_for_parsing
    )
    insert_at, opens_group = _sorted_import_index(body, source, first_party)
    if insert_at is None:
        body.insert(_import_insertion_index(body), line)
    elif not opens_group:
        body.insert(insert_at, line)
    else:
        following = body[insert_at]
        assert isinstance(following, cst.SimpleStatementLine)
        # The new line opens the group, so it takes over the group's leading blank/comment lines.
        line = line.with_changes(leading_lines=following.leading_lines)
        body[insert_at] = following.with_changes(leading_lines=[])
        body.insert(insert_at, line)
    return module.with_changes(body=body)


def _import_section(statement: cst.SimpleStatementLine, first_party: frozenset[str]) -> str:
    small = statement.body[0]
    if isinstance(small, cst.ImportFrom):
        name = _module_name(small)
        if name is None:
            return "first-party"
    elif isinstance(small, cst.Import):
        name = cst.Module(body=[]).code_for_node(small.names[0].name)
    else:
        return "other"
    top = name.split(".", 1)[0]
    if top == "__future__":
        return "future"
    if top in sys.stdlib_module_names:
        return "stdlib"
    return "first-party" if top in first_party else "third-party"


def _sorted_import_index(
    body: Sequence[cst.CSTNode], source: str, first_party: frozenset[str]
) -> tuple[int | None, bool]:
    """Where ``from source import ...`` goes among the leading third-party imports, and
    whether it goes first in that group (before the statement now at that index)."""
    top = source.split(".", 1)[0]
    if top in first_party:
        return None, False
    third_party = []
    for index, statement in enumerate(body):
        if _is_import(statement):
            assert isinstance(statement, cst.SimpleStatementLine)
            if _import_section(statement, first_party) == "third-party":
                third_party.append((index, statement))
        elif not _is_docstring(statement, index):
            break
    for position, (index, statement) in enumerate(third_party):
        small = statement.body[0]
        if (
            isinstance(small, cst.ImportFrom)
            and (_module_name(small) or "").lower() > source.lower()
        ):
            opens = position == 0 or third_party[position - 1][0] != index - 1
            return index, opens or bool(statement.leading_lines)
    if third_party:
        return third_party[-1][0] + 1, False
    return None, False


def _import_insertion_index(body: Sequence[cst.CSTNode]) -> int:
    """After the last import of the leading import block (after the docstring if none)."""
    insert_at = 0
    for index, statement in enumerate(body):
        if _is_import(statement):
            insert_at = index + 1
        elif _is_docstring(statement, index):
            insert_at = max(insert_at, 1)
        else:
            break
    return insert_at


def _is_docstring(statement: cst.CSTNode, index: int) -> bool:
    return index == 0 and is_docstring_statement(statement)


def is_docstring_statement(statement: cst.CSTNode) -> bool:
    """Whether the statement is a bare string (a docstring when it comes first)."""
    return (
        isinstance(statement, cst.SimpleStatementLine)
        and len(statement.body) == 1
        and isinstance(statement.body[0], cst.Expr)
        and isinstance(statement.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
    )


def _merge_names(node: cst.ImportFrom, names: Sequence[str]) -> cst.ImportFrom:
    aliases = list(node.names)  # type: ignore[arg-type]
    existing = [a.name.value for a in aliases if isinstance(a.name, cst.Name)]
    is_sorted = existing == sorted(existing)
    middle_comma: cst.Comma = next(
        (a.comma for a in aliases[:-1] if isinstance(a.comma, cst.Comma)),
        cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")),
    )
    trailing = aliases[-1].comma
    aliases[-1] = aliases[-1].with_changes(comma=middle_comma)
    for name in names:
        aliases.append(cst.ImportAlias(name=cst.Name(name), comma=middle_comma))
    if is_sorted:
        aliases.sort(key=lambda a: a.name.value if isinstance(a.name, cst.Name) else "")
    aliases = [a.with_changes(comma=middle_comma) for a in aliases]
    aliases[-1] = aliases[-1].with_changes(comma=trailing)
    return node.with_changes(names=aliases)


def insert_after_imports(
    module: cst.Module, statements: Sequence[cst.SimpleStatementLine | cst.BaseCompoundStatement]
) -> cst.Module:
    """Insert module-level statements right after the import block."""
    body = list(module.body)
    index = _import_insertion_index(body)
    body[index:index] = statements
    return module.with_changes(body=body)


def name_is_used(module: cst.CSTNode, name: str) -> bool:
    """Whether ``name`` is read anywhere outside import statements."""
    return name_uses(module, name, enough=1) > 0


def name_uses(module: cst.CSTNode, name: str, enough: int | None = None) -> int:
    """How many times ``name`` appears outside import statements (counting stops at
    ``enough``)."""

    class Finder(cst.CSTVisitor):
        found = 0

        def on_visit(self, node: cst.CSTNode) -> bool:
            return (enough is None or self.found < enough) and super().on_visit(node)

        def visit_Import(self, node: cst.Import) -> bool:
            return False

        def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
            return False

        def visit_Name(self, node: cst.Name) -> None:
            if node.value == name:
                self.found += 1

    finder = Finder()
    module.visit(finder)
    return finder.found


def names_in(node: cst.CSTNode) -> list[str]:
    """The names an expression reads, in order of first use (``a.b`` reads ``a`` only)."""

    class Finder(cst.CSTVisitor):
        def __init__(self) -> None:
            self.names: list[str] = []

        def visit_Name(self, name: cst.Name) -> None:
            if name.value not in self.names:
                self.names.append(name.value)

        def visit_Attribute(self, attribute: cst.Attribute) -> bool:
            attribute.value.visit(self)
            return False

    finder = Finder()
    node.visit(finder)
    return finder.names


def remove_unused_import(module: cst.Module, local_name: str) -> cst.Module:
    """Drop the top-level import that binds ``local_name`` if nothing reads it any more."""
    if name_is_used(module, local_name):
        return module

    def binds(alias: cst.ImportAlias) -> bool:
        if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
            return alias.asname.name.value == local_name
        if isinstance(alias.name, cst.Name):
            return alias.name.value == local_name
        return False

    body = list(module.body)
    for index, statement in enumerate(body):
        if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
            continue
        small = statement.body[0]
        if isinstance(small, (cst.Import, cst.ImportFrom)) and not isinstance(
            small.names, cst.ImportStar
        ):
            aliases = list(small.names)
            if not any(binds(a) for a in aliases):
                continue
            kept = without_items(aliases, binds)
            if kept:
                body[index] = statement.with_changes(body=[small.with_changes(names=kept)])
                return module.with_changes(body=body)
            del body[index]
            opened_group = index == 0 or bool(statement.leading_lines)
            if opened_group and index < len(body):
                # The next statement opens the group now (or the group is gone): it takes
                # the removed line's leading lines, so no stray blank line is left behind.
                following = body[index]
                body[index] = following.with_changes(leading_lines=statement.leading_lines)
            return module.with_changes(body=body)
    return module


def plain_import_name(module: cst.Module, source: str) -> str | None:
    """The local name of a module-level ``import source`` (``import json as j``: ``j``)."""
    for statement in module.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if not isinstance(small, cst.Import):
                continue
            for alias in small.names:
                if cst.Module(body=[]).code_for_node(alias.name) != source:
                    continue
                if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                    return alias.asname.name.value
                return source
    return None


def add_plain_import(module: cst.Module, source: str) -> cst.Module:
    """``import source`` (a standard-library module) once, in isort/ruff place among the
    leading standard-library imports, else as its own group at the top of the imports."""
    if plain_import_name(module, source) is not None:
        return module
    body = list(module.body)
    line = cst.parse_statement(f"import {source}", config=module.config_for_parsing)
    stdlib: list[int] = []
    first_import: int | None = None
    for index, statement in enumerate(body):
        if _is_import(statement):
            assert isinstance(statement, cst.SimpleStatementLine)
            section = _import_section(statement, frozenset())
            if section == "future":
                continue
            if first_import is None:
                first_import = index
            if section == "stdlib":
                stdlib.append(index)
        elif not _is_docstring(statement, index):
            break
    if stdlib:
        for position, index in enumerate(stdlib):
            statement = body[index]
            assert isinstance(statement, cst.SimpleStatementLine)
            # isort/ruff order: plain imports first, then ``from`` imports, each sorted.
            if isinstance(statement.body[0], cst.ImportFrom) or (
                _import_sort_key(statement) > source.lower()
            ):
                if position == 0 or statement.leading_lines:
                    # The new line opens the group: it takes over the blank/comment lines.
                    line = line.with_changes(leading_lines=statement.leading_lines)
                    body[index] = statement.with_changes(leading_lines=[])
                body.insert(index, line)
                return module.with_changes(body=body)
        body.insert(stdlib[-1] + 1, line)
        return module.with_changes(body=body)
    if first_import is not None:
        following = body[first_import]
        assert isinstance(following, cst.SimpleStatementLine)
        line = line.with_changes(leading_lines=following.leading_lines)
        body[first_import] = following.with_changes(leading_lines=[cst.EmptyLine()])
        body.insert(first_import, line)
        return module.with_changes(body=body)
    body.insert(_import_insertion_index(body), line)
    return module.with_changes(body=body)


def _import_sort_key(statement: cst.SimpleStatementLine) -> str:
    small = statement.body[0]
    if isinstance(small, cst.ImportFrom):
        return (_module_name(small) or "").lower()
    if isinstance(small, cst.Import):
        return cst.Module(body=[]).code_for_node(small.names[0].name).lower()
    return ""
