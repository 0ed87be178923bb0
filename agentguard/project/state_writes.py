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

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

from agentguard.diagnostics import Confidence, Span
from agentguard.facts.module_facts import Call, Function, ModuleFacts
from agentguard.knowledge.words import words
from agentguard.project.receivers import written_receiver
from agentguard.project.schema_verbs import name_verb
from agentguard.project.tool_facts import SELF_NAMES, Effect, ToolFacts, self_spelled

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
    return [
        local_write(
            qualname,
            facts,
            target,
            written,
            span,
            idempotent=True,
            detail=f"sets `{target}` in the run context handed to `{tool.name}`",
            sink=f"the run context (`{target}`)",
        )
        for target, written, span in _context_changes(
            project, qualname, facts, roots, named_for_a_change
        )
    ]


def local_write(
    qualname: str,
    facts: ModuleFacts,
    target: str,
    written: str | None,
    span: Span,
    *,
    idempotent: bool,
    detail: str,
    sink: str | None = None,
) -> Effect:
    """The local write of ``target`` (set to ``written``, or changed by a method when
    None) that ``qualname`` makes: no call to go by, a guess at medium confidence. The
    sink is named ``sink``, else as the write is written."""
    call = Call(
        callee=target,
        text=f"{target} = {written}" if written is not None else target,
        method=target.rsplit(".", 1)[-1],
        receiver=target.rsplit(".", 1)[0],
        span=span,
        function=qualname,
    )
    return Effect.judged(
        call,
        qualname,
        facts.path,
        kind="write",
        idempotent=idempotent,
        remote=False,
        detail=detail,
        confidence=Confidence.MEDIUM,
        sink=sink,
        callee=target,
    )


def object_state_writes(project: ProjectIndex, tool: ToolFacts) -> list[Effect]:
    """Local writes of state held by an object that outlives the call: a method tool (or a
    method it calls on ``self``, or on an object of the module) setting an item of a
    container the object keeps (``self.bot.auto_roles[guild_id] = role.id``,
    ``self.tasks.pop(task_id)``), unless the tool is named for a read; an attribute of the
    object set, when the tool's name says it changes something (``set_current_graph``). A
    container named as a cache, a memo or a log keeps a derived copy, not state."""
    catalog = project.catalog
    verb = _tool_verb(project, tool.name)
    if verb == "read" or not tool.functions:
        return []
    found = project.functions.get(tool.functions[0])
    if found is None:
        return []
    fn, facts = found
    methods = _outliving_methods(project, fn.qualname, facts, bool(fn.class_name))
    cache = catalog.open_world.cache_words | catalog.open_world.log_words
    for qualname, method_facts in methods:
        if qualname.endswith(".__init__"):
            continue  # an object being made: nothing it kept before changes
        changes = list(
            _context_changes(project, qualname, method_facts, {"self"}, verb is not None)
        )
        if verb is not None:
            # ``self.current_graph = graph`` in a tool named for a change
            changes += [
                (a.target, a.value.text, a.span)
                for a in project.local_assignments(method_facts, qualname)
                # a public attribute: a private one (``self._exit_stack``) is the
                # object's own machinery, a connection or a lock, not what it keeps
                if a.target.startswith("self.")
                and a.target.count(".") == 1
                and not a.target[5:].startswith("_")
            ]
        for target, written, span in changes:
            if set(words(re.sub(r"\W+", "_", target), identifier=True)) & cache:
                continue
            # one change of an object's state says the tool writes it
            return [
                local_write(
                    qualname,
                    method_facts,
                    target,
                    written,
                    span,
                    idempotent=written is not None,
                    detail=f"changes `{target}`, kept by an object that outlives the call",
                    sink=f"the state of an object (`{target}`)",
                )
            ]
    return []


# How many calls deep the methods of long-lived objects are followed from a tool.
_OBJECT_HOPS = 3


def _outliving_methods(
    project: ProjectIndex, qualname: str, facts: ModuleFacts, is_method: bool
) -> list[tuple[str, ModuleFacts]]:
    """The methods run on objects that outlive a call of ``qualname``: itself when it is a
    method, and the methods it calls on ``self`` (or an attribute of it) or on an object
    of a module (``kgi.add_node_to_current_graph(...)``, then ``self.current_graph.add_node``
    inside it), a few calls deep."""
    found = [(qualname, facts)] if is_method else []
    frontier = [(qualname, facts, not is_method)]
    seen = {qualname}
    for _ in range(_OBJECT_HOPS):
        following: list[tuple[str, ModuleFacts, bool]] = []
        for caller, caller_facts, module_objects in frontier:
            caller_fn = project.functions[caller][0]
            for call in project.calls_in(caller):
                target = project.call_site(call, caller_fn, caller_facts).target
                if target is None or target in seen:
                    continue
                held = project.functions.get(target)
                root = call.chain.root if call.chain is not None else ""
                outlives = (
                    root in SELF_NAMES
                    or (
                        module_objects
                        and bool(root)
                        and not project.local_assignments(caller_facts, caller, root)
                        and (
                            root in caller_facts.imports
                            or bool(project.local_assignments(caller_facts, None, root))
                        )
                    )
                    # ``context.todoManager.addTodo(todo)`` on the run context the framework
                    # hands the tool (``experimental_context``): what it holds outlives the call
                    or (module_objects and _from_injected_context(project, caller_fn, root))
                )
                if held is None or not held[0].class_name or not outlives:
                    continue
                seen.add(target)
                found.append((target, held[1]))
                following.append((target, held[1], False))
        frontier = following
    return found


def _from_injected_context(project: ProjectIndex, fn: Function, root: str) -> bool:
    """Whether ``root`` is a parameter of ``fn`` a framework fills in with its run context
    (``tool_functions.injected_params``), or a local read from one (``const context =
    experimental_context as ToolContext``)."""
    injected = project.catalog.injected_params
    facts = project.functions[fn.qualname][1]
    names, seen = {root}, set()
    for _ in range(3):  # ``const { todoManager } = context``, ``context = experimental_context``
        if any(name in fn.params for name in names):
            return bool(names & injected & set(fn.params))
        seen |= names
        names = {
            name
            for held in names
            for assignment in project.local_assignments(facts, fn.qualname, held)
            for name in assignment.value.names
        } - seen
    return False


def _tool_verb(project: ProjectIndex, name: str) -> str | None:
    """What a tool's name says it does: ``read``, a kind of write, or None."""
    named = name_verb(project.catalog, name)
    if named is not None:
        return named[1]
    first = words(name, identifier=True)[:1]
    if not first or first[0] in project.catalog.noun_like_verbs:
        return None  # ``email_get``: a noun first, what follows says what is done
    return project.catalog.open_world.verb_class(first[0])


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
        return self_spelled(target).split(".", 1)[0].split("[", 1)[0] in roots

    # ``node = self.nodes[node_id]`` (or ``.get(node_id)``): an entry the context keeps,
    # whose attributes set (``node.title = title``) change what it holds
    entries = {
        assignment.target
        for assignment in facts.assignments_in(qualname)
        if assignment.target.isidentifier()
        and rooted(held := assignment.value.text)
        and (held.endswith("]") or ".get(" in held)
    }
    for assignment in facts.attribute_sets if attributes_too else ():
        if assignment.function == qualname and (
            rooted(assignment.target) or assignment.target.split(".", 1)[0] in entries
        ):
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
