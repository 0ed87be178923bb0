"""Changes a tool makes to the run context its framework hands it.

A parameter the framework fills itself (the catalogue's ``injected_params``: ``context``,
``ctx``, ``run_context``, ADK's ``tool_context`` ...) carries state that lives across the
tool calls of one run: ``context.context.state.seat_number = new_seat`` or
``tool_context.state["cart"] = cart`` changes what the next turn sees. Such a
change is no call, so no sink judges it; it is a local write of the tool. A tool named for
a read that notes what it looked up there (``flight_status`` recording the flight number)
keeps its read: that is bookkeeping, not what the tool is for; an attribute set counts only
when the tool is named for a change (``update_seat``, ``cancel_flight``). An assignment sets
a value, so the write is idempotent; judged without a call to go by, it is a guess at
medium confidence.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from agentguard.diagnostics import Confidence, Span
from agentguard.facts.module_facts import Call, ModuleFacts
from agentguard.project.receivers import written_receiver
from agentguard.project.schema_verbs import name_verb
from agentguard.project.tool_facts import Effect, ToolFacts

if TYPE_CHECKING:
    from agentguard.project.index import ProjectIndex


def context_writes(project: ProjectIndex, tool: ToolFacts) -> list[Effect]:
    """Local writes of the run context handed to ``tool``: its session state changed (an
    item set or dropped), unless the tool is named for a read; an attribute of the context
    set, when its name says it changes something."""
    catalog = project.catalog
    verb = name_verb(catalog, tool.name)
    if (verb is not None and verb[1] == "read") or not tool.functions:
        return []
    named_for_a_change = verb is not None
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
    for target, written, span in _context_changes(
        project, qualname, facts, roots, named_for_a_change
    ):
        text = f"{target} = {written}" if written is not None else target
        call = Call(
            callee=target,
            text=text,
            method=target.rsplit(".", 1)[-1],
            receiver=target.rsplit(".", 1)[0],
            span=span,
            function=qualname,
        )
        detail = f"sets `{target}` in the run context handed to `{tool.name}`"
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
                sink=f"the run context (`{target}`)",
                callee=target,
            )
        )
    return effects


def _context_changes(
    project: ProjectIndex,
    qualname: str,
    facts: ModuleFacts,
    roots: set[str],
    attributes_too: bool,
) -> Iterator[tuple[str, str | None, Span]]:
    """What ``qualname`` changes in the context held by ``roots``, as (what is set, the
    value written or None, where): an item set (``tool_context.state["cart"] = cart``,
    ADK's session state), a change made by a container's own method
    (``tool_context.state.pop("cart")``), and when ``attributes_too`` an attribute set
    (``context.context.seat = s``: a lookup may note what it found so, too)."""

    def rooted(target: str) -> bool:
        return target.split(".", 1)[0].split("[", 1)[0] in roots

    for assignment in facts.attribute_sets if attributes_too else ():
        if assignment.function == qualname and rooted(assignment.target):
            yield assignment.target, assignment.value.text, assignment.span
    for store in facts.stores:
        if store.function == qualname and rooted(store.target):
            yield f"{store.target}[...]", store.value.text, store.span
    for assignment in facts.assignments_in(qualname):
        if "[" in assignment.target and rooted(assignment.target):
            yield assignment.target, assignment.value.text, assignment.span
    changes = project.catalog.store_methods | project.catalog.append_methods
    for call in project.calls_in(qualname):
        written = written_receiver(call)  # as written: the receiver resolved is its type's
        if call.method in changes and written and rooted(written):
            yield f"{written}.{call.method}", None, call.span
