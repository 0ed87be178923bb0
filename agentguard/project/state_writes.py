"""Changes a tool makes to the run context its framework hands it.

A parameter the framework fills itself (the catalogue's ``injected_params``: ``context``,
``ctx``, ``run_context`` ...) carries state that lives across the tool calls of one run:
``context.context.state.seat_number = new_seat`` changes what the next turn sees. Such a
change is no call, so no sink judges it; it is a local write of the tool when the tool is
named for a change (``update_seat``, ``cancel_flight``). A tool named for a read that notes
what it looked up there (``flight_status`` recording the flight number) keeps its read:
that is bookkeeping, not what the tool is for. An assignment sets a value, so the write is
idempotent; being judged from a name, it is a guess at medium confidence.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentguard.diagnostics import Confidence
from agentguard.facts.module_facts import Call
from agentguard.project.schema_verbs import name_verb
from agentguard.project.tool_facts import Effect, ToolFacts

if TYPE_CHECKING:
    from agentguard.project.index import ProjectIndex


def context_writes(project: ProjectIndex, tool: ToolFacts) -> list[Effect]:
    """Local writes of the run context handed to ``tool``, when its name says it changes
    something; none otherwise."""
    catalog = project.catalog
    verb = name_verb(catalog, tool.name)
    if verb is None or verb[1] == "read" or not tool.functions:
        return []
    qualname = tool.functions[0]
    found = project.functions.get(qualname)
    if found is None:
        return []
    fn, facts = found
    roots = {param for param in fn.params if param in catalog.injected_params}
    if not roots:
        return []
    # ``state = context.context.state``: a local that holds part of the context
    for assignment in facts.assignments_in(qualname):
        value = assignment.value
        if value.kind == "attr" and value.names and value.names[0] in roots:
            roots.add(assignment.target)
    effects: list[Effect] = []
    for assignment in facts.attribute_sets:
        if assignment.function != qualname:
            continue
        if assignment.target.split(".", 1)[0] not in roots:
            continue
        text = f"{assignment.target} = {assignment.value.text}"
        call = Call(
            callee=assignment.target,
            text=text,
            method=assignment.target.rsplit(".", 1)[-1],
            receiver=assignment.target.rsplit(".", 1)[0],
            span=assignment.span,
            function=qualname,
        )
        detail = f"sets `{assignment.target}` in the run context handed to `{tool.name}`"
        effects.append(
            Effect.judged(
                call,
                qualname,
                facts.path,
                kind="write",
                idempotent=True,
                remote=False,
                detail=detail,
                confidence=Confidence.MEDIUM,
                sink=f"the run context (`{assignment.target}`)",
                callee=assignment.target,
            )
        )
    return effects
