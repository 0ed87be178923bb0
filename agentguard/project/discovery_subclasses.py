"""Tool registrations reached through the project's own classes.

A framework's registration API (``FastMCP.tool``, ``MCPServer.add_tool``...) is often
called on something the written name does not show: ``self.app.tool()`` in a method whose
class was handed the server (``self.app = app`` with ``app: MCPServer``), ``self.tool()``
in a method of ``class NotesServer(FastMCP[Ctx])``, or ``server.tool()`` on an instance of
such a subclass imported from another module. Each written name is expanded into the names
it may stand for (the attribute's declared type, the enclosing class, then every base along
the class chain with generics unwrapped and bases in other project modules followed) and
matched against the catalogue's forms like any other name.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from agentguard.diagnostics import Location
from agentguard.facts.module_facts import Decorator, Function, ModuleFacts
from agentguard.project.tool_facts import SELF_NAMES

if TYPE_CHECKING:
    from agentguard.project.index import ProjectIndex
    from agentguard.project.tool_index import ToolIndex

# How many bases up a class chain a registration is followed (a cycle ends there too).
MAX_BASE_DEPTH = 12


def enclosing_class(project: ProjectIndex, fn: Function) -> str | None:
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


def framework_bases(project: ProjectIndex, cls_qual: str) -> Iterator[str]:
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


def registration_names(
    project: ToolIndex, written: str, fn: Function | None, facts: ModuleFacts
) -> Iterator[str]:
    """The qualified names a registration call written ``written`` in ``fn`` may stand for,
    each with its owner replaced by every base of a project class it names."""
    name = written.replace("()", "")
    parts = name.split(".")
    direct: list[str] = []
    cls_qual = enclosing_class(project, fn) if fn is not None else None
    if parts[0] in SELF_NAMES and len(parts) >= 2:
        if cls_qual is None:
            return
        if len(parts) >= 3:
            typed = project.self_type(cls_qual, parts[1])
            if typed:
                direct.append(".".join([project.resolve_instance(typed), *parts[2:]]))
        direct.append(".".join([cls_qual, *parts[1:]]))
    else:
        direct.append(project.resolve_instance(name))
    for candidate in direct:
        yield candidate
        owner, _, method = candidate.rpartition(".")
        if owner in project.classes:
            for base in framework_bases(project, owner):
                yield f"{base}.{method}"


def _decorator_name(dec: Decorator) -> str | None:
    name = dec.kwargs.get("name") or dec.kwargs.get("name_override")
    if name is not None and name.string():
        return name.string()
    if dec.args and dec.args[0].string():
        return dec.args[0].string()
    return None


def registration_methods(project: ToolIndex) -> frozenset[str]:
    """The last parts of the catalogue's decorator and factory names (``tool``,
    ``add_tool``): a written name ending otherwise registers nothing, however expanded."""
    methods: set[str] = set()
    for spec in (project.catalog.data.get("frameworks") or {}).values():
        names = list(spec.get("decorators") or [])
        for factory in spec.get("factories") or []:
            callee = factory["callee"]
            names += callee if isinstance(callee, list) else [callee]
        methods.update(name.rsplit(".", 1)[-1] for name in names)
    return frozenset(methods)


def discover_subclass_registrations(project: ToolIndex) -> None:
    """Decorators and registration calls whose framework form shows only once the name is
    expanded through the project's classes (see the module docstring)."""
    from agentguard.project import tools as discovery

    forms = project.catalog.tool_forms
    methods = registration_methods(project)
    tool_functions = {q for t in project.tools for q in t.functions}
    for facts in project.modules.values():
        if facts.is_test:
            continue
        for fn in facts.functions.values():
            if not fn.decorators or fn.qualname in tool_functions:
                continue
            for dec in fn.decorators:
                if forms["decorator"](dec.qualname) is not None:
                    break  # the first pass has judged this one
                if dec.qualname.replace("()", "").rsplit(".", 1)[-1] not in methods:
                    continue
                form = next(
                    (
                        found
                        for candidate in registration_names(project, dec.qualname, fn, facts)
                        if (found := forms["decorator"](candidate)) is not None
                    ),
                    None,
                )
                if form is None or form.framework == "agentguard":
                    continue
                tool = discovery._tool_from_function(
                    project,
                    fn.qualname,
                    form,
                    Location(facts.path, dec.span),
                    _decorator_name(dec),
                    dict(dec.kwargs),
                )
                if tool:
                    discovery._add_tool(project, tool)
                break
        for site in project.call_sites(facts):
            written = site.call.callee
            if (
                site.call.method not in methods
                or "." not in written
                or forms["factory"](site.callee)
                or forms["decorator"](site.callee)
            ):
                continue
            for candidate in registration_names(project, written, site.caller, facts):
                if forms["factory"](candidate) or forms["decorator"](candidate):
                    discovery._discover_from_call(project, site.call, facts, candidate)
                    break
