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
from collections.abc import Callable, Iterator
from itertools import accumulate
from typing import Any

from agentguard.diagnostics import Span
from agentguard.facts.module_facts import (
    LOADED_EMPTY_DICT,
    LOADED_EMPTY_LIST,
    Assignment,
    Call,
    ClassDef,
    Const,
    Decorator,
    Function,
    Handler,
    Loop,
    ModuleFacts,
    RawErrorUse,
    StatusCheck,
    Suppression,
    TryBlock,
    Value,
)
from agentguard.facts.static_strings import enum_member_value

TEXT_LIMIT = 240
SUPPRESSION_RE = re.compile(
    r"#\s*agentguard:\s*ignore(?:\[(?P<codes>[A-Za-z0-9_,\s-]*)\])?(?P<reason>[^#]*)"
)
_TRACEBACK_TEXT = {
    "traceback.format_exc",
    "traceback.format_exception",
    "traceback.format_exception_only",
    "traceback.format_tb",
}
_NOT_A_DESTINATION = {
    "str",
    "repr",
    "type",
    "isinstance",
    "format",
    "getattr",
    "hasattr",
    "len",
    "print",
}
_RAW_ATTRS = {"args", "message", "msg", "strerror", "detail", "details"}
# pathlib's classes, and what gives another path: ``ROOT / name``, ``ROOT.joinpath(name)``,
# ``Path.home() / name``, ``Path(__file__).parent / "notes"``. Such an expression is typed
# ``pathlib.Path``, so that ``(ROOT / name).write_text(body)`` is a call of
# ``pathlib.Path.write_text``. (``path.parent.mkdir(...)`` itself stays unresolved: it would
# name the folder made before the file written as the tool's write.)
PATH_TYPE = "pathlib.Path"
_PATH_CLASSES = frozenset(
    f"pathlib.{name}"
    for name in ("Path", "PurePath", "PosixPath", "WindowsPath", "PurePosixPath", "PureWindowsPath")
)
_PATH_METHODS = frozenset(
    {
        "joinpath",
        "with_name",
        "with_suffix",
        "with_stem",
        "resolve",
        "absolute",
        "expanduser",
        "home",
        "cwd",
    }
)
# What a framework hands a tool or a node that carries the user's own dependencies in an
# attribute typed by its first type argument: ``ctx: RunContext[Deps]`` (Pydantic AI) makes
# ``ctx.deps`` a ``Deps``; ``RunContextWrapper[T]`` (OpenAI Agents SDK), ``Runtime[T]``
# (LangGraph) and ``ToolRuntime[T, S]`` (LangChain) hand it over as ``.context``. So
# ``ctx.deps.http.post(...)`` is a call on the field ``Deps`` declares for ``http``.
_CONTEXT_CARRIERS = {
    "RunContext": "deps",
    "RunContextWrapper": "context",
    "Runtime": "context",
    "ToolRuntime": "context",
}
_CONTEXT_PACKAGES = frozenset({"pydantic_ai", "agents", "langgraph", "langchain"})
_CARRIED_ATTRIBUTES = frozenset(_CONTEXT_CARRIERS.values())
_STATUS_SUBJECT = re.compile(r"(?i)(status|state)")
_TOOL_SCHEMA_KEYS = ({"type", "function"}, {"name", "input_schema"}, {"name", "parameters"})


def module_name_for(path: str) -> str:
    parts = path[:-3].split("/") if path.endswith(".py") else path.split("/")
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(p for p in parts if p) or "__main__"


def is_test_path(path: str) -> bool:
    name = path.rsplit("/", 1)[-1]
    return (
        name.startswith("test_")
        or name.endswith("_test.py")
        or name == "conftest.py"
        or "/tests/" in f"/{path}"
        or "/test/" in f"/{path}"
    )


def extract(source: bytes, path: str, is_test: bool | None = None) -> ModuleFacts:
    """Parse ``source`` and return its facts. Raises SyntaxError/ValueError on bad input.

    ``is_test``: whether the file is a test (the config's ``test-paths``); by default, by
    its name (``is_test_path``)."""
    # A parse and its facts allocate hundreds of thousands of objects, none in a reference
    # cycle, so the cyclic collector finds nothing here; it would scan them again and again
    # (a seventh of the time). Reference counting still frees every one.
    collecting = gc.isenabled()
    gc.disable()
    try:
        tree = ast.parse(source, filename=path, type_comments=False)
        extractor = _Extractor(source, path, is_test_path(path) if is_test is None else is_test)
        extractor.run(tree)
        facts = extractor.facts
        if b"agentguard:" in source:
            facts.suppressions = list(_suppressions(source))
        return facts
    finally:
        if collecting:
            gc.enable()


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
_FIELDS: dict[type, tuple[str, ...]] = {
    kind: tuple(f for f in kind._fields if f not in _SCALAR_FIELDS) for kind in _node_types()
}
_WALKED = frozenset(kind for kind in _FIELDS if not issubclass(kind, _LEAF_KINDS))
# What a search for names, calls and attributes queues: names are taken when found, and a
# constant holds none of the three.
_QUEUED = _WALKED - {ast.Name, ast.Constant}


def _walk(node: ast.AST) -> list[ast.AST]:
    """``ast.walk`` order (breadth first), without the fact-free leaf kinds; a list, not a
    generator, because a list is cheaper for the short walks this module does."""
    result = [node]
    walked, fields = _WALKED, _FIELDS
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


# Values made here hold the one shared, read-only empty list or dict (the ones facts read
# back from a pickle hold) for each empty field: most of a Value's seven containers stay
# empty, and making them was about a quarter of the memory extracted facts take.
NO_NAMES: list[str] = LOADED_EMPTY_LIST
NO_VALUES: list[Value] = LOADED_EMPTY_LIST
NO_ITEMS: dict[str, Value] = LOADED_EMPTY_DICT
NO_IDS: list[int] = LOADED_EMPTY_LIST


