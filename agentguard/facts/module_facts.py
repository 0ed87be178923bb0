"""Per-file facts extracted from Python source with one ``ast`` parse and one traversal.

Facts are plain data (picklable, cacheable by content hash). They describe what the code
says, not what it means: checks and the project model judge them. Names are resolved
through the module's imports, so ``from langchain_core.tools import tool as lc_tool``
makes ``@lc_tool`` a call of ``langchain_core.tools.tool``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import MISSING, dataclass, field, fields
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
    Each class's ``__reduce__`` is written for it (see :func:`_compile_reducer`).
    """

    __slots__ = ()


# One step along a chain: ("attr", name), ("call", None), or ("item", key) with the literal
# string or integer key written (None for any other key).
Step = tuple[str, "str | int | None"]
CALL_STEP: Step = ("call", None)


@dataclass(slots=True)
class Chain(CompactPickle):
    """A name or attribute chain with the calls and items taken along it, as written:
    ``self.api.events().insert(body=b)`` starts from ``self`` and steps through
    ``("attr", "api")``, ``("attr", "events")``, ``("call", None)``, ``("attr", "insert")``,
    ``("call", None)``. ``root`` is the name it starts from; "" when it starts from anything
    else, whose Value is ``start`` (``", ".join(parts)`` starts from a string)."""

    root: str
    steps: tuple[Step, ...] = ()
    start: Value | None = None

    @property
    def is_name(self) -> bool:
        """A bare name: ``client``."""
        return bool(self.root) and not self.steps

    @property
    def ends_in_call(self) -> bool:
        return bool(self.steps) and self.steps[-1][0] == "call"

    def called(self) -> str | None:
        """The name the chain's last call calls: ``insert`` for ``events().insert(...)``,
        ``build`` for ``build(...)``; None when it ends in no call of a name or attribute."""
        steps = self.steps
        if not steps or steps[-1][0] != "call":
            return None
        if len(steps) == 1:
            return self.root or None
        kind, name = steps[-2]
        return name if kind == "attr" and isinstance(name, str) else None

    def receiver(self) -> Chain | None:
        """What the last attribute is read on: ``self._client`` for ``self._client.place``
        (and for ``self._client.place(x)``); None when no attribute is read."""
        for index in range(len(self.steps) - 1, -1, -1):
            if self.steps[index][0] == "attr":
                return Chain(self.root, self.steps[:index], self.start)
        return None

    def without_items(self) -> Chain:
        """The chain without the items taken last: ``board.list_lists()`` for
        ``board.list_lists()[0]``."""
        end = len(self.steps)
        while end and self.steps[end - 1][0] == "item":
            end -= 1
        return self if end == len(self.steps) else Chain(self.root, self.steps[:end], self.start)

    def then(self, *steps: Step) -> Chain:
        """The chain with more steps taken: ``send(...)`` from ``send``."""
        return Chain(self.root, self.steps + steps, self.start)

    def base(self) -> str:
        """The dotted name the chain's first call or item is taken on: ``self.api`` for
        ``self.api.events().insert(...)``, ``service`` for ``service.users()``,
        ``board.lists`` for ``board.lists[0].add()``; "" when its first call is of a bare
        name (``build(...).users()``: made on what a function returns) or it starts from
        no name."""
        steps = self.steps
        parts: list[str] = []
        index = len(steps)
        while index:
            kind, name = steps[index - 1]
            index -= 1
            if kind == "call":
                parts = []
                if index and steps[index - 1][0] == "attr":
                    index -= 1  # the method called: the chain goes on with what it is called on
                elif not index:
                    return ""
            elif kind == "attr":
                parts.insert(0, str(name))
            else:
                parts = []
        return ".".join([self.root, *parts]) if self.root else ""


