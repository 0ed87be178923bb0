"""Values, names and text for the extractor (``extract.py``): the state every visitor
shares, what an expression is, and the assignments and calls that bind names.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator, Mapping
from itertools import accumulate
from typing import TYPE_CHECKING, Any

from agentguard.diagnostics import Span
from agentguard.facts.module_facts import (
    CALL_STEP,
    LOADED_EMPTY_DICT,
    LOADED_EMPTY_LIST,
    Assignment,
    Call,
    Chain,
    ClassDef,
    Const,
    Function,
    ModuleFacts,
    Step,
    Value,
)
from agentguard.facts.syntax_walk import NODE_FIELDS, QUEUED_KINDS, module_name_for, span_of
from agentguard.knowledge.catalog import ContextCarriers

TEXT_LIMIT = 240
# How many operands of a concatenation a Value keeps (as many as a list's elements).
PARTS_LIMIT = 64
# The operator a comparison with one operator is written with (``Value.op``).
_COMPARISONS: dict[type, str] = {
    ast.Eq: "==",
    ast.NotEq: "!=",
    ast.Is: "is",
    ast.IsNot: "is not",
    ast.In: "in",
    ast.NotIn: "not in",
    ast.Lt: "<",
    ast.LtE: "<=",
    ast.Gt: ">",
    ast.GtE: ">=",
}
# Annotations that wrap the type they hold (``Optional[Client]``), by their last name part,
# and names that give no type (``Any``: nothing is known of the object).
_TYPE_WRAPPERS = frozenset(
    {"Optional", "Union", "Annotated", "ClassVar", "Final", "Required", "NotRequired", "ReadOnly"}
)
# Containers whose annotation names the class of their entries (the last argument: a
# mapping's value), lower-cased: ``dict[str, Adapter]``, ``List[Adapter]``.
_CONTAINER_ANNOTATIONS = frozenset(
    {
        "dict",
        "mapping",
        "mutablemapping",
        "ordereddict",
        "defaultdict",
        "list",
        "sequence",
        "mutablesequence",
        "iterable",
        "set",
        "frozenset",
        "deque",
    }
)
# Modules whose generic classes hold other objects (``typing.Iterator[Row]``).
_GENERIC_MODULES = frozenset({"typing", "typing_extensions", "collections", "builtins"})
_NO_TYPE = frozenset(
    {
        "Any",
        "typing.Any",
        "typing_extensions.Any",
        "typing.Optional",
        # a type variable defined in the module (``T = TypeVar("T")``) is typed so
        "typing.TypeVar",
        "typing_extensions.TypeVar",
        "typing.ParamSpec",
    }
)
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


def leaf_value(
    kind: str,
    text: str,
    const: Const = None,
    qualname: str | None = None,
    names: list[str] = LOADED_EMPTY_LIST,
    span: Span | None = None,
    chain: Chain | None = None,
    op: str = "",
) -> Value:
    """A constant or a name: nothing nested, nothing called, no attributes read (both front
    ends make them: the shared empties keep each Value small)."""
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
        NO_VALUES,
        chain,
        op,
    )


def _concatenated(node: ast.AST) -> list[ast.expr]:
    """The operands of ``a + b + c`` in order (the first ``PARTS_LIMIT``): the left side of
    each ``+`` holds the ones before."""
    operands: list[ast.expr] = []
    current: Any = node
    while type(current) is ast.BinOp and type(current.op) is ast.Add:
        operands.append(current.right)
        current = current.left
    operands.append(current)
    operands.reverse()
    return operands[:PARTS_LIMIT]


class Scope:
    __slots__ = ("function", "globals", "loops", "order", "types")

    def __init__(self, function: Function | None) -> None:
        self.function = function
        self.types: dict[str, str] = {}
        # ``global client`` in a function: its assignments bind the module's variable
        self.globals: set[str] = set()
        self.loops: list[int] = []
        self.order = 0


# Values made here hold the one shared, read-only empty list or dict (the ones facts read
# back from a pickle hold) for each empty field: most of a Value's seven containers stay
# empty, and making them was about a quarter of the memory extracted facts take.
NO_NAMES: list[str] = LOADED_EMPTY_LIST
NO_VALUES: list[Value] = LOADED_EMPTY_LIST
NO_ITEMS: dict[str, Value] = LOADED_EMPTY_DICT
NO_IDS: list[int] = LOADED_EMPTY_LIST
# What ``ValueReader._resolved`` holds for a node not resolved yet (None is an answer).
_UNRESOLVED = object()


class ValueReader:
    """The extractor's state and what every visitor shares: source text and spans, name
    resolution, the Value of an expression, and the assignments and calls that bind them.
    The traversal itself (``visit``) is the final class's, in ``extract.py``."""

    if TYPE_CHECKING:

        def visit(self, node: ast.AST) -> None: ...

        def generic_visit(self, node: ast.AST) -> None: ...

    def __init__(
        self,
        source: bytes,
        path: str,
        is_test: bool,
        carriers: ContextCarriers,
        module: str | None = None,
        import_heads: Mapping[str, str] | None = None,
    ) -> None:
        self.source = source
        # absolute imports whose first name is a module of this file's own program, named
        # otherwise in the project (``utils`` -> ``billing_agent.utils``): module_roots
        self.import_heads = import_heads or {}
        # Words a few per-node facts are only searched for where the file holds them, asked
        # once here: a search of the whole file per node grows with the square of its size.
        self.source_yields = b"yield" in source
        self.source_names_traceback = b"traceback" in source
        # rules/frameworks.yaml tool_functions.context_carriers: ``ctx.deps`` of ``RunContext[Deps]``
        self.carriers = carriers
        self._carried_attributes = carriers.carried
        # Most files are ASCII: their text is sliced from one decoded copy.
        self._ascii_text = source.decode("ascii") if source.isascii() else None
        self.path = path
        self.module = module or module_name_for(path)
        self.facts = ModuleFacts(path=path, module=self.module, is_test=is_test)
        # Where each line starts: after every b"\n", summed in C.
        self._line_offsets = list(
            accumulate(map((1).__add__, map(len, source.split(b"\n")[:-1])), initial=0)
        )
        self.facts.lines = len(self._line_offsets)
        self.module_scope = Scope(None)
        self.scopes: list[Scope] = [self.module_scope]
        # The innermost of ``scopes``, kept in step with it: read at nearly every node.
        self.scope = self.module_scope
        self.class_stack: list[ClassDef] = []
        self.containers: list[tuple[str, str]] = []  # ("class" | "def", qualname)
        self.top_level: set[str] = set()
        self.tree: ast.Module | None = None  # the module parsed, set by ``run``
        self._next_id = 0
        self._spans: dict[tuple[int, int, int | None, int | None], Span] = {}
        self._line_numbers: dict[int, int] = {}
        self._texts: dict[str, str] = {}
        self._values: dict[int, Value] = {}
        self._names: dict[str, str] = {}
        self._resolved: dict[ast.AST, object] = {}
        # Equal chains, attribute steps and literal texts are one shared object each, as
        # spans are.
        self._chains: dict[tuple[str, tuple[Step, ...]], Chain] = {}
        self._attr_steps: dict[str, Step] = {}
        self._literals: dict[str, Value] = {}
        # Equal lists of names, callees or attributes read are one shared list each: a
        # file's Values repeat them (every ``self.client`` reads ``["self"]``), and the
        # parent holds every file's facts for the whole run. Facts are never changed once
        # extracted (see ``LOADED_EMPTY_LIST``).
        self._name_lists: dict[tuple[str, ...], list[str]] = {}

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
                known = self._new_span(line, column, end_line, end_column)
            self._spans[key] = known
        return known

    def _new_span(self, line: int, column: int, end_line: int, end_column: int) -> Span:
        # Every node holds its own int objects for its lines (past 256, ints are not
        # shared): the spans of one line share one, as the facts are kept for the run.
        numbers = self._line_numbers
        line = numbers.setdefault(line, line)
        end_line = numbers.setdefault(end_line, end_line)
        # ``tuple.__new__`` directly: Span's own call goes through Python code.
        return tuple.__new__(Span, (line, column + 1, end_line, end_column + 1))

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
            span = self._spans[key] = self._new_span(line, column, end_line, end_column)
        return self._texts.setdefault(text, text), span

    def new_id(self) -> int:
        self._next_id += 1
        return self._next_id

    def resolve(self, node: ast.AST) -> str | None:
        """Dotted, import-resolved name of a Name/Attribute chain (None for other shapes)."""
        kind = type(node)
        if kind is ast.Name:
            return self.resolve_name(node.id)  # type: ignore[attr-defined]
        if kind is not ast.Attribute:
            return None
        # Memoised like names (and forgotten with them): a call's callee is resolved for
        # the call, for its Value and for the Value of every expression it is inside, and
        # each resolution renders every prefix of the chain again. Keyed by the node
        # itself, which the memo keeps alive: a node parsed from a string annotation is
        # freed after, and another could take its ``id``.
        known = self._resolved.get(node, _UNRESOLVED)
        if known is _UNRESOLVED:
            known = self._resolved[node] = self._resolve_attribute(node)  # type: ignore[arg-type]
        return known  # type: ignore[return-value]

    def _resolve_attribute(self, node: ast.Attribute) -> str | None:
        if node.attr in self._carried_attributes and type(node.value) is ast.Name:
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
        self._resolved.clear()

    def _value(self, node: ast.AST) -> Value:
        text, span = self._text_and_span(node)
        kind = type(node)
        if kind is ast.Constant:
            const = node.value  # type: ignore[attr-defined]
            if isinstance(const, bytes):
                const = const.decode("latin-1")
            if not isinstance(const, (str, int, float, bool)) and const is not None:
                const = str(const)
            return leaf_value("const", text, const, None, NO_NAMES, span)
        if kind is ast.Name:
            name = node.id  # type: ignore[attr-defined]
            if text is not name and text == name:
                # One string for the name read, its chain and its text: the slice of the
                # source would be a second copy in memory and in the pickle.
                text = self._texts[text] = name
            named = self._name_chain(name)
            read = self._shared_names((name,))
            return leaf_value("name", text, None, self.resolve_name(name), read, span, named)
        names, calls, attrs = self._reads(node)
        value_kind, qualname = "other", None
        items: dict[str, Value] = NO_ITEMS
        elements: list[Value] = NO_VALUES
        call_kwargs: dict[str, Value] = NO_ITEMS
        call_args: list[Value] = NO_VALUES
        chain: Chain | None = None
        op = ""
        parts: list[Value] = NO_VALUES
        if kind is ast.Attribute:
            value_kind, qualname = "attr", self.resolve(node)
            chain = self.chain(node)
        elif kind is ast.Call:
            call: ast.Call = node  # type: ignore[assignment]
            value_kind, qualname = "call", self._callee_name(call.func)
            if call.args:
                call_args = [self.value(a) for a in call.args[:6]]
            if call.keywords:
                call_kwargs = {k.arg: self.value(k.value) for k in call.keywords if k.arg}
            chain = self.chain(node)
        elif kind is ast.Subscript:
            chain = self.chain(node)
        elif kind is ast.IfExp:
            op, parts = "if", [self.value(node.body), self.value(node.orelse)]  # type: ignore[attr-defined]
        elif kind is ast.BinOp:
            if type(node.op) is ast.Add:  # type: ignore[attr-defined]
                op, parts = "+", [self.value(o) for o in _concatenated(node)]
        elif kind is ast.UnaryOp:
            if type(node.op) is ast.Not:  # type: ignore[attr-defined]
                op, parts = "not", [self.value(node.operand)]  # type: ignore[attr-defined]
        elif kind is ast.Compare:
            compare: ast.Compare = node  # type: ignore[assignment]
            if len(compare.ops) == 1:
                op = _COMPARISONS.get(type(compare.ops[0]), "")
                if op:
                    parts = [self.value(compare.left), self.value(compare.comparators[0])]
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
            parts = [self._formatted_part(part) for part in node.values]  # type: ignore[attr-defined]
        elif kind is ast.Lambda:
            value_kind = "lambda"
        # Positional: keyword arguments cost a dataclass ``__init__`` more than the rest of
        # its work, and there are about 700,000 Values in a large project.
        return Value(
            value_kind,
            text,
            None,
            qualname,
            self._shared_names(tuple(names)) if names else NO_NAMES,
            self._shared_names(tuple(calls)) if calls else NO_NAMES,
            self._shared_names(tuple(attrs)) if attrs else NO_NAMES,
            items,
            elements,
            span,
            call_kwargs,
            call_args,
            parts,
            chain,
            op,
        )

    def _shared_names(self, names: tuple[str, ...]) -> list[str]:
        """The file's one list of these names (made the first time, no longer than it is)."""
        shared = self._name_lists.get(names)
        if shared is None:
            shared = self._name_lists[names] = list(names)
        return shared

    def _formatted_part(self, part: ast.expr) -> Value:
        """A part of an f-string: its literal text, or the Value of what it formats."""
        if type(part) is ast.FormattedValue:
            return self.value(part.value)
        literal = part.value if type(part) is ast.Constant else None
        text = literal if isinstance(literal, str) else ""
        shared = self._literals.get(text)
        if shared is None:
            shared = self._literals[text] = leaf_value(
                "const", text, text, None, NO_NAMES, None, op="text"
            )
        return shared

    def chain(self, node: ast.AST) -> Chain | None:
        """The chain of a name, attribute, call or item expression (see ``Chain``); None
        for any other expression."""
        if type(node) is ast.Name:
            return self._name_chain(node.id)
        steps: list[Step] = []
        current: Any = node
        attr_steps = self._attr_steps
        while True:
            kind = type(current)
            if kind is ast.Attribute:
                attr = current.attr
                step = attr_steps.get(attr)
                if step is None:
                    step = attr_steps[attr] = ("attr", attr)
                steps.append(step)
                current = current.value
            elif kind is ast.Call:
                steps.append(CALL_STEP)
                current = current.func
                continue
            elif kind is ast.Subscript:
                key = current.slice
                literal = key.value if type(key) is ast.Constant else None
                if isinstance(literal, bool) or not isinstance(literal, (str, int)):
                    literal = None  # a key worked out, or a literal of another type
                steps.append(("item", literal))
                current = current.value
            else:
                break
        steps.reverse()
        if type(current) is ast.Name:
            key = (current.id, tuple(steps))
            shared = self._chains.get(key)
            if shared is None:
                shared = self._chains[key] = Chain(*key)
            return shared
        if not steps:
            return None
        return Chain("", tuple(steps), self.value(current))

    def _name_chain(self, name: str) -> Chain:
        shared = self._chains.get((name, ()))
        if shared is None:
            shared = self._chains[(name, ())] = Chain(name)
        return shared

    def _reads(self, node: ast.AST) -> tuple[list[str], list[str], list[str]]:
        """The names, callees and attribute names under ``node``, each in ``ast.walk``
        order (breadth first)."""
        names: list[str] = []
        calls: list[str] = []
        attrs: list[str] = []
        queue = [node]
        fields, queued = NODE_FIELDS, QUEUED_KINDS
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

    def _alternatives(self, node: ast.expr) -> Iterator[ast.expr]:
        """What an annotation may hold, each as written: ``"Client"`` parsed, each side of
        ``X | None``, each choice of ``Optional``/``Union``, an ``Annotated`` type's first."""
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            try:
                node = ast.parse(node.value, mode="eval").body
            except SyntaxError:
                return
        if isinstance(node, ast.BinOp):  # X | None, None | X
            yield from self._alternatives(node.left)
            yield from self._alternatives(node.right)
            return
        if isinstance(node, ast.Subscript):
            origin = self.resolve(node.value) or ""
            if origin.rsplit(".", 1)[-1] in _TYPE_WRAPPERS:
                inner = node.slice
                choices = inner.elts if isinstance(inner, ast.Tuple) else [inner]
                for choice in choices[:1] if origin.endswith("Annotated") else choices:
                    yield from self._alternatives(choice)
                return
        yield node

    def _annotation_type(self, node: ast.expr) -> str | None:
        """The class an annotation names: ``Client``, ``"Client"``, ``Client | None``,
        ``Optional[Client]``, ``Union[None, Client]``, ``Annotated[Client, ...]``; the
        generic class of ``Client[T]``. ``Any`` names none (nothing is known of it)."""
        for held in self._alternatives(node):
            if isinstance(held, ast.Subscript):
                if (self.resolve(held.value) or "").split(".", 1)[0] in _GENERIC_MODULES:
                    continue  # ``Iterator[Row]``, ``list[Client]``: a container, no client
                held = held.value  # ``Client[T]`` is a ``Client``
            name = self.resolve(held)
            if name and name.rsplit(".", 1)[-1][:1].isupper() and name not in _NO_TYPE:
                return name
        return None

    def _item_annotation(self, node: ast.expr) -> str | None:
        """The class of an entry of a container an annotation declares: ``dict[str,
        Adapter]``, ``Mapping[str, Adapter]``, ``list[Adapter]``, ``Optional[...]`` of one."""
        for held in self._alternatives(node):
            if not isinstance(held, ast.Subscript):
                continue
            origin = (self.resolve(held.value) or "").rsplit(".", 1)[-1]
            if origin.lower() in _CONTAINER_ANNOTATIONS:
                arguments = held.slice.elts if isinstance(held.slice, ast.Tuple) else [held.slice]
                return self._annotation_type(arguments[-1])
        return None

    def _default_type(self, node: ast.expr) -> str | None:
        """The class a class-level default builds: ``httpx.Client()``, or the factory of
        ``field(default_factory=Client)`` / ``Field(default_factory=lambda: Client(...))``."""
        if not isinstance(node, ast.Call):
            return None
        for keyword in node.keywords:
            if keyword.arg == "default_factory":
                factory = keyword.value
                if isinstance(factory, ast.Lambda):
                    factory = factory.body
                    return self._held_type(factory)
                named = self.resolve(factory) or ""
                return named if named.rsplit(".", 1)[-1].lstrip("_")[:1].isupper() else None
        made = self._held_type(node)
        if made and made.rsplit(".", 1)[-1] in {"Field", "FieldInfo"}:
            return None  # ``Field(default=None)``: a declaration, not an object built
        return made

    # ------------------------------------------------------------------ statements
    def _record_assignment(self, target: ast.expr, value: ast.expr, node: ast.stmt) -> None:
        while isinstance(value, ast.Await):
            # ``channel = await client.fetch_channel(i)`` holds what the call returns, as
            # ``channel = client.fetch_channel(i)`` does in synchronous code
            value = value.value
        if isinstance(target, (ast.Tuple, ast.List)) and isinstance(value, ast.Call):
            self._record_unpacked(target, value, node)
            return
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
        root = target.value if isinstance(target, ast.Attribute) else None
        attrs: list[str] = []
        while isinstance(root, ast.Attribute):
            # ``context.context.state.seat = s``: an attribute set deep in an object
            attrs.append(root.attr)
            root = root.value
        if (
            name is None
            and isinstance(target, ast.Attribute)
            and isinstance(root, ast.Name)
            and root.id not in {"self", "cls"}
        ):
            fn = self.scope.function
            path = "".join(f".{attr}" for attr in reversed(attrs))
            self.facts.attribute_sets.append(
                Assignment(
                    # as written: ``context.seat``, not the type ``context`` is annotated with
                    target=f"{root.id}{path}.{target.attr}",
                    value=self.value(value),
                    span=span_of(node),
                    function=fn.qualname if fn else None,
                    order=self.scope.order,
                )
            )
            return
        if name is None:
            if isinstance(target, ast.Subscript) and isinstance(
                target.value, (ast.Name, ast.Attribute)
            ):
                self._keep_store(target, value, node)
            return
        val = self.value(value)
        scope = self.scope
        function = scope.function
        if function is not None and name in scope.globals:
            # ``global client`` then ``client = Client()`` (a client made on first use):
            # the module's variable holds it, for every function that reads it
            function = None
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
            if last.lstrip("_")[:1].isupper() or (
                last in {"Session", "client", "Client", "resource"}
                # ``boto3.client("s3")``, not this module's own ``def client()``
                and not val.qualname.startswith(f"{self.module}.")
            ):
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
        elif name.startswith("self.") and isinstance(value, ast.Attribute):
            # ``self.client = openai.OpenAI(...).images``: a part of a client built here;
            # ``self.client = openai.Image``: a class of a package, used through its
            # class methods
            built = self._held_type(value.value) if isinstance(value.value, ast.Call) else None
            if built is not None:
                self._bind_type(name, f"{built}.{value.attr}")
            elif (
                val.qualname
                and val.qualname.split(".", 1)[0] not in {"self", "cls"}
                and "." in val.qualname
                and val.text.split(".", 1)[0] in self.facts.imports
                and value.attr.lstrip("_")[:1].isupper()
            ):
                self._bind_type(name, val.qualname)
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

    def _record_unpacked(
        self, target: ast.Tuple | ast.List, value: ast.Call, node: ast.stmt
    ) -> None:
        """``sandbox, port = self._start()``: each name holds an item of what the call
        returns, written ``self._start()[0]`` (the project model reads the item from the
        function's ``return sandbox, port``)."""
        function = self.scope.function
        if function is None:
            return
        made = self.value(value)
        for index, element in enumerate(target.elts):
            if not isinstance(element, ast.Name):
                continue
            item = Value(
                kind="other",
                text=f"{made.text}[{index}]",
                names=made.names,
                calls=made.calls,
                attrs=made.attrs,
                span=made.span,
                chain=made.chain.then(("item", index)) if made.chain else None,
            )
            self.facts.assignments.append(
                Assignment(element.id, item, self.span(node), function.qualname, self.scope.order)
            )

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

    def visit_Global(self, node: ast.Global) -> None:
        if self.scope.function is not None:
            self.scope.globals.update(node.names)

    def _keep_store(self, target: ast.Subscript, value: ast.expr, node: ast.stmt) -> None:
        """An item of a container set (``value`` the value stored) or deleted (``value`` the
        item itself), kept by the container's text."""
        fn = self.scope.function
        self.facts.stores.append(
            Assignment(
                self.text(target.value, 120),
                self.value(value),
                self.span(node),
                fn.qualname if fn else None,
                self.scope.order,
            )
        )

    def visit_Delete(self, node: ast.Delete) -> None:
        """``del TASKS[task_id]``: an entry a container drops, kept with its stores (the
        value recorded is the item deleted)."""
        for target in node.targets:
            if isinstance(target, ast.Subscript) and isinstance(
                target.value, (ast.Name, ast.Attribute)
            ):
                self._keep_store(target, target, node)
        self.generic_visit(node)

    def visit_Assign(self, node: ast.Assign) -> None:
        self.visit(node.value)
        for target in node.targets:
            self._record_assignment(target, node.value, node)
            if not isinstance(target, ast.Name):
                self.visit(target)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        annotated = self._annotation_type(node.annotation)
        target = node.target
        if (
            annotated
            and isinstance(target, ast.Attribute)
            and isinstance(target.value, ast.Name)
            and target.value.id == "self"
        ):
            # ``self._factory: SandboxFactory = a if ... else b``: the declared type, before
            # whatever the value's first choice holds
            self._bind_type(f"self.{target.attr}", annotated)
        item = self._item_annotation(node.annotation)
        if item is not None:
            if (
                isinstance(target, ast.Attribute)
                and isinstance(target.value, ast.Name)
                and target.value.id == "self"
                and self.class_stack
            ):
                self.class_stack[-1].item_types.setdefault(target.attr, item)
            elif isinstance(target, ast.Name) and not self.containers:
                self.facts.item_types[target.id] = item
        if node.value is not None:
            self.visit(node.value)
            self._record_assignment(node.target, node.value, node)
        if annotated and isinstance(node.target, ast.Name):
            self.scope.types.setdefault(node.target.id, annotated)
            self._forget_values()

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
        # Positional, with the shared empties for empty lists (see ``leaf_value``): there
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
            self.chain(func),
        )
        scope.order += 1
        self.facts.calls.append(call)
        self.generic_visit(node)