def _leaf_value(
    kind: str, text: str, const: Const, qualname: str | None, names: list[str], span: Span
) -> Value:
    """A constant or a name: nothing nested, nothing called, no attributes read."""
    return Value(
        kind,
        text,
        const,
        qualname,
        names,
        NO_NAMES,
        NO_NAMES,
        NO_ITEMS,
        NO_VALUES,
        span,
        NO_ITEMS,
        NO_VALUES,
    )


def span_of(node: ast.AST) -> Span:
    line = getattr(node, "lineno", 1)
    col = getattr(node, "col_offset", 0)
    end_line = getattr(node, "end_lineno", None) or line
    end_col = getattr(node, "end_col_offset", None)
    return Span(line, col + 1, end_line, (end_col if end_col is not None else col) + 1)


def _repeats_same_attempt(loop: ast.For | ast.AsyncFor, target: str) -> bool:
    """``for delay in (0, 1, 2, 4): sleep(delay); try: return post(...) except ...``: a loop
    over a schedule of waits is a retry when the guarded code never reads the loop variable
    (a batch loop passes each item to the call) and success leaves the loop."""
    tries = [n for n in _walk(loop) if type(n) is ast.Try]
    if not tries:
        return False
    exits = any(
        isinstance(n, (ast.Return, ast.Break)) for t in tries for s in t.body for n in _walk(s)
    )
    reads_target = any(
        isinstance(n, ast.Name) and n.id == target for t in tries for s in t.body for n in _walk(s)
    )
    return exits and not reads_target


def _exits_on_success(loop: ast.For | ast.AsyncFor | ast.While) -> bool:
    """A retry loop leaves once an attempt succeeds: a ``return``/``break`` in a guarded
    body (or its ``else``, or right after the ``try``), or a flag the ``while`` test reads
    set there. A poller or worker loop (``while True: try: poll()``) never leaves on
    success: it is not retrying anything."""
    flags = (
        {n.id for n in _walk(loop.test) if isinstance(n, ast.Name)}
        if isinstance(loop, ast.While)
        else set()
    )

    def leaves(statements: list[ast.stmt]) -> bool:
        for statement in statements:
            for node in _walk(statement):
                if isinstance(node, (ast.Return, ast.Break)):
                    return True
                if isinstance(node, ast.Assign) and any(
                    isinstance(t, ast.Name) and t.id in flags for t in node.targets
                ):
                    return True
        return False

    def tries_in(statements: list[ast.stmt]) -> Iterator[tuple[ast.Try, list[ast.stmt]]]:
        for index, statement in enumerate(statements):
            if isinstance(statement, ast.Try):
                yield statement, statements[index + 1 : index + 2]
            if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            for field in ("body", "orelse", "finalbody"):
                inner = getattr(statement, field, None)
                if isinstance(inner, list) and not isinstance(statement, ast.Try):
                    yield from tries_in(inner)

    for node, following in tries_in(loop.body):
        if leaves(node.body) or leaves(node.orelse) or leaves(following):
            return True
    return False


class _Scope:
    __slots__ = ("function", "loops", "order", "types")

    def __init__(self, function: Function | None) -> None:
        self.function = function
        self.types: dict[str, str] = {}
        self.loops: list[int] = []
        self.order = 0


