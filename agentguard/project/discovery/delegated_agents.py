"""Finder: agents offered to another agent's model as tools (a manager's
``managed_agents=[web_agent]``, ``research.as_tool(tool_name="research")``,
``AgentTool(agent=researcher)``). The tool is named by the offering call when it names it,
else by the agent's own name; it sits where the offering call does, or, for an agent a
manager is handed, where that agent is built. What it does is what the agent's tools do
(``ToolFacts.delegate``)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from agentguard.diagnostics import Location
from agentguard.project.built_agents import AgentTable
from agentguard.project.discovery.builder import FoundTools
from agentguard.project.tool_facts import ToolFacts

if TYPE_CHECKING:
    from agentguard.project.index import ProjectIndex


def find(project: ProjectIndex, found: FoundTools, agents: AgentTable) -> Iterator[ToolFacts]:
    seen: set[tuple[str, int, str]] = set()
    for agent, form, call, facts, named in agents.offered():
        name = named or agent.name
        if not name:
            continue  # a name computed at run time: no tool name to report it under
        # a managed agent is offered where it is built; an agent-tool call is the offer
        place = agent.site if form.form == "registry" else Location(facts.path, call.span)
        key = (place.path, place.span.line, name)
        if key in seen or found.named_in(name, place.path):
            continue
        seen.add(key)
        module = project.modules[place.path].module
        yield ToolFacts(
            name=name,
            framework=form.framework,
            form="agent",
            path=place.path,
            anchor=place,
            functions=[],
            symbol=f"{module}.{name}",
            site=Location(facts.path, call.span),
            description=agent.description,
            delegate=agents.tools_of(agent),
        )
