"""Finder: functions decorated with a project's own registrar.

A registrar is a decorator the project writes for itself that keeps the function it is
given: it stores it (or a record built from it) in a container, ``self.actions[fn.__name__]
= Action(function=fn, ...)``, ``TOOLS.append(fn)``::

    class Registry:
        def __init__(self):
            self.entries = {}

        def command(self, description):          # a decorator factory...
            def keep(func):                       # ...whose decorator stores its argument
                self.entries[func.__name__] = Entry(func, description, schema_of(func))
                return func
            return keep

        def as_model(self):                       # the store read back into a schema
            return create_model("Commands", **{n: (e.params, None) for n, e in ...})

What a registrar keeps is a tool only when the store reaches a model: a function of the
same class (or module) reads the container and turns it into a schema or tool specs (it
calls a schema builder of ``structural_bases.schema_builders``, writes a dict shaped like
a tool spec, or passes ``tools=``). A registry of routes, commands or event handlers,
never described to a model, is left alone. The decorator may be used through any object
the project types (``@self.registry.command(...)`` on closures inside a method,
``@app.command(...)`` on an instance imported from another module), and through a factory
that returns another's decorator (``def command(self, d): return self.registry.command(d)``).
Nothing here knows what the registrar, its class or its container are called.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from agentguard.diagnostics import Location
from agentguard.facts.module_facts import Call, Decorator, Function, ModuleFacts, Value
from agentguard.knowledge.catalog import ToolForm
from agentguard.project.definitions import enclosing_class, local_function, returned_local_function
from agentguard.project.discovery.builder import FoundTools
from agentguard.project.discovery.candidates import function_tool
from agentguard.project.discovery.class_tools import (
    Family,
    class_tools,
    describes_a_tool,
    entry_method,
    schema_shaped,
    self_string,
)
from agentguard.project.discovery.framework_data import structural_spec
from agentguard.project.discovery.model_reach import ModelReach
from agentguard.project.discovery.registration_names import project_targets
from agentguard.project.tool_facts import SELF_NAMES, ToolFacts

if TYPE_CHECKING:
    from agentguard.project.index import ProjectIndex

LOCALS = ".<locals>."
# container methods that keep their argument
KEEPING = frozenset({"append", "add", "insert", "setdefault", "__setitem__", "update"})
FORM = ToolForm("custom", "registrar")


@dataclass(frozen=True)
class Store:
    """Where a registrar keeps what it is given: ``container`` as written in ``function``."""

    function: str
    container: str
    position: int = 0  # the parameter it keeps (``register(name, fn)`` keeps ``fn``: 1)


class _Registrars:
    """The project's registrars, worked out once per function asked about."""

    def __init__(self, project: ProjectIndex) -> None:
        self.project = project
        _, spec = structural_spec(project)
        self.builders = frozenset((spec or {}).get("schema_builders") or ())
        # what describes a tool to a model beside its name (a description, a schema)
        self.declarations = tuple((spec or {}).get("declaration_attributes") or ())
        self.stored: dict[tuple[str, int], Store | None] = {}
        self.facing: dict[tuple[str, str], bool] = {}
        self.spec_methods: dict[str, bool] = {}  # method name -> every such method writes a spec
        self.reach: ModelReach | None = None  # which functions call a model, when first asked
        self.names = tuple((spec or {}).get("name_attributes") or ())
        self.family: Family | None = None  # the project's classes by base, when first asked

    # -- what a decorator applies -----------------------------------------------------
    def store_of(self, qualname: str, called: bool, depth: int = 0) -> Store | None:
        """The store of the registrar that ``@qualname`` (``called``: ``@qualname(...)``)
        applies to the function under it."""
        entry = self.project.functions.get(qualname)
        if entry is None or depth > 3:
            return None
        fn, facts = entry
        if not called:
            return self.stores(qualname)
        nested = returned_local_function(self.project, qualname)
        if nested is not None:
            return self.stores(nested)
        for value in fn.returns:
            if value.kind == "call" and value.chain is not None and value.chain.ends_in_call:
                # ``return self.registry.action(description, **kwargs)``: another factory
                for target in self.targets(value.text.split("(", 1)[0], fn, facts):
                    found = self.store_of(target, True, depth + 1)
                    if found is not None:
                        return found
        return None

    def keeps_for_a_model(self, registrar: str, position: int, handed: int) -> bool:
        """Whether the function ``registrar`` keeps the function handed at ``position``, and
        keeps it, or one of the ``handed`` arguments beside it, where a model reads it back:
        ``register_tool(spec, executor)`` keeps the executor in a lookup by name and the
        spec in the list the model is sent."""
        kept = self.stores(registrar, position)
        if kept is None:
            return False
        return any(
            store is not None and store.function == kept.function and self.model_facing(store)
            for store in [
                kept,
                *(self.stores(registrar, at) for at in range(handed) if at != position),
            ]
        )

    def targets(self, written: str, fn: Function | None, facts: ModuleFacts) -> list[str]:
        """The project functions a decorator written ``written`` in ``fn`` may be."""
        return project_targets(self.project, written, fn, facts)

    # -- what a registrar keeps ------------------------------------------------------
    def stores(self, qualname: str, position: int = 0, depth: int = 0) -> Store | None:
        """The container the function ``qualname`` stores its parameter at ``position``
        (its first by default) in, itself or through a project function it hands it to."""
        key = (qualname, position)
        if key not in self.stored:
            self.stored[key] = None  # a recursion ends here
            self.stored[key] = self._find_store(qualname, position, depth)
        return self.stored[key]

    def held_names(self, qualname: str, position: int = 0) -> set[str]:
        """The names in ``qualname`` holding its parameter at ``position`` or what is made
        of it."""
        project = self.project
        fn, facts = project.functions[qualname]
        params = [p for p in fn.params if p not in SELF_NAMES][position : position + 1]
        if not params:
            return set()
        # the parameter, and the wrappers defined in the registrar (they close over it)
        held = set(params) | {nested.rsplit(".", 1)[-1] for nested in fn.nested}
        assignments = project.local_assignments(facts, qualname)
        for _ in range(3):  # ``wrapped = func``, ``action = Action(function=wrapped)``
            grown = held | {a.target for a in assignments if held & set(a.value.names)}
            if grown == held:
                break
            held = grown
        return held

    def _find_store(self, qualname: str, position: int, depth: int) -> Store | None:
        project = self.project
        fn, facts = project.functions[qualname]
        held = self.held_names(qualname, position)
        if not held:
            return None
        for store in facts.stores:
            if store.function == qualname and held & set(store.value.names):
                return Store(qualname, store.target, position)
        handed_on: list[tuple[str, int]] = []
        nested = {name.rsplit(".", 1)[-1]: name for name in fn.nested}
        for call in project.calls_in(qualname):
            # ``return decorator(tool_function)``: a decorator used bare or called applies
            # the one nested in it
            target = project.call_site(call, fn, facts).target or nested.get(call.callee)
            if target is not None and target in project.functions:
                # ``manager.register_tool(func.__name__, func, description)``: handed on to
                # a project function (``desk.add(...)`` is the project's, not a set's)
                position_there = _handed_at(project, call, target, held)
                if position_there is not None and target != qualname:
                    handed_on.append((target, position_there))
            elif call.method in KEEPING and call.receiver:
                if any(held & set(arg.names) for arg in [*call.args, *call.kwargs.values()]):
                    # a module's own container is written resolved: ``pkg.tools.SHELF``
                    receiver = call.receiver.removeprefix(facts.module + ".")
                    return Store(qualname, receiver, position)
        for target, position_there in handed_on if depth < 3 else ():
            found = self.stores(target, position_there, depth + 1)
            if found is not None:
                return found
        return None

    # -- whether the store reaches a model -------------------------------------------
    def model_facing(self, store: Store) -> bool:
        project = self.project
        fn, facts = project.functions[store.function]
        container = store.container
        owner: str | None = None
        if container.split(".", 1)[0] in SELF_NAMES:
            owner = enclosing_class(project, fn)
            if owner is None:
                return False
        key = (owner or facts.module, container)
        if key not in self.facing:
            own = self._flow(
                facts, store.function, None, self.held_names(store.function, store.position)
            )
            readers = [
                (reader_facts, reader, written)
                for reader_facts, reader, written in self._readers(owner, facts, container)
                if reader is None or not reader.startswith(store.function)
            ]
            self.facing[key] = (
                self._hands_to_framework(facts, store.function, own)
                or _describes_as_tool(facts, fn)
                or any(self._builds_specs(*reader) for reader in readers)
                or any(self._lists_for_a_model(*reader) for reader in readers)
                or any(
                    self._builds_specs(caller_facts, caller, called)
                    for reader_facts, reader, written in readers
                    for caller_facts, caller, called in self._callers_of_getter(
                        reader_facts, reader, written
                    )
                )
            )
        return self.facing[key]

    def instance_tools(self, cls_qual: str) -> list[ToolFacts]:
        """The tool an object a registrar keeps is: its class, named by the name it gives
        itself (``structural_bases.name_attributes``; else its class's name), run by the
        method a dispatch runs on it."""
        if self.family is None:
            self.family = Family(self.project)
        family = self.family
        entry = entry_method(self.project, family, cls_qual, set())
        if entry is None:
            return []
        name = next(
            (n for a in self.names if (n := self_string(self.project, family, cls_qual, a))),
            cls_qual.rsplit(".", 1)[-1],
        )
        return class_tools(self.project, cls_qual, name, entry, FORM)

    def _lists_for_a_model(self, facts: ModuleFacts, reader: str | None, written: str) -> bool:
        """Whether ``reader`` walks the whole store describing each entry (``for name, t in
        _tools.items(): lines.append(f"- {name}: {t.description}")``: the tools listed in a
        prompt) where a model is called, or in a function a model's caller calls. Handlers
        called one after another beside a model call are described to nobody."""
        fn = facts.functions.get(reader) if reader else None
        if fn is None:
            return False
        elements = {
            target
            for loop in fn.loops
            if loop.iterable is not None and _reads(loop.iterable.text, written)
            for target in loop.targets
        }
        if not elements:
            return False
        project = self.project
        texts = [
            value.text
            for call in project.calls_in(fn.qualname)
            for value in (*call.args, *call.kwargs.values())
        ]
        texts += [a.value.text for a in project.local_assignments(facts, fn.qualname)]
        texts += [value.text for value in fn.returns]
        described = {
            f"{element}{reading}"
            for element in elements
            for attribute in self.declarations
            for reading in (f".{attribute}", f'["{attribute}"]', f"['{attribute}']")
        }
        if not any(reading in text for text in texts for reading in described):
            return False
        if self.reach is None:
            self.reach = ModelReach(project)
        return self.reach.near(fn.qualname)

    def _callers_of_getter(
        self, facts: ModuleFacts, reader: str | None, written: str
    ) -> Iterator[tuple[ModuleFacts, str | None, str]]:
        """When ``reader`` returns what it reads of ``written`` (``def enabled(cls): return
        {n: e["instance"] for n, e in cls._registry.items()}``), the functions calling it,
        each with the call as written (``cls.enabled``): they read the store through it."""
        fn = facts.functions.get(reader) if reader else None
        if fn is None:
            return
        flow = self._flow(facts, reader, written, set())
        returned = {value.text for value in fn.returns if value.kind == "name"}
        if not any(flow.carries(value) for value in fn.returns) and not any(
            # ``kept[name] = info["instance"]`` in a loop over the store, ``return kept``
            store.function == reader and store.target in returned and flow.carries(store.value)
            for store in facts.stores
        ):
            return
        # the callers anywhere in the project: a module-level registry is read through its
        # getter by the modules importing it (``tools=tool_registry.get("main")``), found
        # through the calls of the getter's name
        project = self.project
        for call, call_facts in project.calls_named(fn.name):
            if call_facts.is_test or call.function == fn.qualname:
                continue
            caller = project.function(call.function) if call.function else None
            if project.call_site(call, caller, call_facts).target == fn.qualname:
                yield call_facts, call.function, call.text.split("(", 1)[0]

    def module_object_facing(self, facts: ModuleFacts, variable: str) -> bool:
        """Whether what is read of the module variable ``variable`` of ``facts`` (an object
        a decorator keeps functions in) is turned into tool specs or handed to a model."""
        return any(
            self._builds_specs(reader_facts, reader, written)
            for reader_facts, reader, written in self._readers(None, facts, variable)
        )

    def _readers(
        self, owner: str | None, facts: ModuleFacts, container: str
    ) -> Iterator[tuple[ModuleFacts, str | None, str]]:
        """The functions of ``owner`` that read ``container``; for a module's container,
        the functions and module-level code of its module, and of the modules importing
        it, that read it."""
        project = self.project
        scopes: list[tuple[ModuleFacts, str, list[str | None]]]
        if owner is not None:
            # the class's methods, and its subclasses' (a chat loop in ``PassthroughHandler``
            # reads what ``BaseHandler.register_tool`` kept)
            scopes = [
                (
                    owner_facts,
                    container,
                    [q for q in owner_facts.functions if q.startswith(cls + ".")],
                )
                for cls, owner_facts in [
                    (owner, facts),
                    *((sub, project.classes[sub][1]) for sub in project.subclasses(owner)),
                ]
            ]
        else:
            head, _, rest = container.partition(".")
            scopes = [(facts, container, [None, *facts.functions])]
            for other in project.modules.values():
                for alias, imported in other.imports.items():
                    if other is facts:
                        break
                    if imported == f"{facts.module}.{head}":
                        name = f"{alias}.{rest}" if rest else alias
                    elif imported == facts.module:  # ``from pkg import tools``
                        name = f"{alias}.{container}"
                    else:
                        continue
                    scopes.append((other, name, [None, *other.functions]))
        for scope_facts, written, functions in scopes:
            texts: dict[str | None, list[str]] = {}
            for assignment in scope_facts.assignments:
                texts.setdefault(assignment.function, []).append(assignment.value.text)
            for call in scope_facts.calls:
                held = texts.setdefault(call.function, [])
                held += [call.receiver or "", call.text]
                held += [value.text for value in [*call.args, *call.kwargs.values()]]
            for qualname in functions:
                fn = scope_facts.functions.get(qualname) if qualname else None
                read = list(texts.get(qualname, []))
                if fn is not None:
                    read += [loop.iterable.text for loop in fn.loops if loop.iterable is not None]
                    read += [value.text for value in fn.returns]
                if any(_reads(text, written) for text in read):
                    yield scope_facts, qualname, written

    def _flow(
        self, facts: ModuleFacts, function: str | None, written: str | None, seeds: set[str]
    ) -> _Flow:
        """What in ``function`` (None: module level) is made from ``written`` or ``seeds``."""
        held = set(seeds)
        fn = facts.functions.get(function) if function else None
        assignments = self.project.local_assignments(facts, function)
        loops = [loop for loop in (fn.loops if fn else ()) if loop.iterable is not None]
        flow = _Flow(written, held)
        for _ in range(4):
            grown = set(held)
            grown |= {a.target for a in assignments if flow.carries(a.value)}
            grown |= {
                t
                for loop in loops
                if loop.iterable and flow.carries(loop.iterable)
                for t in loop.targets
            }
            if grown == held:
                break
            held |= grown
        return flow

    def _hands_to_framework(self, facts: ModuleFacts, function: str | None, flow: _Flow) -> bool:
        """Whether ``function`` (None: module level) hands what ``flow`` carries to a
        framework's tool registration, factory or agent (``mcp.add_tool(fn)``,
        ``Tool.from_function(fn)``, ``Agent(tools=...)``) or to a model API as tool specs."""
        forms = self.project.catalog.tool_forms
        model_calls = self.project.catalog.spec_sinks
        for site in self.project.call_sites(facts):
            if site.call.function != function or not flow.reaches(site.call):
                continue
            callee = site.callee
            if forms["factory"](callee) or forms["registry"](callee):
                return True
            form = forms["decorator"](callee)
            if form is not None and form.framework != "agentguard":
                return True
            keywords = model_calls(callee)
            if keywords and any(k in site.call.kwargs for k in keywords):
                return True
        return False

    def _builds_specs(self, facts: ModuleFacts, function: str | None, written: str) -> bool:
        """Whether ``function`` (None: module level) turns what it reads of ``written``
        into a schema or tool specs, or hands it to a framework or a model API."""
        flow = self._flow(facts, function, written, set())
        fn = facts.functions.get(function) if function else None
        calls = self.project.calls_in(function) if function else facts.calls_in(None)
        each_writes_a_spec = False
        for call in calls:
            if flow.reaches(call) and (
                call.method in self.builders
                or call.callee.rsplit(".", 1)[-1] in self.builders
                or "tools" in call.kwargs
            ):
                return True
            # ``[w.to_dict() for w in kept]``: each kept object writes its own spec
            each_writes_a_spec = each_writes_a_spec or (
                fn is not None
                and call.chain is not None
                and call.chain.root in flow.held
                and self._writes_a_spec(call.method)
            )
        if self._hands_to_framework(facts, function, flow):
            return True
        if fn is None:
            return False
        span = fn.span
        return each_writes_a_spec or any(
            d.span is not None and span.line <= d.span.line <= span.end_line and flow.carries(d)
            for d in facts.dicts
        )

    def _writes_a_spec(self, method: str) -> bool:
        """Whether every project method named ``method`` writes a tool spec (a dict of a
        name, a description and a parameter schema): what an object it is called on is,
        the call does not say, but all the project's methods so named describe a tool."""
        if method not in self.spec_methods:
            found = [
                (fn, facts)
                for fn, facts in (
                    self.project.functions[q] for q in self.project.by_name.get(method, ())
                )
                if fn.class_name
            ]
            self.spec_methods[method] = bool(found) and all(
                _describes_as_tool(facts, fn) for fn, facts in found
            )
        return self.spec_methods[method]


