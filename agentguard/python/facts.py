"""Per-file facts extracted from Python source with one ``ast`` parse and one traversal.

Facts are plain data (picklable, cacheable by content hash). They describe what the code
says, not what it means: checks and the project model judge them. Names are resolved
through the module's imports, so ``from langchain_core.tools import tool as lc_tool``
makes ``@lc_tool`` a call of ``langchain_core.tools.tool``.
"""

from __future__ import annotations

from dataclasses import MISSING, dataclass, field, fields
from operator import attrgetter
from typing import Any, NoReturn

from agentguard.diagnostics import Span

Const = str | int | float | bool | None


class CompactPickle:
    """Pickles a facts object as its class called with its field values in declaration
    order (no field names), with every empty list and dict written as a reference to one
    shared, read-only empty container, and trailing default values left off.

    A corpus holds about a million facts objects, most of them with several empty
    containers: field names and empty containers were most of each cache entry. Calling
    the class itself, not a rebuilding function, keeps loading in the unpickler's C code.
    """

    __slots__ = ()

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        layout = _LAYOUTS[type(self)]
        row = list(layout.values_of(self))
        for index in layout.container_positions:
            if not row[index]:
                row[index] = layout.loaded_values[index]
        end = len(row)
        defaults = layout.defaults
        while end > layout.trim_floor:
            value, default = row[end - 1], defaults[end - 1]
            # ``0 == False``: the type must match too, or a trimmed 0 would load as False.
            if type(value) is not type(default) or value != default:
                break
            end -= 1
        return type(self), tuple(row[:end])


_NO_DEFAULT = object()


@dataclass(slots=True)
class Value(CompactPickle):
    """What an expression is, as far as a linter needs to know without running it.

    ``kind`` is one of: const, name, attr, call, dict, list, fstring, lambda, other.
    ``names`` are the bare names the expression reads (parameters, locals);
    ``calls`` the qualified callees it calls (``uuid.uuid4``, ``hashlib.sha256``);
    ``items`` the string-keyed entries of a dict literal; ``elements`` list/tuple items.
    """

    kind: str
    text: str
    const: Const = None
    qualname: str | None = None  # resolved dotted name for name/attr/call expressions
    names: list[str] = field(default_factory=list)
    calls: list[str] = field(default_factory=list)
    attrs: list[str] = field(default_factory=list)  # attribute names read anywhere inside
    items: dict[str, Value] = field(default_factory=dict)
    elements: list[Value] = field(default_factory=list)
    span: Span | None = None
    call_kwargs: dict[str, Value] = field(default_factory=dict)
    call_args: list[Value] = field(default_factory=list)

    def is_true(self) -> bool:
        return self.kind == "const" and self.const is True

    def string(self) -> str | None:
        return self.const if self.kind == "const" and isinstance(self.const, str) else None


@dataclass(slots=True)
class Call(CompactPickle):
    """One call expression. ``callee`` is resolved through imports where possible;
    otherwise it is the dotted text (``self._client.place``)."""

    callee: str
    text: str
    method: str
    receiver: str | None
    span: Span
    args: list[Value] = field(default_factory=list)
    kwargs: dict[str, Value] = field(default_factory=dict)
    star_kwargs: bool = False
    star_kwargs_values: list[Value] = field(default_factory=list)  # ``**expr`` arguments
    function: str | None = None  # qualname of the enclosing function, None at module level
    try_ids: list[int] = field(default_factory=list)  # enclosing try statements (innermost last)
    loop_ids: list[int] = field(default_factory=list)  # enclosing loops (innermost last)
    awaited: bool = False
    order: int = 0  # position in the enclosing function, in source order
    assigned_to: str | None = None  # ``x = call(...)`` binds x
    with_target: str | None = None  # ``with call(...) as x`` binds x


