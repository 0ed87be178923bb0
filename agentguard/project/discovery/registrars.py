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
from agentguard.facts.module_facts import Decorator, Function, ModuleFacts
from agentguard.knowledge.catalog import ToolForm
from agentguard.project.definitions import enclosing_class
from agentguard.project.discovery.builder import FoundTools
from agentguard.project.discovery.candidates import function_tool
from agentguard.project.discovery.framework_data import structural_spec
from agentguard.project.discovery.registration_names import registration_names
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


class _Registrars:
    """The project's registrars, worked out once per function asked about."""

    def __init__(self, project: ProjectIndex) -> None:
        self.project = project
        _, spec = structural_spec(project)
        self.builders = frozenset((spec or {}).get("schema_builders") or ())
        self.stored: dict[str, Store | None] = {}
        self.facing: dict[tuple[str, str], bool] = {}

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
        for value in fn.returns:
            if value.kind == "name":
                nested = f"{qualname}{LOCALS}{value.text}"
                if nested in self.project.functions:
                    return self.stores(nested)
            elif value.kind == "call" and value.chain is not None and value.chain.ends_in_call:
                # ``return self.registry.action(description, **kwargs)``: another factory
                for target in self.targets(value.text.split("(", 1)[0], fn, facts):
                    found = self.store_of(target, True, depth + 1)
                    if found is not None:
                        return found
        return None

    def targets(self, written: str, fn: Function | None, facts: ModuleFacts) -> list[str]:
        """The project functions a decorator written ``written`` in ``fn`` may be: its
        name expanded through the types of the objects it is read on (``controller.
        registry.action`` with ``controller = Controller()`` and ``self.registry =
        Registry()`` in ``Controller``)."""
        project = self.project
        found: list[str] = []
        for candidate in registration_names(project, written, fn, facts):
            for expanded in self._typed(candidate):
                owner, _, method = expanded.rpartition(".")
                if expanded in project.functions:
                    found.append(expanded)
                elif owner in project.classes:
                    method_qual = project.find_method(owner, method)
                    if method_qual is not None:
                        found.append(method_qual)
        return list(dict.fromkeys(found))

    def _typed(self, name: str) -> list[str]:
        """``pkg.Controller.registry.action`` -> also ``pkg.Registry.action`` when the
        class's ``registry`` attribute holds a ``Registry``."""
        names = [name]
        parts = name.split(".")
        for cut in range(len(parts) - 2, 0, -1):
            owner = ".".join(parts[:cut])
            if owner in self.project.classes:
                typed = self.project.self_type(owner, parts[cut])
                if typed:
                    rest = parts[cut + 1 :]
                    names += self._typed(".".join([self.project.resolve_instance(typed), *rest]))
                break
        return names

    # -- what a registrar keeps ------------------------------------------------------
    def stores(self, qualname: str) -> Store | None:
        """The container the function ``qualname`` stores its first parameter in."""
        if qualname not in self.stored:
            self.stored[qualname] = self._find_store(qualname)
        return self.stored[qualname]

    def _find_store(self, qualname: str) -> Store | None:
        project = self.project
        fn, facts = project.functions[qualname]
        params = [p for p in fn.params if p not in SELF_NAMES][:1]
        if not params:
            return None
        held = set(params)
        assignments = [a for a in facts.assignments if a.function == qualname]
        for _ in range(3):  # ``wrapped = func``, ``action = Action(function=wrapped)``
            grown = held | {a.target for a in assignments if held & set(a.value.names)}
            if grown == held:
                break
            held = grown
        for store in facts.stores:
            if store.function == qualname and held & set(store.value.names):
                return Store(qualname, store.target)
        for call in project.calls_in(qualname):
            if call.method in KEEPING and call.receiver:
                if any(held & set(arg.names) for arg in [*call.args, *call.kwargs.values()]):
                    return Store(qualname, call.receiver)
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
            self.facing[key] = any(
                self._builds_specs(reader)
                for reader in self._readers(owner, facts, container)
                if not reader.startswith(store.function)
            )
        return self.facing[key]

    def _readers(self, owner: str | None, facts: ModuleFacts, container: str) -> Iterator[str]:
        """The functions of ``owner`` (else of the module) that read ``container``."""
        project = self.project
        if owner is not None:
            scope = [
                q
                for q in project.functions
                if q.startswith(owner + ".") and project.functions[q][1] is facts
            ]
        else:
            scope = [q for q, (_, f) in project.functions.items() if f is facts]
        assigned: dict[str | None, list[str]] = {}
        for assignment in facts.assignments:
            assigned.setdefault(assignment.function, []).append(assignment.value.text)
        for qualname in scope:
            texts = [c.receiver or "" for c in project.calls_in(qualname)]
            texts += [c.text for c in project.calls_in(qualname)]
            fn = project.functions[qualname][0]
            texts += [loop.iterable.text for loop in fn.loops if loop.iterable is not None]
            texts += assigned.get(qualname, [])
            texts += [value.text for value in fn.returns]
            if any(_reads(text, container) for text in texts):
                yield qualname

    def _builds_specs(self, qualname: str) -> bool:
        """Whether ``qualname`` turns what it reads into a schema or tool specs."""
        project = self.project
        fn, facts = project.functions[qualname]
        for call in project.calls_in(qualname):
            if call.method in self.builders or call.callee.rsplit(".", 1)[-1] in self.builders:
                return True
            if "tools" in call.kwargs:
                return True
        span = fn.span
        return any(
            d.span is not None and span.line <= d.span.line <= span.end_line for d in facts.dicts
        )


def _reads(text: str, container: str) -> bool:
    """Whether ``text`` reads ``container`` (``self.actions.items()`` reads ``self.actions``)."""
    at = text.find(container)
    while at >= 0:
        before = text[at - 1] if at else ""
        after = text[at + len(container) : at + len(container) + 1]
        if not (before.isalnum() or before in "_.") and not (after.isalnum() or after == "_"):
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
            tool = _registered(project, registrars, qualname, fn, dec, facts)
            if tool is not None:
                yield tool
                break


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