def _handed_at(project: ProjectIndex, call: Call, target: str, held: set[str]) -> int | None:
    """The position among ``target``'s parameters at which ``call`` hands it one of the
    names in ``held`` itself, or a record built of one (``registry.add(Tool(name=fn.__name__,
    run=fn))``), if any."""
    params = [p for p in project.functions[target][0].params if p not in SELF_NAMES]
    for index, arg in enumerate(call.args):
        if _holds(arg, held):
            return index
    for name, arg in call.kwargs.items():
        if _holds(arg, held) and name in params:
            return params.index(name)
    return None


def _holds(value: Value, held: set[str]) -> bool:
    """Whether ``value`` is one of the names in ``held``, or a call built of one."""
    if value.kind == "name":
        return value.text in held
    return value.kind == "call" and any(
        argument.kind == "name" and argument.text in held
        for argument in [*value.call_args, *value.call_kwargs.values()]
    )


def _describes_as_tool(facts: ModuleFacts, fn: Function) -> bool:
    """Whether the registrar itself writes a tool spec for what it keeps (``{"name":
    tool_name, "description": description, "parameters": parameters}``), or a record of
    one (``Card(name=name, description=description, arguments=schema)``): the schema may
    reach the model from elsewhere (a platform's console), but the record says what the
    kept functions are."""
    span = fn.span
    return any(
        d.span is not None
        and span.line <= d.span.line <= span.end_line
        and describes_a_tool(d.items)
        for d in facts.dicts
    ) or any(
        span.line <= call.span.line <= span.end_line and _tool_record(call.kwargs)
        for call in facts.calls
    )