@dataclass(slots=True)
class RawErrorUse(CompactPickle):
    """Raw exception text (``str(e)``, ``f"{e}"``, ``e.args``, ``traceback.format_exc()``)
    reaching a return, a raise or a call inside an ``except`` handler.

    ``dest`` is return | raise | call; ``callee`` the resolved callee for raise/call;
    ``arg_keys`` the string keys of a dict argument (``{"role": "tool", ...}``) and
    ``arg_strings`` the string constants among that dict's values.
    """

    how: str
    dest: str
    span: Span
    callee: str | None = None
    text: str = ""
    arg_keys: list[str] = field(default_factory=list)
    arg_strings: list[str] = field(default_factory=list)


@dataclass(slots=True)
class StatusCheck(CompactPickle):
    """A comparison of a status-like field with string constants:
    ``entry.status != "succeeded"``, ``row["state"] in ("failed", "started")``."""

    function: str | None
    subject: str
    op: str  # eq | ne | in | not_in
    values: list[str]
    span: Span


@dataclass(slots=True)
class Handler(CompactPickle):
    """An ``except`` clause and what it does with the exception."""

    try_id: int
    caught: list[str]  # qualified exception names; empty for a bare except
    span: Span
    name: str | None  # ``except E as name``
    reraises: bool = False  # bare ``raise`` or ``raise ... from``/raise of the same name
    raises: list[Value] = field(default_factory=list)
    returns: list[Value] = field(default_factory=list)
    continues: bool = False  # ``continue`` (a hand-written retry when in a loop)
    calls: list[str] = field(default_factory=list)  # qualified callees inside the handler
    strings: list[str] = field(default_factory=list)  # string constants inside the handler
    raw_error_uses: list[RawErrorUse] = field(default_factory=list)
    tainted_names: list[str] = field(default_factory=list)  # locals holding raw error text


@dataclass(slots=True)
class TryBlock(CompactPickle):
    try_id: int
    span: Span
    loop_ids: list[int] = field(default_factory=list)
    body_order: tuple[int, int] = (0, 0)  # call orders covered by the try body [start, end)


@dataclass(slots=True)
class Loop(CompactPickle):
    loop_id: int
    kind: str  # for / while
    span: Span
    is_retry_shape: bool = False  # for _ in range(n) / while attempts < n / while True
    breaks: bool = False


@dataclass(slots=True)
class Assignment(CompactPickle):
    target: str  # a local name or ``self.attr``
    value: Value
    span: Span
    function: str | None
    order: int = 0


@dataclass(slots=True)
class Decorator(CompactPickle):
    qualname: str  # resolved name of the decorator (callee for called decorators)
    text: str
    called: bool
    args: list[Value] = field(default_factory=list)
    kwargs: dict[str, Value] = field(default_factory=dict)
    span: Span = field(default_factory=lambda: Span.point(1))


@dataclass(slots=True)
class Function(CompactPickle):
    qualname: str  # module-qualified: pkg.mod.Class.method
    name: str
    module: str
    class_name: str | None
    span: Span  # whole def, decorators included
    name_span: Span  # the ``def name`` line, where tool findings are anchored
    params: list[str]
    is_async: bool
    decorators: list[Decorator] = field(default_factory=list)
    docstring: str | None = None
    returns: list[Value] = field(default_factory=list)
    handlers: list[Handler] = field(default_factory=list)
    tries: list[TryBlock] = field(default_factory=list)
    loops: list[Loop] = field(default_factory=list)
    nested: list[str] = field(default_factory=list)  # qualnames of functions defined inside
    raises: list[Value] = field(default_factory=list)
    is_test: bool = False
    asserts: list[Value] = field(default_factory=list)  # ``assert`` expressions, in order


@dataclass(slots=True)
class ClassDef(CompactPickle):
    qualname: str
    name: str
    module: str
    span: Span
    name_span: Span
    bases: list[str]
    methods: list[str]  # qualnames
    attributes: dict[str, Value] = field(default_factory=dict)  # class-level assignments
    decorators: list[Decorator] = field(default_factory=list)
    self_types: dict[str, str] = field(default_factory=dict)  # self.attr -> qualified type


@dataclass(slots=True)
class Suppression(CompactPickle):
    line: int
    codes: list[str]  # empty means every code
    reason: str
    span: Span


