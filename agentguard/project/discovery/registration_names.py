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
    for candidate in direct:
        yield candidate
        owner, _, method = candidate.rpartition(".")
        if owner in project.classes:
            for base in framework_bases(project, owner):
                yield f"{base}.{method}"