def _tool_record(fields: dict[str, Value]) -> bool:
    """A record built with a tool spec's fields: a name, a description and a parameter
    schema, which a record may call its ``arguments`` (a list of arguments, as a prompt's,
    is no schema)."""
    if describes_a_tool(fields):
        return True
    schema = fields.get("arguments")
    return (
        "name" in fields
        and "description" in fields
        and schema is not None
        and schema.kind not in {"list", "tuple", "const"}
        and schema_shaped(schema)
    )


class _Flow:
    """The values made from a container (read as ``written``) or from some names."""

    def __init__(self, written: str | None, held: set[str]) -> None:
        self.written = written
        self.held = held

    def carries(self, value: Value) -> bool:
        if self.written is not None and _reads(value.text, self.written):
            return True
        return bool(self.held & set(value.names))

    def reaches(self, call: Call) -> bool:
        """Whether ``call`` is handed (or made on) what the flow carries."""
        receiver = call.receiver or ""
        if receiver.split(".", 1)[0] in self.held:
            return True
        if self.written is not None and _reads(receiver, self.written):
            return True
        handed = [*call.args, *call.kwargs.values(), *call.star_kwargs_values]
        return any(self.carries(value) for value in handed)


def _call_reads(call: Call, container: str | None) -> bool:
    """Whether ``call`` is handed ``container`` (or is called on it)."""
    if container is None:
        return True
    texts = [call.receiver or "", *(v.text for v in [*call.args, *call.kwargs.values()])]
    return any(_reads(text, container) for text in texts)