@dataclass(slots=True)
class ModuleFacts(CompactPickle):
    path: str  # relative, "/"-separated
    module: str
    imports: dict[str, str] = field(default_factory=dict)  # local name -> qualified name
    functions: dict[str, Function] = field(default_factory=dict)
    classes: dict[str, ClassDef] = field(default_factory=dict)
    calls: list[Call] = field(default_factory=list)
    assignments: list[Assignment] = field(default_factory=list)
    dicts: list[Value] = field(default_factory=list)  # dict literals shaped like tool schemas
    suppressions: list[Suppression] = field(default_factory=list)
    comparisons: list[tuple[str | None, str, Span]] = field(default_factory=list)
    # ``name == "create_order"`` string comparisons: (function, string, span), for dispatch
    branches: list[tuple[str | None, str, Span]] = field(default_factory=list)
    # ``if name == "create_order":`` / ``case "create_order":`` (function, string, body span):
    # the statements a name-to-function dispatch runs for that name
    is_test: bool = False
    lines: int = 0
    attribute_sets: list[Assignment] = field(default_factory=list)
    # ``obj.attr = value`` on a non-self object (``create_order.handle_tool_error = True``)
    status_checks: list[StatusCheck] = field(default_factory=list)

    def calls_in(self, function: str | None) -> list[Call]:
        return [c for c in self.calls if c.function == function]

    def assignments_in(self, function: str | None) -> list[Assignment]:
        return [a for a in self.assignments if a.function == function]


class _LoadedEmpty:
    """Refuses changes: every facts object read back from a pickle shares one empty list and
    one empty dict for its empty fields (there are a million of them in a large project),
    so changing one would change them all. Facts are read, never changed, once extracted."""

    __slots__ = ()
    _global_name = ""

    def __reduce__(self) -> str:
        # Pickled by name: every entry refers to the one module-level empty container.
        return self._global_name

    def _refuse(self, *args: object, **kwargs: object) -> NoReturn:
        raise TypeError("facts read from a pickle share their empty containers; copy first")

    append = extend = insert = remove = pop = clear = sort = reverse = _refuse
    update = setdefault = popitem = __setitem__ = __delitem__ = __iadd__ = __imul__ = _refuse
    __ior__ = _refuse


class _LoadedEmptyList(_LoadedEmpty, list[Any]):
    __slots__ = ()
    _global_name = "LOADED_EMPTY_LIST"


class _LoadedEmptyDict(_LoadedEmpty, dict[Any, Any]):
    __slots__ = ()
    _global_name = "LOADED_EMPTY_DICT"


class _Layout:
    """How one facts class is written and read back: its fields in declaration order and,
    for each list or dict field, the shared empty container that None stands for."""

    def __init__(self, cls: type) -> None:
        declared = fields(cls)
        self.values_of = attrgetter(*(f.name for f in declared))
        self.loaded_values = [_loaded_empty(str(f.type)) for f in declared]
        self.container_positions = tuple(
            index for index, empty in enumerate(self.loaded_values) if empty is not None
        )
        self.defaults = [
            _NO_DEFAULT if f.default is MISSING or empty is not None else f.default
            for f, empty in zip(declared, self.loaded_values, strict=True)
        ]
        # Fields from here on all have a plain default, so a trailing run of them may go.
        self.trim_floor = max(
            (index + 1 for index, default in enumerate(self.defaults) if default is _NO_DEFAULT),
            default=0,
        )


LOADED_EMPTY_LIST = _LoadedEmptyList()
LOADED_EMPTY_DICT = _LoadedEmptyDict()
# What a cache entry may name besides the facts classes (see agentguard.cache).
PICKLED_GLOBALS = (LOADED_EMPTY_LIST._global_name, LOADED_EMPTY_DICT._global_name)


def _loaded_empty(annotation: str) -> list[Any] | dict[Any, Any] | None:
    # Annotations are strings here (``from __future__ import annotations``).
    if annotation.startswith("list["):
        return LOADED_EMPTY_LIST
    if annotation.startswith("dict["):
        return LOADED_EMPTY_DICT
    return None


_LAYOUTS = {
    value: _Layout(value)
    for value in list(globals().values())
    if isinstance(value, type) and issubclass(value, CompactPickle) and value is not CompactPickle
}