@dataclass(slots=True)
class Value(CompactPickle):
    """What an expression is, as far as a linter needs to know without running it.

    ``kind`` is one of: const, name, attr, call, dict, list, fstring, lambda, other.
    ``names`` are the bare names the expression reads (parameters, locals);
    ``calls`` the qualified callees it calls (``uuid.uuid4``, ``hashlib.sha256``);
    ``items`` the string-keyed entries of a dict literal; ``elements`` list/tuple items.

    Its structure, so that nothing above the facts reads the text again: ``chain`` for a
    name, an attribute, a call or an item (``self.api.events().insert(...)``); ``op`` with
    ``parts`` for the forms judged by their operands:

    - ``if``: a conditional expression, ``parts`` the two values it may take;
    - ``+``: a concatenation, ``parts`` its operands in order (the first 64);
    - ``not``: ``parts`` the operand;
    - a comparison with one operator (``==``, ``!=``, ``is``, ``is not``, ``in``,
      ``not in``, ``<``, ``<=``, ``>``, ``>=``): ``parts`` its left and right side;
    - an ``fstring`` has no ``op`` and ``parts`` in order: its literal text as ``const``
      Values with ``op`` ``text``, and the Values of the expressions it formats; a
      JavaScript tagged template's text (the argument of sql`SELECT ...`) has ``op`` ``tag``.
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
    parts: list[Value] = field(default_factory=list)
    # Last: a reducer leaves off a trailing run of defaults (see ``_compile_reducer``).
    chain: Chain | None = None
    op: str = ""

    def is_true(self) -> bool:
        return self.kind == "const" and self.const is True

    def string(self) -> str | None:
        return self.const if self.kind == "const" and isinstance(self.const, str) else None

    def literal_text(self) -> str | None:
        """The text a string literal holds, a template or f-string without placeholders
        (a JavaScript template literal holding a GraphQL document) included."""
        text = self.string()
        if text is not None or self.kind != "fstring" or not self.parts:
            return text
        parts = [part.string() for part in self.parts]
        return "".join(p for p in parts if p is not None) if None not in parts else None

    def template_text(self, hole: Callable[[Value], str]) -> str:
        """A template's text (an f-string, a JavaScript template): its literal parts as
        written, each value put into it as ``hole`` writes that value."""
        return "".join(
            part.const if part.op == "text" and isinstance(part.const, str) else hole(part)
            for part in self.parts
        )


# The key prefix, among a dict Value's items, of what a TypeScript object literal spreads
# (``{...options}`` is the item ``...options``).
SPREAD = "..."


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
    star_kwargs_values: list[Value] = field(default_factory=list)  # ``**expr`` arguments
    function: str | None = None  # qualname of the enclosing function, None at module level
    loop_ids: list[int] = field(default_factory=list)  # enclosing loops (innermost last)
    order: int = 0  # position in the enclosing function, in source order
    chain: Chain | None = None  # what is called, as a chain (None: not a name's chain)


# What a caught error's text is read through, by language: ``e.args`` in Python,
# ``error.message`` in TypeScript and JavaScript.
PYTHON_RAW_ERROR_ATTRIBUTES = frozenset({"args", "message", "msg", "strerror", "detail", "details"})
JS_RAW_ERROR_ATTRIBUTES = frozenset({"message", "stack", "cause", "details", "detail", "response"})


def raw_error_attributes(language: str) -> frozenset[str]:
    return PYTHON_RAW_ERROR_ATTRIBUTES if language == "python" else JS_RAW_ERROR_ATTRIBUTES


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
    # A handler that goes on for some response statuses and leaves for others
    # (facts/status_retry.py): the sample statuses it goes on for; None: no status decides.
    # (a tuple: an empty list and None would both load back as the shared empty list)
    retried_statuses: tuple[int, ...] | None = None
    # ``break`` out of the loop the ``try`` is in (not one of a loop inside the handler):
    # a handler that leaves the loop does not send the call again
    breaks: bool = False


@dataclass(slots=True)
class TryBlock(CompactPickle):
    try_id: int
    span: Span
    loop_ids: list[int] = field(default_factory=list)
    body_order: tuple[int, int] = (0, 0)  # call orders covered by the try body [start, end)
    yields: bool = False  # the body yields: a context manager's handlers wrap its caller's block


@dataclass(slots=True)
class WithBlock(CompactPickle):
    """A ``with`` / ``async with`` statement: the spans and callees of the context managers
    it enters by a call (``with self._errors("create"):``, ``async with asyncio.timeout(5):``)
    and the call orders its body covers [start, end)."""

    span: Span
    item_spans: list[Span] = field(default_factory=list)
    item_callees: list[str] = field(default_factory=list)
    body_order: tuple[int, int] = (0, 0)


@dataclass(slots=True)
class Loop(CompactPickle):
    loop_id: int
    kind: str  # for / while / comprehension (walks, repeats no statement)
    span: Span
    is_retry_shape: bool = False  # for _ in range(n) / while attempts < n / while True
    # A loop that sends again on a response status (facts/status_retry.py): the sample
    # statuses that repeat it, and the call orders of its body [start, end).
    retried_statuses: list[int] = field(default_factory=list)
    body_order: tuple[int, int] = (0, 0)
    targets: list[str] = field(default_factory=list)  # ``for a, b in ...``: the names bound
    iterable: Value | None = None  # what a ``for`` loop walks
    # The targets are fields of each row, not its positions: an object pattern
    # (``for (const { name, handler } of tools)``, ``tools.forEach(({ name }) => ...)``).
    fields: bool = False
    # A field bound to a local of another name (``{ name: toolName }``): local -> field.
    renamed: dict[str, str] = field(default_factory=dict)


@dataclass(slots=True)
class Branch(CompactPickle):
    """An ``if`` in a function: its test, the call orders its body covers [start, end),
    and whether the body leaves early (ends in return, raise, continue or break)."""

    test: Value
    span: Span
    body_order: tuple[int, int] = (0, 0)
    exits: bool = False


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


# Decorators that make a generator function a context manager: ``with f() as x`` holds what
# it yields.
CONTEXT_MANAGER_DECORATORS = frozenset(
    {"contextlib.contextmanager", "contextlib.asynccontextmanager"}
)


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
    branches: list[Branch] = field(default_factory=list)  # ``if`` statements, in order
    withs: list[WithBlock] = field(default_factory=list)
    # The class its return annotation names (``-> NotesClient``, ``-> Optional[Client]``).
    return_type: str | None = None
    # What a generator yields (``yield db``): what ``next(get_db())`` and, for one made a
    # context manager, ``with session_scope() as db`` hand their caller.
    yields: list[Value] = field(default_factory=list)
    # A parameter's default, written where the function is (``tools=TOOLSET``): what it
    # holds when a call hands it nothing.
    defaults: dict[str, Value] = field(default_factory=dict)


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
    # attributes declared as containers of one class (``adapters: dict[str, Adapter]``,
    # ``Map<string, Adapter>``): self.attr -> the class of an entry
    item_types: dict[str, str] = field(default_factory=dict)
    # attributes declared to hold anything (``agent: Any = None``): what their calls do is
    # unknown, never "no effect"
    opaque: list[str] = field(default_factory=list)
    # annotated fields: the names their annotation is made of, resolved (``tool_args:
    # Union[SendMessage, Roll]`` gives both classes), and the one string a field typed
    # ``Literal["send_message"]`` may hold (the tag of one member of a tagged union)
    field_types: dict[str, list[str]] = field(default_factory=dict)
    tags: dict[str, str] = field(default_factory=dict)


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
    branches: list[tuple[str | None, str, Span]] = field(default_factory=list)
    # ``if name == "create_order":`` / ``case "create_order":`` (function, string, body span):
    # the statements a name-to-function dispatch runs for that name
    is_test: bool = False
    lines: int = 0
    attribute_sets: list[Assignment] = field(default_factory=list)
    # ``obj.attr = value`` on a non-self object (``create_order.handle_tool_error = True``)
    status_checks: list[StatusCheck] = field(default_factory=list)
    # The names imported absolutely, as written: ``from app.tools import send`` gives
    # ``app.tools.send``, ``import app.tools`` gives ``app.tools`` (relative imports are
    # left out). Evidence of the project's own package roots (agentguard.engine.module_roots).
    absolute_imports: list[str] = field(default_factory=list)
    # ``registry[func.__name__] = action``, ``self.tools[name] = fn``: an item stored under a
    # key computed at run time, ``target`` the container as written (``self.tools``). What a
    # project's own registrar keeps (project/discovery/registrars.py).
    stores: list[Assignment] = field(default_factory=list)
    # ``for fn in TOOLS: mcp.add_tool(fn)`` at module level: the module's own ``for`` loops
    # and comprehensions (a function's are on its ``Function``), with what each walks.
    loops: list[Loop] = field(default_factory=list)
    # The language the file is written in: python, typescript or javascript (the front end
    # that read it; agentguard.facts.typescript for the last two).
    language: str = "python"
    # Where the parser could not read the file and went on after it (tree-sitter recovers:
    # TypeScript's newest type-level syntax); the rest of the file is in these facts.
    unread: list[Span] = field(default_factory=list)
    # ``from configs.tools import *``: the modules whose public names this one takes, in
    # order (a name defined nowhere here may be one of theirs)
    star_imports: list[str] = field(default_factory=list)
    # module variables declared as containers of one class (``ADAPTERS: dict[str,
    # Adapter] = {}``, ``const adapters: Record<string, Adapter> = {}``): name -> the class
    # of an entry
    item_types: dict[str, str] = field(default_factory=dict)

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


LOADED_EMPTY_LIST = _LoadedEmptyList()
LOADED_EMPTY_DICT = _LoadedEmptyDict()
# What a cache entry may name besides the facts classes (see agentguard.engine.fact_cache).
PICKLED_GLOBALS = (LOADED_EMPTY_LIST._global_name, LOADED_EMPTY_DICT._global_name)


def _loaded_empty(annotation: str) -> list[Any] | dict[Any, Any] | None:
    # Annotations are strings here (``from __future__ import annotations``).
    if annotation.startswith("list["):
        return LOADED_EMPTY_LIST
    if annotation.startswith("dict["):
        return LOADED_EMPTY_DICT
    return None


def _compile_reducer(cls: type) -> Callable[[Any], tuple[type, tuple[Any, ...]]]:
    """The ``__reduce__`` of one facts class, written out field by field.

    Encoding calls it once per facts object (about two million in a large project): a
    generic loop over a per-class layout spent more time deciding what to write than the
    pickler spent writing it. The written-out form reads each field once, puts the shared
    empty container in place of an empty one with ``or``, and leaves off the trailing run
    of fields that hold their default.
    """
    declared = fields(cls)
    namespace: dict[str, Any] = {"cls": cls}
    row: list[str] = []
    for index, f in enumerate(declared):
        empty = _loaded_empty(str(f.type))
        if empty is not None:
            namespace[f"empty_{index}"] = empty
            row.append(f"self.{f.name} or empty_{index}")
        else:
            row.append(f"self.{f.name}")
    # Only fields with a plain default may go, and only as a trailing run of them.
    trimmable = 0
    for f in reversed(declared):
        if f.default is MISSING or _loaded_empty(str(f.type)) is not None:
            break
        trimmable += 1
    lines = ["def __reduce__(self):", f"    row = ({', '.join(row)},)"]
    for index in range(len(declared) - 1, len(declared) - 1 - trimmable, -1):
        default = declared[index].default
        namespace[f"default_{index}"] = default
        namespace[f"type_{index}"] = type(default)
        # ``0 == False``: the type must match too, or a trimmed 0 would load as False.
        is_default = f"type(row[{index}]) is type_{index} and row[{index}] == default_{index}"
        lines.append(f"    if not ({is_default}):")
        lines.append(f"        return cls, row[:{index + 1}]")
    end = len(declared) - trimmable
    lines.append(f"    return cls, row[:{end}]" if trimmable else "    return cls, row")
    exec("\n".join(lines), namespace)  # the source is built above from field names only
    reducer: Callable[[Any], tuple[type, tuple[Any, ...]]] = namespace["__reduce__"]
    reducer.__qualname__ = f"{cls.__qualname__}.__reduce__"
    return reducer


# Each facts class with its own ``__reduce__``; agentguard.engine.fact_cache hands this table to its
# pickler, which then calls the reducer directly instead of through ``__reduce_ex__``.
REDUCERS: dict[type, Callable[[Any], tuple[type, tuple[Any, ...]]]] = {}
for _cls in list(globals().values()):
    if isinstance(_cls, type) and issubclass(_cls, CompactPickle) and _cls is not CompactPickle:
        _cls.__reduce__ = REDUCERS[_cls] = _compile_reducer(_cls)  # type: ignore[method-assign,assignment]
del _cls