def _reads(text: str, container: str) -> bool:
    """Whether ``text`` reads ``container`` (``self.actions.items()`` reads ``self.actions``)."""
    at = text.find(container)
    while at >= 0:
        before = text[at - 1] if at else ""
        after = text[at + len(container) : at + len(container) + 1]
        inside = before.isalnum() or before in {"_", "."} or after.isalnum() or after == "_"
        if not inside:
            return True
        at = text.find(container, at + 1)
    return False


def find(project: ProjectIndex, found: FoundTools) -> Iterator[ToolFacts]:
    registrars = _Registrars(project)
    decorator_form = project.catalog.tool_forms["decorator"]
    taken = found.functions()
    for qualname, (fn, facts) in project.functions.items():
        if facts.is_test or not fn.decorators or qualname in taken:
            continue
        for dec in fn.decorators:
            if decorator_form(dec.qualname) is not None:
                break  # a framework's own decorator: its finder has judged it
            tool = _registered(project, registrars, qualname, fn, dec, facts) or (
                _kept_by_package_object(project, registrars, qualname, dec, facts)
            )
            if tool is not None:
                taken.add(qualname)
                yield tool
                break
    # ``registry.register(send_email)``, ``handler.register_tool(spec, send_email)``: a
    # registrar called on a function of the project, which it keeps at that position
    for facts in project.modules.values():
        if facts.is_test:
            continue
        for site in project.call_sites(facts):
            call = site.call
            if not call.args or site.target is None or site.target not in project.functions:
                continue
            handed_at = _handed_function(project, call, facts)
            if handed_at is None:
                kept = _handed_instance(project, call)
                if kept is not None and kept[0] not in taken:
                    cls_qual, position = kept
                    if registrars.keeps_for_a_model(site.target, position, len(call.args)):
                        taken.add(cls_qual)
                        yield from registrars.instance_tools(cls_qual)
                continue
            function, position = handed_at
            if function in taken or function == site.target:
                continue
            if not registrars.keeps_for_a_model(site.target, position, len(call.args)):
                continue
            name_value = call.kwargs.get("name")
            name = name_value.string() if name_value is not None else None
            site_at = Location(facts.path, call.span)
            tool = function_tool(project, function, FORM, site_at, name, dict(call.kwargs))
            if tool is not None:
                taken.add(function)
                yield tool


