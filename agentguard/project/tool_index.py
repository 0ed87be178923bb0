"""The project index with the tools found in it: what tool discovery fills, and what the
passes that read tools run over. It shares the index's tables (and their memo) rather
than copying them."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypeVar

from agentguard.project.index import ProjectIndex
from agentguard.project.tool_facts import ToolFacts

Indexed = TypeVar("Indexed", bound="ToolIndex")


class ToolIndex(ProjectIndex):
    """A project index and a list of its tools."""

    tools: list[ToolFacts]

    @classmethod
    def over(cls: type[Indexed], index: ProjectIndex, tools: Iterable[ToolFacts]) -> Indexed:
        """``index`` (its tables, not copies of them) with ``tools``."""
        view = cls.__new__(cls)
        view.__dict__.update(index.__dict__)
        view.__dict__["tools"] = list(tools)
        return view

    def tool_for_function(self, qualname: str) -> ToolFacts | None:
        """The first tool ``qualname`` is a function of."""
        return next((t for t in self.tools if qualname in t.functions), None)
