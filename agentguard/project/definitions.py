"""Queries on the project's definitions: which class a method belongs to, the bases along a
class chain, the nested function a local name refers to.

They read the index of functions and classes only (``Definitions``), so the project model
and the passes built on it both use them without depending on each other.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Protocol

from agentguard.facts.module_facts import Assignment, Call, ClassDef, Function, ModuleFacts, Value

# How many bases up a class chain a registration is followed (a cycle ends there too).
MAX_BASE_DEPTH = 12


class Definitions(Protocol):
    """What these queries read of the project: its functions and classes by qualified
    name, and the few lookups over them."""

    @property
    def functions(self) -> Mapping[str, tuple[Function, ModuleFacts]]: ...

    @property
    def classes(self) -> Mapping[str, tuple[ClassDef, ModuleFacts]]: ...

    def function(self, qualname: str) -> Function | None: ...

    def module_of(self, qualname: str) -> ModuleFacts | None: ...

    def find_method(self, cls_qual: str, name: str) -> str | None: ...

    def resolve_instance(self, qualname: str) -> str: ...

    def local_assignments(
        self, facts: ModuleFacts, function: str | None, target: str | None = None
    ) -> list[Assignment]: ...

    def project_function(self, qualname: str | None, facts: ModuleFacts) -> str | None: ...


def enclosing_class(project: Definitions, fn: Function) -> str | None:
    """The class whose method ``fn`` is, or is nested in (``Cls.method.<locals>.tool``)."""
    qualname = fn.qualname
    current: Function | None = fn
    while current is not None:
        if current.class_name:
            return current.class_name
        head, sep, _ = qualname.rpartition(".<locals>.")
        if not sep:
            return None
        qualname = head
        current = project.function(head)
    return None


def unwrapped_base(written: str, facts: ModuleFacts) -> str:
    """A base as its class's module names it, generics dropped: ``FastMCP[AppContext]``
    is ``fastmcp.FastMCP`` when the module imports ``from fastmcp import FastMCP``."""
    name = written.split("[", 1)[0].strip()
    head, dot, rest = name.partition(".")
    imported = facts.imports.get(head)
    if imported:
        return f"{imported}{dot}{rest}"
    return name


def framework_bases(project: Definitions, cls_qual: str) -> Iterator[str]:
    """Every base of the project class ``cls_qual`` along its chain, nearest first: project
    classes (in any module, re-exports followed) and the outside classes they end in."""
    queue: list[tuple[str, int]] = [(cls_qual, 0)]
    seen = {cls_qual}
    while queue:
        current, depth = queue.pop(0)
        entry = project.classes.get(current)
        if entry is None or depth >= MAX_BASE_DEPTH:
            continue
        cls, facts = entry
        for written in cls.bases:
            base = unwrapped_base(written, facts)
            local = f"{facts.module}.{base}"
            if base not in project.classes and local in project.classes:
                base = local
            base = project.resolve_instance(base)
            if base in seen:
                continue
            seen.add(base)
            yield base
            queue.append((base, depth + 1))


def local_function(project: Definitions, value: Value | None, call: Call) -> str | None:
    """The function nested in ``call``'s function (or in one enclosing it) that the bare
    name ``value`` refers to, or the method a bound ``self.method`` names (a toolkit's
    ``get_tools`` handing ``StructuredTool.from_function(func=self.search)``).

    Tools built at run time are such functions: ``def list_notes(): ...`` nested in a
    ``_register`` method and handed to ``app.add_tool(list_notes)``, or a closure made once
    per entry of a list of specs inside a loop."""
    if value is None or call.function is None:
        return None
    if value.kind == "attr" and value.text.startswith("self.") and value.text.count(".") == 1:
        caller = project.function(call.function)
        owner = enclosing_class(project, caller) if caller is not None else None
        return project.find_method(owner, value.text[5:]) if owner else None
    if value.kind == "call":
        facts = project.module_of(call.function)
        return _made_by_factory(project, value, facts) if facts is not None else None
    if value.kind != "name":
        return None
    return _named_function(project, value.text, call.function, call.order)


def _made_by_factory(project: Definitions, value: Value, facts: ModuleFacts) -> str | None:
    """``_build_add_bookmark(settings, client)``: the function the project function called
    writes inside itself and returns (``async def add_bookmark(...): ...; return
    add_bookmark``), a closure made per call."""
    factory = project.project_function(value.qualname, facts)
    return returned_local_function(project, factory) if factory else None


def _named_function(
    project: Definitions, name: str, function: str, before: int, depth: int = 0
) -> str | None:
    """The nested function ``name`` refers to in ``function`` at call order ``before``:
    one of that name, or the one a local was last bound to before, directly (``find_tool =
    find``) or through a wrapper handed it first (``find_tool = partial(find_tool, k=v)``,
    ``wrap_filters(find_tool, ...)``: what a registration is handed is still that function).
    """
    scope: str | None = function
    while scope:
        candidate = f"{scope}.<locals>.{name}"
        if candidate in project.functions:
            return candidate
        head, sep, _ = scope.rpartition(".<locals>.")
        scope = head if sep else None
    facts = project.module_of(function)
    if facts is None or depth > 4:
        return None
    bound = [a for a in project.local_assignments(facts, function, name) if a.order <= before]
    if not bound:
        return None
    value = bound[-1].value
    if value.kind == "call":
        made = _made_by_factory(project, value, facts)
        if made is not None:
            return made  # ``search = _build_search(settings)``: the closure it returns
    if value.kind == "call" and value.call_args:
        value = value.call_args[0]
    if value.kind != "name" or not value.text.isidentifier():
        return None
    return _named_function(project, value.text, function, bound[-1].order - 1, depth + 1)


def returned_local_function(project: Definitions, factory: str) -> str | None:
    """The function written inside ``factory`` that it returns (a decorator factory's
    ``def keep(func): ...; return keep``), if any."""
    entry = project.functions.get(factory)
    if entry is None:
        return None
    for value in entry[0].returns:
        local = f"{factory}.<locals>.{value.text}"
        if value.kind == "name" and local in project.functions:
            return local
    return None
