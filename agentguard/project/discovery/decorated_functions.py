"""Finder: functions under a framework's tool decorator (``@mcp.tool()``, ``@tool``,
``@function_tool(name_override=...)``), or under agentguard's own ``@guarded`` alone."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from agentguard.facts.module_facts import ModuleFacts
from agentguard.project.discovery.builder import FoundTools
from agentguard.project.discovery.candidates import decorated_tool
from agentguard.project.tool_facts import ToolFacts

if TYPE_CHECKING:
    from agentguard.project.index import ProjectIndex


def find_in(project: ProjectIndex, found: FoundTools, facts: ModuleFacts) -> Iterator[ToolFacts]:
    decorator = project.catalog.tool_forms["decorator"]
    for fn in facts.functions.values():
        matched = [
            (dec, form)
            for dec in fn.decorators
            if (
                form := decorator(dec.qualname) or decorator(project.resolve_instance(dec.qualname))
            )
            is not None
        ]
        # ``@guarded`` alone makes a tool; next to a framework decorator it only declares.
        framework_matches = [m for m in matched if m[1].framework != "agentguard"]
        for dec, form in (framework_matches or matched)[:1]:
            tool = decorated_tool(project, fn, dec, form, facts)
            if tool:
                yield tool
