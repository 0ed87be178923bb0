"""The tool-discovery pass: which functions and classes of the project are LLM tools
(``agentguard.project.tools``, driven by rules/frameworks.yaml)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from agentguard.project.passes import Pass, PassResults
from agentguard.project.tool_facts import ToolFacts
from agentguard.project.tool_index import ToolIndex
from agentguard.project.tools import discover_tools

if TYPE_CHECKING:
    from agentguard.project.index import ProjectIndex


@dataclass(frozen=True)
class FoundTools:
    """The tools found in the source, by path, line and name."""

    tools: tuple[ToolFacts, ...]


class ToolDiscovery(Pass[FoundTools]):
    produces = "the tools the source defines (framework forms of rules/frameworks.yaml)"

    @classmethod
    def run(cls, index: ProjectIndex, results: PassResults) -> FoundTools:
        found = ToolIndex.over(index, ())
        discover_tools(found)
        return FoundTools(tuple(found.tools))
