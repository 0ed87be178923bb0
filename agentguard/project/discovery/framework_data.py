"""What the finders read of rules/frameworks.yaml besides the tool forms: the shape of a
project's own tool classes and records, and the names registrations end in."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agentguard.project.index import ProjectIndex


def structural_spec(project: ProjectIndex) -> tuple[str, Any]:
    """The framework entry holding ``structural_bases`` in the catalogue, and that section."""
    for framework, spec in (project.catalog.data.get("frameworks") or {}).items():
        if spec and spec.get("structural_bases"):
            return framework, spec["structural_bases"]
    return "", None


def registration_methods(project: ProjectIndex) -> frozenset[str]:
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


def lowlevel_handlers(project: ProjectIndex) -> set[str]:
    """The handler decorators of low-level servers (``list_tools``, ``call_tool``)."""
    handlers: set[str] = set()
    for spec in (project.catalog.data.get("frameworks") or {}).values():
        handlers.update(((spec or {}).get("lowlevel") or {}).get("handlers") or [])
    return handlers
