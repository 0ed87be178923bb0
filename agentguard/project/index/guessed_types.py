"""The project index's type guesses: what class a module variable, an attribute of a
project class or a function's result holds (``client = httpx.Client()``, ``self.g =
self.authenticate()``, ``-> FastMCP``), instances imported from other modules, and the
method a class (or one of its bases) defines under a name."""

from __future__ import annotations

from collections.abc import Iterable

from agentguard.facts.module_facts import (
    CONTEXT_MANAGER_DECORATORS,
    Function,
    ModuleFacts,
    Value,
)
from agentguard.knowledge.catalog import Catalog
from agentguard.project.definitions import framework_bases
from agentguard.project.index.symbols import Symbols
from agentguard.project.tool_facts import SELF_NAMES

# How many ``__init__.py`` re-exports a name is followed through (a cycle ends there).
MAX_REEXPORT_HOPS = 8
# How many attributes built from one another (``self.table = self.resource.Table(...)``) an
# attribute's type is followed through.
MAX_ATTRIBUTE_HOPS = 8


# What steps a generator: ``next(get_db())`` is what it yields first.
ITERATOR_STEPS = frozenset({"next", "builtins.next", "anext", "builtins.anext"})


def handed_back(fn: Function, stepped: bool) -> list[Value]:
    """What a call of ``fn`` hands its caller: what it returns, or, for a generator made a
    context manager (``with session_scope() as db``) or stepped (``next(get_db())``,
    ``stepped``), what it yields."""
    generator = fn.yields and not fn.returns
    if generator and (
        stepped or any(d.qualname in CONTEXT_MANAGER_DECORATORS for d in fn.decorators)
    ):
        return fn.yields
    return fn.returns


def unpacked_item(value: Value) -> int | None:
    """The item a name unpacked from a call's result holds: 1 for ``self._start()[1]``,
    as the extractor writes ``sandbox, port = self._start()``."""
    chain = value.chain
    if value.kind != "other" or chain is None or len(chain.steps) < 2 or not value.calls:
        return None
    (made, _), (kind, index) = chain.steps[-2:]
    if made == "call" and kind == "item" and isinstance(index, int) and index >= 0:
        return index
    return None


def _class_named(name: str) -> bool:
    """Whether ``name`` is written as a class is: capitalised, private or not
    (``_ToolsRegistry``)."""
    return name.lstrip("_")[:1].isupper()


def constructed_type(value: Value) -> str | None:
    """What a call builds, when its name says: a class (``httpx.Client``), or a boto3 client
    of a service (``boto3.client("sqs")`` gives ``boto3.client:sqs``, as the extractor types
    it)."""
    qualname = value.qualname
    if value.kind == "other" and value.calls and _built_either_way(value):
        # ``Client(api_key=key) if key else Client()``: the same class on both arms
        qualname = value.calls[0]
        return qualname if _class_named(qualname.rsplit(".", 1)[-1]) else None
    if value.kind != "call" or not qualname:
        return None
    last = qualname.rsplit(".", 1)[-1]
    if _class_named(last):
        return qualname
    if qualname.startswith("npm:") and "()" not in qualname:
        # an npm package's function builds its client (``drizzle(env.DB)``, ``neon(url)``,
        # ``google.gmail({auth})``): what it returns is typed after it, as the catalogue
        # names its methods
        return qualname
    if last in {"client", "resource"} and value.call_args:
        service = value.call_args[0].string()
        if service:
            return f"{qualname}:{service}"
    return None


def _built_either_way(value: Value) -> bool:
    """Whether ``value`` is a conditional expression both of whose arms call one and the
    same name (its only calls): ``Client(key) if key else Client()``."""
    if len(set(value.calls)) != 1 or len(value.calls) != 2 or value.op != "if":
        return False
    body, orelse = value.parts
    return (
        body.kind == "call"
        and orelse.kind == "call"
        and body.chain is not None
        and body.chain == orelse.chain
    )


