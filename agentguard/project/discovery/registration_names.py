"""The names a registration written in the project may stand for.

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

from agentguard.facts.module_facts import Function, ModuleFacts
from agentguard.project.definitions import enclosing_class, framework_bases
from agentguard.project.tool_facts import SELF_NAMES

if TYPE_CHECKING:
    from agentguard.project.index import ProjectIndex


def registration_names(
    project: ProjectIndex, written: str, fn: Function | None, facts: ModuleFacts
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
        handed = project.handed_type(fn, parts[0]) if fn is not None and len(parts) >= 2 else None
        if handed is not None:
            # ``def register(tools): @tools.register_tool(...)`` called as
            # ``register(registry)`` with ``registry = ToolRegistry()``: the parameter holds
            # what every caller hands it
            direct.append(".".join([handed.replace("()", ""), *parts[1:]]))
    for candidate in direct:
        yield candidate
        owner, _, method = candidate.rpartition(".")
        if owner in project.classes:
            for base in framework_bases(project, owner):
                yield f"{base}.{method}"


def project_targets(
    project: ProjectIndex, written: str, fn: Function | None, facts: ModuleFacts
) -> list[str]:
    """The project functions a decorator written ``written`` in ``fn`` may be: its
    name expanded through the types of the objects it is read on (``controller.
    registry.action`` with ``controller = Controller()`` and ``self.registry =
    Registry()`` in ``Controller``)."""
    found: list[str] = []
    for candidate in registration_names(project, written, fn, facts):
        for expanded in _typed(project, candidate):
            owner, _, method = expanded.rpartition(".")
            if expanded in project.functions:
                found.append(expanded)
            elif owner in project.classes:
                method_qual = project.find_method(owner, method)
                if method_qual is not None:
                    found.append(method_qual)
    return list(dict.fromkeys(found))


def _typed(project: ProjectIndex, name: str) -> list[str]:
    """``pkg.Controller.registry.action`` -> also ``pkg.Registry.action`` when the
    class's ``registry`` attribute holds a ``Registry``."""
    names = [name]
    parts = name.split(".")
    for cut in range(len(parts) - 2, 0, -1):
        owner = ".".join(parts[:cut])
        if owner in project.classes:
            typed = project.self_type(owner, parts[cut])
            if typed:
                rest = parts[cut + 1 :]
                names += _typed(project, ".".join([project.resolve_instance(typed), *rest]))
            break
    return names