def _handed_function(
    project: ProjectIndex, call: Call, facts: ModuleFacts
) -> tuple[str, int] | None:
    """The first project function ``call`` hands by position (a name, a bound method or a
    function nested beside the call), with that position."""
    for position, handed in enumerate(call.args):
        if handed.kind not in {"name", "attr"}:
            continue
        function = project.project_function(handed.qualname, facts) or local_function(
            project, handed, call
        )
        if function is not None:
            return function, position
    return None


def _handed_instance(project: ProjectIndex, call: Call) -> tuple[str, int] | None:
    """``registry.register(GitHubTool())``: the project class the first object ``call``
    hands by position is built from, with that position."""
    for position, handed in enumerate(call.args):
        if handed.kind == "call" and handed.qualname in project.classes:
            return handed.qualname, position
    return None


def _registered(
    project: ProjectIndex,
    registrars: _Registrars,
    qualname: str,
    fn: Function,
    dec: Decorator,
    facts: ModuleFacts,
) -> ToolFacts | None:
    for target in registrars.targets(dec.qualname, fn, facts):
        if target == qualname:
            continue
        store = registrars.store_of(target, dec.called)
        if store is None or not registrars.model_facing(store):
            continue
        name_value = dec.kwargs.get("name")
        name = name_value.string() if name_value is not None else None
        site = Location(facts.path, dec.span)
        return function_tool(project, qualname, FORM, site, name, dict(dec.kwargs))
    return None


def _kept_by_package_object(
    project: ProjectIndex,
    registrars: _Registrars,
    qualname: str,
    dec: Decorator,
    facts: ModuleFacts,
) -> ToolFacts | None:
    """``@tool_registry.register_function()`` where ``tool_registry = Registry(...)`` is a
    module variable holding an object of a package the catalogue does not know: its
    decorator keeps the function inside the object. The function is a tool when what is
    read of that object reaches a model (``tools=[t for _, t in tool_registry.registry.items()]``
    handed to an agent), as a project registrar's store must."""
    owner, _, method = dec.qualname.rpartition(".")
    if not dec.called or not method.isidentifier() or owner in project.classes:
        return None
    binding = project.module_binding(owner)
    if binding is None:
        return None
    value, written_in = binding
    made = value.qualname or ""
    if value.kind != "call" or made in project.classes or made in project.functions:
        return None  # a project object: its registrar is the project's (``_registered``)
    if not registrars.module_object_facing(written_in, owner.rpartition(".")[2]):
        return None
    site = Location(facts.path, dec.span)
    return function_tool(project, qualname, FORM, site, None, dict(dec.kwargs))
