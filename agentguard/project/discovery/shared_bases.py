"""Project classes that tool classes extend without being tools themselves."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentguard.facts.module_facts import ClassDef

if TYPE_CHECKING:
    from agentguard.project.index import ProjectIndex


def is_shared_base(project: ProjectIndex, cls: ClassDef) -> bool:
    """A project class that other tool classes extend and that names no tool itself is
    their shared base (``class BookingTool(BaseTool)`` under ``HotelTool``), not a tool."""
    name = cls.attributes.get("name")
    if name is not None and name.string():
        return False
    if "." in cls.name:
        return any(
            cls.qualname in other.bases or any(b.endswith("." + cls.name) for b in other.bases)
            for other, _ in project.classes.values()
            if other is not cls
        )
    by_base, by_last = project.subclass_index
    return any(
        other is not cls for other in (*by_base.get(cls.qualname, ()), *by_last.get(cls.name, ()))
    )