class Types(Symbols):
    """The symbol table with what its names hold: each module's variables typed by what
    builds them, and the type guesses asked of classes and functions."""

    def __init__(self, modules: Iterable[ModuleFacts], catalog: Catalog) -> None:
        super().__init__(modules, catalog)
        # ``SessionLocal = sessionmaker(bind=engine)``: a module variable holding a factory
        # object whose call builds a client (the catalogue's ``callable_factories``), by the
        # variable's qualname: ``SessionLocal()`` makes a ``Session``
        self.called_types: dict[str, str] = {
            f"{facts.module}.{assignment.target}": made
            for facts in self.modules.values()
            for assignment in facts.assignments
            if assignment.function is None
            and assignment.value.kind == "call"
            and (made := catalog.callable_factories.get(assignment.value.qualname or ""))
        }
        self.module_types: dict[str, dict[str, str]] = {}
        for facts in self.modules.values():
            types: dict[str, str] = {}
            for assignment in facts.assignments:
                if assignment.function is None:
                    # a factory object is typed as what its call makes: ``SessionLocal()``,
                    # typed by its capital as the variable, holds a ``Session``
                    made = self.called_types.get(f"{facts.module}.{assignment.target}")
                    made = made or self.built_type(assignment.value)
                    if made is not None:
                        types.setdefault(assignment.target, made)
            self.module_types[facts.module] = types
        for facts in self.modules.values():
            types = self.module_types[facts.module]
            for assignment in facts.assignments:
                if assignment.function is None and assignment.target not in types:
                    value = assignment.value
                    # ``export const rawDb = sqlite``: another name for the object a
                    # variable of the module holds
                    made = types.get(value.text) if value.kind == "name" else None
                    made = made or self._made_by_factory(value)
                    if made is not None:
                        types[assignment.target] = made

    def built_type(self, value: Value) -> str | None:
        """What a call builds: a class by its name (``constructed_type``), the client a
        package's documented factory returns (``supabase.create_client(...)``, the
        catalogue's ``client_factories``), or the one a module variable holding a factory
        object makes when called (``SessionLocal()``)."""
        if value.kind == "call" and value.qualname in self.called_types:
            return self.called_types[value.qualname]
        made = constructed_type(value)
        if made is None and value.kind == "call" and value.qualname:
            exported = self._exported_class(value.qualname)
            return exported or self.catalog.client_factories.get(value.qualname)
        return made

    def _exported_class(self, qualname: str) -> str | None:
        """The project class a module exports under another name: ``new Nodemailer()``
        where ``Nodemailer`` is the default import of a module ending in ``export default
        Nodemailer`` (``mail.nodeMailer.default``)."""
        module, _, name = qualname.rpartition(".")
        facts = self.modules_by_name.get(module)
        exported = facts.imports.get(name) if facts is not None else None
        return exported if exported in self.classes else None

    def _made_by_factory(self, value: Value) -> str | None:
        """``app = create_server()``, where the project function ``create_server`` returns
        ``FastMCP(...)`` on every path, or declares ``-> FastMCP``: the class the module
        variable holds, as ``app = FastMCP(...)`` would."""
        entry = self.functions.get(value.qualname or "") if value.kind == "call" else None
        if entry is None:
            return None
        fn = entry[0]
        if fn.class_name and not value.text.startswith(f"{fn.class_name.rsplit('.', 1)[-1]}."):
            return None  # a method, unless called on its class (``Service.getInstance()``)
        named = fn.return_type
        if named and named.rsplit(".", 1)[-1][:1].isupper():
            module, _, name = named.rpartition(".")
            held = self.modules_by_name.get(module)
            if held is None or not any(
                a.function is None and a.target == name for a in held.assignments
            ):
                return named  # not a type variable or an alias: a class
        made = {self.built_type(returned) for returned in fn.returns}
        return made.pop() if len(made) == 1 and None not in made else None

    def returned_binding(self, value: Value, fn: Function, facts: ModuleFacts) -> Value:
        """A returned name as the function last bound it (``sandbox = Sandbox(...)``)."""
        if value.kind != "name":
            return value
        bound = self.local_assignments(facts, fn.qualname, value.text)
        return bound[-1].value if bound else value

    def _declared_return(self, fn: Function) -> str | None:
        """The class ``fn``'s return annotation names; None for a type variable
        (``T = TypeVar("T")``: ``def instance(self, kind: type[T]) -> T`` names no class)."""
        named = fn.return_type
        held = self.module_variable(named) if named else None
        if held is not None and (held.qualname or "").rsplit(".", 1)[-1] == "TypeVar":
            return None
        return named

    def _accessor_type(self, cls_qual: str, method_name: str) -> str | None:
        """``self._stripe().customers.create``, or ``self.client.post`` through a
        ``@property``/``@cached_property``: the type an accessor method returns: the class
        its return annotation names, the one it builds and returns (``return
        WebClient(token=...)``), or one of the instance's typed attributes (``return
        self._client``)."""
        method = self.find_method(cls_qual, method_name)
        fn = self.function(method) if method else None
        if fn is None:
            return None
        if self._declared_return(fn):
            return fn.return_type
        facts = self.functions[method][1] if method else None
        # a returned local as it was bound (``transport = createTransport(...)``, then
        # ``return transport``)
        built = {
            self.built_type(self.returned_binding(value, fn, facts) if facts else value)
            for value in fn.returns
        }
        if len(built) == 1 and None not in built:
            return built.pop()
        for value in fn.returns:
            if (
                value.kind == "attr"
                and value.text.startswith("self.")
                and value.text.count(".") == 1
            ):
                typed = self.self_type(cls_qual, value.text[5:])
                if typed:
                    return typed
        return None

    def self_type(self, cls_qual: str, attr: str, hops: int = 0) -> str | None:
        for current in self.lineage(cls_qual):
            if current not in self.classes:
                continue
            cls = self.classes[current][0]
            if attr in cls.self_types:
                typed = cls.self_types[attr]
                head, _, rest = typed.partition(".")
                if head in SELF_NAMES and rest and hops < MAX_ATTRIBUTE_HOPS:
                    # ``self.table = self.resource.Table(name)``: built from another attribute,
                    # whose type the file alone could not name
                    owner, _, tail = rest.partition(".")
                    base = self.self_type(cls_qual, owner, hops + 1)
                    return f"{base}.{tail}" if base and tail else base
                return typed
            validated = self._validator_bound(current, attr) or self._factory_default(current, attr)
            if validated is not None:
                return validated
        return self._built_by_method(cls_qual, attr)

    def _factory_default(self, cls_qual: str, attr: str) -> str | None:
        """``process: Any = Field(default_factory=_default_process)`` where the project
        function builds and returns ``BashProcess(...)``: the field holds what it builds."""
        cls, facts = self.classes[cls_qual]
        default = cls.attributes.get(attr)
        factory = default.call_kwargs.get("default_factory") if default is not None else None
        if factory is None or factory.kind not in {"name", "attr"}:
            return None
        target = self.project_function(factory.qualname or factory.text, facts)
        entry = self.functions.get(target) if target else None
        if entry is None:
            return None
        built = {self.built_type(value) for value in entry[0].returns}
        return built.pop() if len(built) == 1 and None not in built else None

    def _validator_bound(self, cls_qual: str, attr: str) -> str | None:
        """``values["client"] = Client(...)`` (or a local holding one) in a validator the
        model runs on its input before it is built (``@model_validator(mode="before")``,
        ``@root_validator(pre=True)``, LangChain's ``@pre_init``): the field ``attr`` holds
        what was stored under its name."""
        cls, facts = self.classes[cls_qual]
        for method in cls.methods:
            fn = self.function(method)
            if fn is None or not any(
                self.catalog.field_validators(d.qualname) for d in fn.decorators
            ):
                continue
            data = [p for p in fn.params if p not in SELF_NAMES][:1]
            for param in data:
                for assignment in self.local_assignments(facts, method, f"{param}[{attr}]"):
                    value = assignment.value
                    if value.kind == "name":
                        value = (
                            self._bound_before(facts, method, value.text, assignment.order) or value
                        )
                    made = self.built_type(value) or self._handed_by_client(
                        facts, method, value, assignment.order
                    )
                    if made is not None:
                        return made
        return None

    def _bound_before(self, facts: ModuleFacts, method: str, name: str, order: int) -> Value | None:
        """What the local ``name`` was last bound to in ``method`` before ``order``."""
        held = [a for a in self.local_assignments(facts, method, name) if a.order <= order]
        return held[-1].value if held else None

    def _handed_by_client(
        self, facts: ModuleFacts, method: str, value: Value, order: int
    ) -> str | None:
        """``g.projects.get(name)`` with ``g = gitlab.Gitlab(...)`` in the same function: the
        object the client's call hands out, named by the client's type and the calls made on
        it (``gitlab.Gitlab.projects.get``), so calls on it resolve into the client's package."""
        if value.kind != "call" or "(" not in value.text:
            return None
        chain = value.text.split("(", 1)[0]
        root, _, rest = chain.partition(".")
        if not rest or not root.isidentifier():
            return None
        bound = self._bound_before(facts, method, root, order)
        client = self.built_type(bound) if bound is not None else None
        return f"{client}.{rest}" if client is not None else None

    def _built_by_method(self, cls_qual: str, attr: str) -> str | None:
        """``self.g = self.authenticate()``, where the class's method builds and returns
        ``Github(auth=...)`` on every path (or declares ``-> Github``): the attribute holds
        what the method returns (``_accessor_type``); ``self.client = db_client``: the
        module instance it is handed."""
        key = (cls_qual, attr)
        if key in self._memo.method_built:
            return self._memo.method_built[key]
        self._memo.method_built[key] = None  # a method returning ``self.g`` asks again
        found: str | None = None
        for value in self.self_bindings(cls_qual, attr):
            called = value.calls[0] if value.kind == "call" and value.calls else ""
            head, _, name = called.partition(".")
            if head in SELF_NAMES and name.isidentifier():
                found = found or self._accessor_type(cls_qual, name)
            elif value.kind == "call":
                # ``self.search = create_search_client(...)``: a project factory
                found = found or self._made_by_factory(value)
            elif value.kind in {"name", "attr"} and value.qualname:
                # ``self.client = db_client``, the module's (or another module's)
                # ``db_client = DynamoDBClient()``: the instance it is handed
                held = self.resolve_instance(value.qualname)
                if held != value.qualname:
                    found = found or held
        self._memo.method_built[key] = found
        return found

    def self_bindings(self, cls_qual: str, attr: str) -> list[Value]:
        """What the methods of the class ``cls_qual`` bind ``self.<attr>`` to, in the order
        its methods are written (``__init__`` first when written first)."""
        entry = self.classes.get(cls_qual)
        if entry is None:
            return []
        cls, facts = entry
        target = f"self.{attr}"
        return [
            assignment.value
            for method in cls.methods
            for assignment in self.local_assignments(facts, method, target)
        ]

    def inherited_method(self, qualname: str) -> str | None:
        """``models.Task.insert``, where the project class ``Task(beanie.Document)`` and its
        project bases define no ``insert``: the package class's method it inherits
        (``beanie.Document.insert``), when the catalogue knows it (an ODM's ``save``, a
        Django manager's ``objects.create``). None for a name no project class starts, a
        method or attribute the project defines, or a class of several package bases."""
        memo = self._memo.inherited
        if qualname in memo:
            return memo[qualname]
        memo[qualname] = found = self._inherited_method(qualname)
        return found

    def _inherited_method(self, qualname: str) -> str | None:
        parts = qualname.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            owner = ".".join(parts[:cut])
            if owner not in self.classes:
                continue
            first = parts[cut]
            lineage = [current for current in self.lineage(owner) if current in self.classes]
            if self.find_method(owner, first) is not None or any(
                first in self.classes[current][0].attributes
                or first in self.classes[current][0].self_types
                for current in lineage
            ):
                return None
            bases = {
                base
                for current in lineage
                for base in self.classes[current][0].bases
                if base not in self.classes and "." in base
            }
            if len(bases) != 1:
                return None
            inherited = ".".join([bases.pop(), *parts[cut:]])
            catalog = self.catalog
            known = catalog.sinks(inherited) is not None or catalog.reads(inherited)
            return inherited if known else None
        return None

    def find_method(self, cls_qual: str, name: str) -> str | None:
        for current in self.lineage(cls_qual):
            candidate = f"{current}.{name}"
            if candidate in self.functions:
                return candidate
        if cls_qual not in self.classes:
            return None
        # bases written as their module imports them, or generic (``ToolkitCore[list[T]]``)
        for base in framework_bases(self, cls_qual):
            candidate = f"{base}.{name}"
            if candidate in self.functions:
                return candidate
        return None

    def resolve_instance(self, qualname: str) -> str:
        """``pkg.app.mcp.tool`` -> ``fastmcp.FastMCP.tool`` when ``pkg/app.py`` holds
        ``mcp = FastMCP(...)``: an instance imported from another project module."""
        # Memoised: the same dotted names come from every call site.
        found = self._memo.instances.get(qualname)
        if found is None:
            found = self._memo.instances[qualname] = self._resolve_instance(qualname)
        return found

    def _resolve_instance(self, qualname: str, hops: int = 0) -> str:
        parts = qualname.split(".")
        if parts[0] not in self._module_firsts:
            return qualname
        for cut in range(len(parts) - 1, 0, -1):
            module = ".".join(parts[:cut])
            facts = self.modules_by_name.get(module)
            if facts is None:
                continue
            name = ".".join(parts[: cut + 1])
            typed = self.module_types.get(module, {}).get(parts[cut])
            if typed:
                return ".".join([typed, *parts[cut + 1 :]])
            # ``billing/__init__.py`` re-exports ``from .gateway import PaymentGateway``:
            # ``billing.PaymentGateway`` is ``billing.gateway.PaymentGateway``.
            exported = facts.imports.get(parts[cut])
            if (
                exported
                and exported != name
                and name not in self.classes
                and name not in self.functions
                and hops < MAX_REEXPORT_HOPS
            ):
                return self._resolve_instance(".".join([exported, *parts[cut + 1 :]]), hops + 1)
            if facts.language != "python" and name not in self.classes and hops < MAX_REEXPORT_HOPS:
                # ``export * from "./agent"`` in a barrel: the class that module defines
                for star in facts.star_imports:
                    owner, rest = f"{star}.{parts[cut]}", parts[cut + 1 :]
                    if owner not in self.classes:
                        continue
                    # ``AgentContext.cms.articles``: through the attributes it types
                    while len(rest) >= 2:
                        typed = self.self_type(owner, rest[0])
                        if typed is None:
                            break
                        owner, rest = typed, rest[1:]
                    return self._resolve_instance(".".join([owner, *rest]), hops + 1)
            return qualname
        return qualname