class _Extractor:
    def __init__(self, source: bytes, path: str, is_test: bool) -> None:
        self.source = source
        # Most files are ASCII: their text is sliced from one decoded copy.
        self._ascii_text = source.decode("ascii") if source.isascii() else None
        self.path = path
        self.module = module_name_for(path)
        self.facts = ModuleFacts(path=path, module=self.module, is_test=is_test)
        # Where each line starts: after every b"\n", summed in C.
        self._line_offsets = list(
            accumulate(map((1).__add__, map(len, source.split(b"\n")[:-1])), initial=0)
        )
        self.facts.lines = len(self._line_offsets)
        self.module_scope = _Scope(None)
        self.scopes: list[_Scope] = [self.module_scope]
        # The innermost of ``scopes``, kept in step with it: read at nearly every node.
        self.scope = self.module_scope
        self.class_stack: list[ClassDef] = []
        self.containers: list[tuple[str, str]] = []  # ("class" | "def", qualname)
        self.top_level: set[str] = set()
        self._next_id = 0
        self._spans: dict[tuple[int, int, int | None, int | None], Span] = {}
        self._texts: dict[str, str] = {}
        self._values: dict[int, Value] = {}
        self._names: dict[str, str] = {}

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
        self._visit_children(node, _FIELDS[type(node)])

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

    # ------------------------------------------------------------------ helpers
    def text(self, node: ast.AST, limit: int = TEXT_LIMIT) -> str:
        try:
            offsets = self._line_offsets
            start = offsets[node.lineno - 1] + node.col_offset  # type: ignore[attr-defined]
            end = offsets[node.end_lineno - 1] + node.end_col_offset  # type: ignore[attr-defined]
        except (AttributeError, IndexError, TypeError):
            return ""
        text = self._slice(start, end, limit)
        # A node's text is asked for at every nesting level it is a value in: keep one copy.
        return self._texts.setdefault(text, text)

    def _slice(self, start: int, end: int, limit: int) -> str:
        """The source between two byte offsets, cut after ``limit`` bytes."""
        text_source = self._ascii_text
        if text_source is not None:
            # Characters are bytes here: a slice of the decoded text is the same string,
            # without a bytes object to make and decode per slice.
            if min(end, len(text_source)) - start > limit:
                return text_source[start : start + limit] + "..."
            return text_source[start:end]
        source = self.source
        # The slice's own length, without slicing: a long text (a large dict literal) is
        # asked for at every nesting level, and only its first ``limit`` bytes are kept.
        if min(end, len(source)) - start > limit:
            raw = source[start : start + limit] + b"..."
        else:
            raw = source[start:end]
        return raw.decode("utf-8", "replace")

    def span(self, node: ast.AST) -> Span:
        """The node's span; equal spans are one shared (frozen) object, which keeps the
        facts smaller in memory and in the cache (pickle stores a repeated object once)."""
        try:
            line = node.lineno  # type: ignore[attr-defined]
            column = node.col_offset  # type: ignore[attr-defined]
            end_line = node.end_lineno  # type: ignore[attr-defined]
            end_column = node.end_col_offset  # type: ignore[attr-defined]
        except AttributeError:
            return span_of(node)
        # Keyed by the raw position (a tuple hashes in C, a Span's hash is Python code),
        # and a Span built only the first time a position is seen.
        key = (line, column, end_line, end_column)
        known = self._spans.get(key)
        if known is None:
            if end_line is None or end_column is None:
                known = span_of(node)
            else:
                known = tuple.__new__(Span, (line, column + 1, end_line, end_column + 1))
            self._spans[key] = known
        return known

    def _text_and_span(self, node: ast.AST) -> tuple[str, Span]:
        """``text(node)`` and ``span(node)``, reading the node's position once: every Value
        needs both, and reading an ``ast`` node's attributes is much of what they cost."""
        try:
            line = node.lineno  # type: ignore[attr-defined]
            column = node.col_offset  # type: ignore[attr-defined]
            end_line = node.end_lineno  # type: ignore[attr-defined]
            end_column = node.end_col_offset  # type: ignore[attr-defined]
            offsets = self._line_offsets
            start = offsets[line - 1] + column
            end = offsets[end_line - 1] + end_column
        except (AttributeError, IndexError, TypeError):
            return self.text(node), self.span(node)
        ascii_text = self._ascii_text
        if ascii_text is not None and min(end, len(ascii_text)) - start <= TEXT_LIMIT:
            text = ascii_text[start:end]  # what ``_slice`` gives, without a call
        else:
            text = self._slice(start, end, TEXT_LIMIT)
        key = (line, column, end_line, end_column)
        span = self._spans.get(key)
        if span is None:
            # ``tuple.__new__`` directly: Span's own call goes through Python code.
            span = self._spans[key] = tuple.__new__(
                Span, (line, column + 1, end_line, end_column + 1)
            )
        return self._texts.setdefault(text, text), span

    def new_id(self) -> int:
        self._next_id += 1
        return self._next_id

    def resolve(self, node: ast.AST) -> str | None:
        """Dotted, import-resolved name of a Name/Attribute chain (None for other shapes)."""
        if isinstance(node, ast.Name):
            return self.resolve_name(node.id)
        if isinstance(node, ast.Attribute):
            if node.attr in _CARRIED_ATTRIBUTES and type(node.value) is ast.Name:
                carried = f"{node.value.id}.{node.attr}"
                for scope in reversed(self.scopes):
                    if carried in scope.types:
                        return scope.types[carried]
            base = self.resolve(node.value)
            if base is None:
                value = node.value
                if isinstance(value, ast.Call):
                    func = value.func
                    # ``ROOT.joinpath(name).write_text``: a path method's result is a path.
                    if not (
                        isinstance(func, ast.Attribute)
                        and func.attr in _PATH_METHODS
                        and self.path_typed(func.value)
                    ):
                        inner = self.resolve(func)
                        return f"{inner}().{node.attr}" if inner else None
                elif not self.path_typed(value):
                    return None
                return sys.intern(f"{PATH_TYPE}.{node.attr}")
            # Interned: the same dotted name recurs at every call site, and one shared
            # string is stored once in memory and once per cache entry.
            return sys.intern(f"{base}.{node.attr}")
        return None

    def path_typed(self, node: ast.AST) -> bool:
        """Whether the expression is a ``pathlib`` path: a path class called, a name typed as
        one, or a path joined (``/``), derived (``joinpath``, ``with_suffix``...) or the
        folder of one (``.parent``)."""
        kind = type(node)
        if kind is ast.BinOp:
            return type(node.op) is ast.Div and (  # type: ignore[attr-defined]
                self.path_typed(node.left) or self.path_typed(node.right)  # type: ignore[attr-defined]
            )
        if kind is ast.Call:
            func = node.func  # type: ignore[attr-defined]
            if type(func) is ast.Attribute and func.attr in _PATH_METHODS:
                return self.path_typed(func.value)
            return self.resolve(func) in _PATH_CLASSES
        if kind is ast.Attribute and node.attr == "parent":  # type: ignore[attr-defined]
            return self.path_typed(node.value)  # type: ignore[attr-defined]
        return (kind is ast.Name or kind is ast.Attribute) and self.resolve(node) == PATH_TYPE

    def _callee_name(self, func: ast.expr) -> str | None:
        # ``Agent[Deps, str](...)`` constructs an ``Agent``.
        resolved = self.resolve(func)
        if resolved is None and isinstance(func, ast.Subscript):
            resolved = self.resolve(func.value)
        return resolved

    def resolve_name(self, name: str) -> str:
        # Memoised like Values (and forgotten with them): most names are read many times.
        known = self._names.get(name)
        if known is None:
            known = self._names[name] = self._resolve_name(name)
        return known

    def _resolve_name(self, name: str) -> str:
        for scope in reversed(self.scopes):
            if name in scope.types:
                return scope.types[name]
        if name in self.facts.imports:
            return self.facts.imports[name]
        if name in self.top_level:
            return sys.intern(f"{self.module}.{name}")
        return name

    def value(self, node: ast.AST | None) -> Value:
        """The node's Value; memoised, because a nested call's arguments are asked for at
        every level (the outer call's arguments, then the inner call's own), which made
        value construction quadratic in nesting depth. The memo is dropped at every
        statement and whenever a name's type changes, the only times a Value could differ.
        """
        if node is None:
            return Value(kind="const", text="None")
        key = id(node)
        known = self._values.get(key)
        if known is None:
            known = self._values[key] = self._value(node)
        return known

    def _forget_values(self) -> None:
        self._values.clear()
        self._names.clear()

    def _value(self, node: ast.AST) -> Value:
        text, span = self._text_and_span(node)
        kind = type(node)
        if kind is ast.Constant:
            const = node.value  # type: ignore[attr-defined]
            if isinstance(const, bytes):
                const = const.decode("latin-1")
            if not isinstance(const, (str, int, float, bool)) and const is not None:
                const = str(const)
            return _leaf_value("const", text, const, None, NO_NAMES, span)
        if kind is ast.Name:
            name = node.id  # type: ignore[attr-defined]
            return _leaf_value("name", text, None, self.resolve_name(name), [name], span)
        names, calls, attrs = self._reads(node)
        value_kind, qualname = "other", None
        items: dict[str, Value] = NO_ITEMS
        elements: list[Value] = NO_VALUES
        call_kwargs: dict[str, Value] = NO_ITEMS
        call_args: list[Value] = NO_VALUES
        if kind is ast.Attribute:
            value_kind, qualname = "attr", self.resolve(node)
        elif kind is ast.Call:
            call: ast.Call = node  # type: ignore[assignment]
            value_kind, qualname = "call", self._callee_name(call.func)
            if call.args:
                call_args = [self.value(a) for a in call.args[:6]]
            if call.keywords:
                call_kwargs = {k.arg: self.value(k.value) for k in call.keywords if k.arg}
        elif kind is ast.Dict:
            value_kind = "dict"
            items = {}
            for key, val in zip(node.keys, node.values, strict=False):  # type: ignore[attr-defined]
                if type(key) is ast.Constant and isinstance(key.value, str):
                    items[key.value] = self.value(val)
        elif kind is ast.List or kind is ast.Tuple or kind is ast.Set:
            value_kind = "list"
            elements = [self.value(e) for e in node.elts[:64]]  # type: ignore[attr-defined]
        elif kind is ast.JoinedStr:
            value_kind = "fstring"
        elif kind is ast.Lambda:
            value_kind = "lambda"
        # Positional: keyword arguments cost a dataclass ``__init__`` more than the rest of
        # its work, and there are about 700,000 Values in a large project.
        return Value(
            value_kind,
            text,
            None,
            qualname,
            names or NO_NAMES,
            calls or NO_NAMES,
            attrs or NO_NAMES,
            items,
            elements,
            span,
            call_kwargs,
            call_args,
        )

    def _reads(self, node: ast.AST) -> tuple[list[str], list[str], list[str]]:
        """The names, callees and attribute names under ``node``, each in ``ast.walk``
        order (breadth first)."""
        names: list[str] = []
        calls: list[str] = []
        attrs: list[str] = []
        queue = [node]
        fields, queued = _FIELDS, _QUEUED
        Name, Call, Attribute = ast.Name, ast.Call, ast.Attribute
        for current in queue:  # extended while iterated: breadth first
            kind = type(current)
            if kind is Call:
                callee = self.resolve(current.func)  # type: ignore[attr-defined]
                if callee:
                    calls.append(callee)
            elif kind is Attribute:
                attrs.append(current.attr)  # type: ignore[attr-defined]
            for field in fields[kind]:
                child: Any = getattr(current, field, None)
                if type(child) is list:
                    for item in child:
                        if type(item) is Name:
                            # A name has no children: taking it when found keeps the
                            # breadth-first order among names without queueing it.
                            names.append(item.id)
                        elif type(item) in queued:
                            queue.append(item)
                elif type(child) is Name:
                    names.append(child.id)
                elif type(child) in queued:
                    queue.append(child)
        return names, calls, attrs

    # ------------------------------------------------------------------ module
    def run(self, tree: ast.Module) -> None:
        for stmt in tree.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                self.top_level.add(stmt.name)
            elif isinstance(stmt, ast.Assign):
                for target in stmt.targets:
                    if isinstance(target, ast.Name):
                        self.top_level.add(target.id)
        self.visit(tree)

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if alias.asname:
                self.facts.imports[alias.asname] = alias.name
            else:
                head = alias.name.split(".")[0]
                self.facts.imports[head] = head

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        base = node.module or ""
        if node.level:
            parts = self.module.split(".")
            is_package = self.path.endswith("__init__.py")
            keep = len(parts) - node.level + (1 if is_package else 0)
            prefix = ".".join(parts[: max(keep, 0)])
            base = ".".join(p for p in (prefix, base) if p)
        for alias in node.names:
            if alias.name == "*":
                continue
            self.facts.imports[alias.asname or alias.name] = (
                f"{base}.{alias.name}" if base else alias.name
            )

    # ------------------------------------------------------------------ definitions
    def _qualname(self, name: str) -> str:
        if not self.containers:
            return f"{self.module}.{name}"
        kind, outer = self.containers[-1]
        return f"{outer}.{name}" if kind == "class" else f"{outer}.<locals>.{name}"

    def _decorator(self, node: ast.expr) -> Decorator:
        if isinstance(node, ast.Call):
            return Decorator(
                qualname=self.resolve(node.func) or self.text(node.func),
                text=self.text(node),
                called=True,
                args=[self.value(a) for a in node.args],
                kwargs={k.arg: self.value(k.value) for k in node.keywords if k.arg},
                span=self.span(node),
            )
        return Decorator(
            qualname=self.resolve(node) or self.text(node),
            text=self.text(node),
            called=False,
            span=self.span(node),
        )

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        qualname = self._qualname(node.name)
        decorators = [self._decorator(d) for d in node.decorator_list]
        for dec in node.decorator_list:
            self._visit_decorator_calls(dec)
        first_line = min([d.lineno for d in node.decorator_list] + [node.lineno])
        span = self.span(node)
        name_col = node.col_offset + (6 if isinstance(node, ast.AsyncFunctionDef) else 0) + 5
        args = node.args
        params = [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]
        if args.vararg:
            params.append(args.vararg.arg)
        if args.kwarg:
            params.append(args.kwarg.arg)
        in_class = bool(self.containers) and self.containers[-1][0] == "class"
        function = Function(
            qualname=qualname,
            name=node.name,
            module=self.module,
            class_name=self.class_stack[-1].qualname if in_class else None,
            span=Span(first_line, span.column, span.end_line, span.end_column),
            name_span=Span(node.lineno, name_col, node.lineno, name_col + len(node.name)),
            params=params,
            is_async=isinstance(node, ast.AsyncFunctionDef),
            decorators=decorators,
            docstring=ast.get_docstring(node),
            is_test=self.facts.is_test and node.name.startswith("test"),
        )
        if self.scope.function is not None:
            self.scope.function.nested.append(qualname)
        self.facts.functions[qualname] = function
        if in_class:
            self.class_stack[-1].methods.append(qualname)
        scope = _Scope(function)
        for a in (*args.posonlyargs, *args.args, *args.kwonlyargs):
            if a.annotation is not None:
                annotated = self._annotation_type(a.annotation)
                if annotated:
                    scope.types[a.arg] = annotated
                carried = self._carried_dependencies(a.annotation)
                if carried is not None:
                    # A dotted key: no bare name is ever looked up with a dot in it.
                    scope.types[f"{a.arg}.{carried[0]}"] = carried[1]
        for default in (*args.defaults, *args.kw_defaults):
            if default is not None:
                self.visit(default)
        self.scopes.append(scope)
        self.scope = scope
        self._forget_values()
        self.containers.append(("def", qualname))
        for stmt in node.body:
            self.visit(stmt)
        self.containers.pop()
        self.scopes.pop()
        self.scope = self.scopes[-1]
        self._forget_values()

    visit_AsyncFunctionDef = visit_FunctionDef

    def _annotation_type(self, node: ast.expr) -> str | None:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            try:
                node = ast.parse(node.value, mode="eval").body
            except SyntaxError:
                return None
        if isinstance(node, ast.BinOp):  # X | None
            return self._annotation_type(node.left)
        if isinstance(node, ast.Subscript):  # Optional[X]
            return self._annotation_type(node.slice)
        name = self.resolve(node)
        if name and name.rsplit(".", 1)[-1][:1].isupper():
            return name
        return None

    def _carried_dependencies(self, node: ast.expr) -> tuple[str, str] | None:
        """For ``RunContext[Deps]`` and the like (``_CONTEXT_CARRIERS``): the attribute that
        holds the dependencies and their type (``("deps", "app.Deps")``)."""
        if not isinstance(node, ast.Subscript):
            return None
        carrier = self.resolve(node.value)
        if carrier is None or carrier.split(".", 1)[0] not in _CONTEXT_PACKAGES:
            return None
        attribute = _CONTEXT_CARRIERS.get(carrier.rsplit(".", 1)[-1])
        if attribute is None:
            return None
        argument = node.slice.elts[0] if isinstance(node.slice, ast.Tuple) else node.slice
        carried = self._annotation_type(argument)
        return (attribute, carried) if carried else None

    def _visit_decorator_calls(self, node: ast.expr) -> None:
        # Calls inside decorator arguments (lambdas, retry stop conditions) still count.
        if isinstance(node, ast.Call):
            for arg in (*node.args, *(k.value for k in node.keywords)):
                self.visit(arg)

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        qualname = self._qualname(node.name)
        cls = ClassDef(
            qualname=qualname,
            name=node.name,
            module=self.module,
            span=self.span(node),
            name_span=Span(
                node.lineno, node.col_offset + 7, node.lineno, node.col_offset + 7 + len(node.name)
            ),
            bases=[self.resolve(b) or self.text(b) for b in node.bases],
            methods=[],
            decorators=[self._decorator(d) for d in node.decorator_list],
        )
        for stmt in node.body:
            if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
                target = stmt.targets[0]
                if isinstance(target, ast.Name):
                    cls.attributes[target.id] = self.value(stmt.value)
            elif (
                isinstance(stmt, ast.AnnAssign)
                and isinstance(stmt.target, ast.Name)
                and stmt.value is not None
            ):
                cls.attributes[stmt.target.id] = self.value(stmt.value)
            elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                annotated = self._annotation_type(stmt.annotation)
                if annotated:
                    cls.self_types[stmt.target.id] = annotated
        self.facts.classes[qualname] = cls
        self.class_stack.append(cls)
        self.containers.append(("class", qualname))
        class_scope = _Scope(self.scope.function)
        class_scope.order = self.scope.order
        self.scopes.append(class_scope)
        self.scope = class_scope
        self._forget_values()
        for stmt in node.body:
            self.visit(stmt)
        self.scopes.pop()
        self.scope = self.scopes[-1]
        self._forget_values()
        self.containers.pop()
        self.class_stack.pop()

    # ------------------------------------------------------------------ statements
    def _record_assignment(self, target: ast.expr, value: ast.expr, node: ast.stmt) -> None:
        name: str | None = None
        if isinstance(target, ast.Name):
            name = target.id
        elif (
            isinstance(target, ast.Attribute)
            and isinstance(target.value, ast.Name)
            and target.value.id == "self"
        ):
            name = f"self.{target.attr}"
        elif (
            isinstance(target, ast.Subscript)
            and isinstance(target.value, ast.Name)
            and isinstance(target.slice, ast.Constant)
            and isinstance(target.slice.value, str)
        ):
            name = f"{target.value.id}[{target.slice.value}]"
        if (
            name is None
            and isinstance(target, ast.Attribute)
            and isinstance(target.value, ast.Name)
            and target.value.id not in {"self", "cls"}
        ):
            fn = self.scope.function
            self.facts.attribute_sets.append(
                Assignment(
                    target=f"{self.resolve_name(target.value.id)}.{target.attr}",
                    value=self.value(value),
                    span=span_of(node),
                    function=fn.qualname if fn else None,
                    order=self.scope.order,
                )
            )
            return
        if name is None:
            return
        val = self.value(value)
        scope = self.scope
        function = scope.function
        # Positional: keyword arguments cost a dataclass ``__init__`` more than its work.
        self.facts.assignments.append(
            Assignment(
                name,
                val,
                self.span(node),
                function.qualname if function else None,
                scope.order,
            )
        )
        if val.kind == "call" and val.qualname:
            last = val.qualname.rsplit(".", 1)[-1]
            if last.lstrip("_")[:1].isupper() or last in {
                "Session",
                "client",
                "Client",
                "resource",
            }:
                typed = val.qualname
                if last == "client" and val.call_args and val.call_args[0].string():
                    typed = f"{val.qualname}:{val.call_args[0].string()}"
                self._bind_type(name, typed)
        elif val.kind in {"name", "attr"} and val.qualname and not name.startswith("self."):
            if val.qualname in scope.types.values() or "." in val.qualname:
                scope.types.setdefault(name, val.qualname)
                self._forget_values()
        elif val.kind == "name" and name.startswith("self."):
            # ``self.http = http`` with ``http: httpx.Client``: the client it was given.
            held = self._held_type(value)
            if held is not None:
                self._bind_type(name, held)
        choices: list[ast.expr] = []
        if isinstance(value, ast.BoolOp) and isinstance(value.op, ast.Or):
            choices = value.values
        elif isinstance(value, ast.IfExp):
            choices = [value.body, value.orelse]
        if choices:
            # ``self.http = http or httpx.Client()``, ``session if session else
            # requests.Session()``: what the first typed choice holds.
            held = next(filter(None, map(self._held_type, choices)), None)
            if held is not None:
                self._bind_type(name, held)
        if val.kind in {"call", "other"} and self.path_typed(value):
            self._bind_type(name, PATH_TYPE)

    def _bind_type(self, name: str, typed: str) -> None:
        """``name`` (a local, or ``self.x`` in a class, where the first type stays) holds a
        ``typed`` object from here on."""
        if name.startswith("self."):
            if self.class_stack:
                self.class_stack[-1].self_types.setdefault(name[5:], typed)
        elif self.scope.types.get(name) != typed:
            self.scope.types[name] = typed
            self._forget_values()

    def _held_type(self, node: ast.expr) -> str | None:
        """The class an operand holds: a name typed as one (``http: httpx.Client``), or a
        class called (``httpx.Client()``)."""
        if isinstance(node, ast.Name):
            held = self.resolve_name(node.id)
            if held == node.id:
                return None
        elif isinstance(node, ast.Call):
            held = self._callee_name(node.func) or ""
        else:
            return None
        return held if held.rsplit(".", 1)[-1].lstrip("_")[:1].isupper() else None

    def visit_Assign(self, node: ast.Assign) -> None:
        self.visit(node.value)
        for target in node.targets:
            self._record_assignment(target, node.value, node)
            if not isinstance(target, ast.Name):
                self.visit(target)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            self.visit(node.value)
            self._record_assignment(node.target, node.value, node)
        annotated = self._annotation_type(node.annotation)
        if annotated and isinstance(node.target, ast.Name):
            self.scope.types.setdefault(node.target.id, annotated)
            self._forget_values()

    def visit_Return(self, node: ast.Return) -> None:
        if node.value is not None:
            self.visit(node.value)
            if self.scope.function is not None:
                self.scope.function.returns.append(self.value(node.value))

    def visit_Raise(self, node: ast.Raise) -> None:
        if node.exc is not None:
            self.visit(node.exc)
            if self.scope.function is not None:
                self.scope.function.raises.append(self.value(node.exc))

    def visit_Assert(self, node: ast.Assert) -> None:
        self.generic_visit(node)
        if self.scope.function is not None:
            self.scope.function.asserts.append(self.value(node.test))

    def _status_check(self, node: ast.Compare) -> None:
        if len(node.ops) != 1:
            return
        ops = {ast.Eq: "eq", ast.NotEq: "ne", ast.In: "in", ast.NotIn: "not_in"}
        op = ops.get(type(node.ops[0]))
        if op is None:
            return
        left, right = node.left, node.comparators[0]
        if op in {"eq", "ne"} and isinstance(left, ast.Constant):
            left, right = right, left
        subject = self.text(left, 80)
        if not _STATUS_SUBJECT.search(subject):
            return
        if isinstance(right, ast.Constant) and isinstance(right.value, str):
            values = [right.value]
        elif isinstance(right, (ast.Tuple, ast.List, ast.Set)):
            values = []
            for element in right.elts:
                if isinstance(element, ast.Constant) and isinstance(element.value, str):
                    values.append(element.value)
                elif isinstance(element, ast.Attribute):
                    values.append(element.attr)  # (Status.FAILED, Status.STARTED)
        elif isinstance(right, ast.Attribute):
            values = [right.attr]  # Status.SUCCEEDED
        else:
            return
        if not values:
            return
        fn = self.scope.function
        self.facts.status_checks.append(
            StatusCheck(
                function=fn.qualname if fn else None,
                subject=subject,
                op=op,
                values=[v.lower() for v in values],
                span=span_of(node),
            )
        )

    def visit_Compare(self, node: ast.Compare) -> None:
        self.generic_visit(node)
        self._status_check(node)

    def _branch(self, string: str, body: list[ast.stmt]) -> None:
        if not body:
            return
        first, last = span_of(body[0]), span_of(body[-1])
        fn = self.scope.function
        self.facts.branches.append(
            (
                fn.qualname if fn else None,
                string,
                Span(first.line, first.column, last.end_line, last.end_column),
            )
        )

    def visit_If(self, node: ast.If) -> None:
        test = node.test
        if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq):
            for side in (test.left, test.comparators[0]):
                string = self._static_string(side)
                if string is not None:
                    self._branch(string, node.body)
        self.generic_visit(node)

    def _static_string(self, node: ast.expr) -> str | None:
        """A string literal, or a class constant of this module naming one (``Tools.COMMIT``
        in ``class Tools(str, Enum): COMMIT = "git_commit"``): dispatch compares tool names
        against either."""
        member = enum_member_value(node, self.facts.classes, self.module, self.resolve)
        if member is not None:
            return member
        if isinstance(node, ast.Constant):
            return node.value if isinstance(node.value, str) else None
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            cls = self.facts.classes.get(f"{self.module}.{node.value.id}")
            value = cls.attributes.get(node.attr) if cls is not None else None
            return value.string() if value is not None else None
        return None

    def visit_Match(self, node: ast.Match) -> None:
        for case in node.cases:
            pattern = case.pattern
            options = pattern.patterns if isinstance(pattern, ast.MatchOr) else [pattern]
            for option in options:
                if isinstance(option, ast.MatchValue):
                    string = self._static_string(option.value)
                    if string is not None:
                        self._branch(string, case.body)
        self.generic_visit(node)

    def visit_Dict(self, node: ast.Dict) -> None:
        self.generic_visit(node)
        keys = {k.value for k in node.keys if isinstance(k, ast.Constant)}
        if any(shape <= keys for shape in _TOOL_SCHEMA_KEYS):
            self.facts.dicts.append(self.value(node))

    def _loop(self, node: ast.For | ast.AsyncFor | ast.While, kind: str) -> None:
        loop_id = self.new_id()
        retry_shape = False
        if isinstance(node, (ast.For, ast.AsyncFor)):
            it = node.iter
            retry_shape = (
                isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range"
            ) and isinstance(node.target, ast.Name)
            retry_shape = retry_shape and _exits_on_success(node)
            if not retry_shape and isinstance(node.target, ast.Name):
                retry_shape = _repeats_same_attempt(node, node.target.id)
            self.visit(node.iter)
        else:
            retry_shape = _exits_on_success(node)
            self.visit(node.test)
        loop = Loop(loop_id=loop_id, kind=kind, span=self.span(node), is_retry_shape=retry_shape)
        fn = self.scope.function
        if fn is not None:
            fn.loops.append(loop)
        self.scope.loops.append(loop_id)
        for stmt in node.body:
            self.visit(stmt)
        self.scope.loops.pop()
        for stmt in node.orelse:
            self.visit(stmt)

    def visit_For(self, node: ast.For) -> None:
        self._loop(node, "for")

    def visit_AsyncFor(self, node: ast.AsyncFor) -> None:
        self._loop(node, "for")

    def visit_While(self, node: ast.While) -> None:
        self._loop(node, "while")

    def visit_Try(self, node: ast.Try) -> None:
        try_id = self.new_id()
        scope = self.scope
        start = scope.order
        for stmt in node.body:
            self.visit(stmt)
        end = scope.order
        fn = scope.function
        if fn is not None:
            fn.tries.append(
                TryBlock(
                    try_id=try_id,
                    span=self.span(node),
                    loop_ids=list(scope.loops),
                    body_order=(start, end),
                )
            )
        for handler in node.handlers:
            self._handler(handler, try_id)
        for stmt in (*node.orelse, *node.finalbody):
            self.visit(stmt)

    visit_TryStar = visit_Try

    def _caught(self, node: ast.expr | None) -> list[str]:
        if node is None:
            return []
        if isinstance(node, ast.Tuple):
            return [self.resolve(e) or self.text(e) for e in node.elts]
        return [self.resolve(node) or self.text(node)]

    def _handler(self, handler: ast.ExceptHandler, try_id: int) -> None:
        fn = self.scope.function
        record = Handler(
            try_id=try_id,
            caught=self._caught(handler.type),
            span=self.span(handler),
            name=handler.name,
        )
        for sub in _walk(handler):
            if isinstance(sub, ast.Raise):
                if sub.exc is None or (
                    isinstance(sub.exc, ast.Name) and sub.exc.id == handler.name
                ):
                    record.reraises = True
                else:
                    record.raises.append(self.value(sub.exc))
            elif isinstance(sub, ast.Return) and sub.value is not None:
                record.returns.append(self.value(sub.value))
            elif isinstance(sub, ast.Continue):
                record.continues = True
            elif isinstance(sub, ast.Call):
                callee = self.resolve(sub.func)
                if callee:
                    record.calls.append(callee)
            elif isinstance(sub, ast.Constant) and isinstance(sub.value, str):
                record.strings.append(sub.value[:200])
        record.raw_error_uses, record.tainted_names = self._raw_error_uses(handler)
        if fn is not None:
            fn.handlers.append(record)
        if handler.name:
            self.scope.types.pop(handler.name, None)
            self._forget_values()
        for stmt in handler.body:
            self.visit(stmt)

    def _raw_text(self, expr: ast.AST, name: str | None, tainted: set[str]) -> str | None:
        """How ``expr`` carries the exception's raw text, if it does."""
        top_level = [expr]
        if isinstance(expr, ast.Dict):
            top_level += [v for v in expr.values if v is not None]
        for item in top_level:
            if name and isinstance(item, ast.Name) and item.id == name:
                return name
        for sub in _walk(expr):
            if isinstance(sub, ast.Call):
                callee = self.resolve(sub.func) or ""
                if callee in _TRACEBACK_TEXT:
                    return f"{callee}()"
                first = sub.args[0] if sub.args else None
                if name and isinstance(first, ast.Name) and first.id == name:
                    if callee in {"str", "repr", "format"}:
                        return f"{callee}({name})"
                if (
                    name
                    and isinstance(sub.func, ast.Attribute)
                    and sub.func.attr == "format"
                    and any(isinstance(a, ast.Name) and a.id == name for a in sub.args)
                ):
                    return f".format({name})"
            elif isinstance(sub, ast.FormattedValue):
                inner = sub.value
                if name and isinstance(inner, ast.Name) and inner.id == name:
                    return f'f"{{{name}}}"'
            elif isinstance(sub, ast.BinOp) and isinstance(sub.op, ast.Mod):
                parts = sub.right.elts if isinstance(sub.right, ast.Tuple) else [sub.right]
                if name and any(isinstance(p, ast.Name) and p.id == name for p in parts):
                    return f"% {name}"
            elif (
                isinstance(sub, ast.Attribute)
                and isinstance(sub.value, ast.Name)
                and name
                and sub.value.id == name
                and sub.attr in _RAW_ATTRS
            ):
                return f"{name}.{sub.attr}"
            elif isinstance(sub, ast.Name) and sub.id in tainted and isinstance(sub.ctx, ast.Load):
                return f"`{sub.id}` (holds the error text)"
        return None

    def _raw_error_uses(self, handler: ast.ExceptHandler) -> tuple[list[RawErrorUse], list[str]]:
        name = handler.name
        if not name and b"traceback" not in self.source:
            return [], []
        tainted: set[str] = set()
        uses: list[RawErrorUse] = []
        walked = _walk(handler)
        raised = {id(n.exc) for n in walked if isinstance(n, ast.Raise)}
        nodes = [n for n in walked if hasattr(n, "lineno")]
        nodes.sort(key=lambda n: (n.lineno, n.col_offset))  # type: ignore[attr-defined]
        for node in nodes:
            if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and node.value:
                how = self._raw_text(node.value, name, tainted)
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    base = target.value if isinstance(target, ast.Subscript) else target
                    if how and isinstance(base, ast.Name):
                        tainted.add(base.id)
            elif isinstance(node, ast.Return) and node.value is not None:
                how = self._raw_text(node.value, name, tainted)
                if how:
                    uses.append(RawErrorUse(how, "return", span_of(node), None, self.text(node)))
            elif isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call):
                args = [*node.exc.args, *(k.value for k in node.exc.keywords)]
                how = next((h for h in (self._raw_text(a, name, tainted) for a in args) if h), None)
                if how:
                    uses.append(
                        RawErrorUse(
                            how,
                            "raise",
                            span_of(node),
                            self.resolve(node.exc.func),
                            self.text(node),
                        )
                    )
            elif isinstance(node, ast.Call) and id(node) not in raised:
                if self.resolve(node.func) in _NOT_A_DESTINATION:
                    continue
                args = [*node.args, *(k.value for k in node.keywords)]
                how = next((h for h in (self._raw_text(a, name, tainted) for a in args) if h), None)
                if not how:
                    continue
                keys: list[str] = []
                strings: list[str] = []
                for arg in args:
                    if isinstance(arg, ast.Dict):
                        for key, val in zip(arg.keys, arg.values, strict=False):
                            if isinstance(key, ast.Constant) and isinstance(key.value, str):
                                keys.append(key.value)
                            if isinstance(val, ast.Constant) and isinstance(val.value, str):
                                strings.append(val.value)
                keys += [k.arg for k in node.keywords if k.arg]
                uses.append(
                    RawErrorUse(
                        how,
                        "call",
                        span_of(node),
                        self.resolve(node.func) or self.text(node.func, 120),
                        self.text(node),
                        keys,
                        strings,
                    )
                )
        return uses, sorted(tainted)

    def visit_With(self, node: ast.With | ast.AsyncWith) -> None:
        for item in node.items:
            self.visit(item.context_expr)
            if isinstance(item.optional_vars, ast.Name) and isinstance(item.context_expr, ast.Call):
                callee = self.resolve(item.context_expr.func)
                if callee and callee.rsplit(".", 1)[-1][:1].isupper():
                    self.scope.types[item.optional_vars.id] = callee
                    self._forget_values()
                self._record_assignment(item.optional_vars, item.context_expr, node)
        for stmt in node.body:
            self.visit(stmt)

    visit_AsyncWith = visit_With

    # ------------------------------------------------------------------ calls
    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        resolved = self._callee_name(func)
        text = self.text(func, 120)
        if type(func) is ast.Attribute:
            method = func.attr
            receiver = self.resolve(func.value) or self.text(func.value, 120)
        else:
            method = resolved.rsplit(".", 1)[-1] if resolved else text
            receiver = None
        scope = self.scope
        function = scope.function
        args = [self.value(a) for a in node.args[:8]] if node.args else NO_VALUES
        kwargs: dict[str, Value] = NO_ITEMS
        star_kwargs_values: list[Value] = NO_VALUES
        if node.keywords:
            kwargs = {k.arg: self.value(k.value) for k in node.keywords if k.arg} or NO_ITEMS
            star_kwargs_values = [
                self.value(k.value) for k in node.keywords if k.arg is None
            ] or NO_VALUES
        # Positional, with the shared empties for empty lists (see ``_leaf_value``): there
        # are about 235,000 calls in a large project, most with no keywords, try or loop.
        call = Call(
            resolved or text,
            text,
            method,
            receiver,
            self.span(node),
            args,
            kwargs,
            star_kwargs_values,
            function.qualname if function else None,
            list(scope.loops) if scope.loops else NO_IDS,
            scope.order,
        )
        scope.order += 1
        self.facts.calls.append(call)
        self.generic_visit(node)


_Plan = tuple["Callable[[_Extractor, Any], None] | None", tuple[str, ...], bool]


def _plan(kind: type) -> _Plan:
    handler = getattr(_Extractor, "visit_" + kind.__name__, None)
    return handler, _FIELDS[kind], issubclass(kind, ast.stmt)


_PLANS: dict[type, _Plan] = {kind: _plan(kind) for kind in _FIELDS}
# What a traversal steps into: not the leaf kinds, nor names and constants (no children,
# no handler), nor anything that is not a node.
_VISITED: dict[type, _Plan] = {
    kind: plan
    for kind, plan in _PLANS.items()
    if kind in _WALKED and kind not in (ast.Name, ast.Constant)
}
