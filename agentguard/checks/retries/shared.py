"""What a retry construct re-runs, for the retry rules."""

from __future__ import annotations

from agentguard.project.project_model import ProjectModel
from agentguard.project.tool_facts import Effect, RetryUse, ToolFacts


def retried_effects(project: ProjectModel, use: RetryUse) -> tuple[list[Effect], ToolFacts | None]:
    """The side effects a retry construct repeats, and the tool it belongs to, if one."""
    if use.kind == "with_retry" and use.call is not None:
        receiver = (use.call.receiver or "").split(".")[-1]
        for tool in project.tools:
            if receiver and receiver in {
                tool.name,
                *(f.rsplit(".", 1)[-1] for f in tool.functions),
            }:
                return list(tool.effects), tool
        return [], None
    if use.tool is not None:
        named = next((t for t in project.tools if t.name == use.tool), None)
        return (list(named.effects), named) if named else ([], None)
    if use.function is None:
        return [], None
    owner = project.tool_for_function(use.function)
    if use.kind == "loop" and use.covered_orders is not None:
        return project.effects_in_orders(use.function, use.covered_orders), owner
    return list(project.effects_of(use.function)), owner


def only_transient(project: ProjectModel, use: RetryUse) -> bool:
    """A retry limited to errors raised before the request reached the service, or 429s."""
    if use.catches is None or not use.catches:
        return False
    transient = project.catalog.transient_exceptions
    return all(name in transient or name.rsplit(".", 1)[-1] in transient for name in use.catches)
