"""The tool-discovery pass: which functions and classes of the project are LLM tools
(the finders of ``agentguard.project.discovery``, driven by rules/frameworks.yaml)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from agentguard.project.built_agents import AgentConstruction
from agentguard.project.declared_schemas import SchemaFiles
from agentguard.project.discovery.discover import find_tools
from agentguard.project.passes import Pass, PassResults
from agentguard.project.tool_facts import ToolFacts

if TYPE_CHECKING:
    from agentguard.project.index import ProjectIndex


@dataclass(frozen=True)
class DiscoveredTools:
    """The tools found in the source, by path, line and name."""

    tools: tuple[ToolFacts, ...]


class ToolDiscovery(Pass[DiscoveredTools]):
    needs = (AgentConstruction, SchemaFiles)
    produces = "the tools the source defines (framework forms of rules/frameworks.yaml)"

    @classmethod
    def run(cls, index: ProjectIndex, results: PassResults) -> DiscoveredTools:
        loaded = results[SchemaFiles]
        declared = frozenset(tool.name for tool in loaded[0].tools) if loaded else frozenset()
        return DiscoveredTools(tuple(find_tools(index, results[AgentConstruction].table, declared)))
