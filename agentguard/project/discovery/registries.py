"""Finder: lists of tools handed to an agent (``Agent(tools=[search, send_email])``,
``super().__init__(tools=[self.send])`` in a subclass of an agent class, or a call
decorator's options: ``@llm.call("gpt-4o-mini", tools=[search])``), each element a project
function or a method of the calling class. The list an agent holds may also be written after
it is built: ``agent.functions.extend([...])``, ``agent.tools.append(f)``, ``agent.tools =
[...]`` on an instance of the framework's class.

The list may be written in the call, or held by a variable (module level, possibly
imported, or local to the calling function, with what the function appends to it).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, NamedTuple

from agentguard.diagnostics import Location, Span
from agentguard.facts.module_facts import Call, ModuleFacts, Value
from agentguard.knowledge.catalog import ToolForm
from agentguard.project.discovery.builder import FoundTools
from agentguard.project.discovery.candidates import function_tool
from agentguard.project.tool_facts import ToolFacts, argument_at

if TYPE_CHECKING:
    from agentguard.project.index import ProjectIndex


# What adds to a list, by the position of what it adds.
_ADDERS = {"append": 0, "extend": 0, "insert": 1}


def find(project: ProjectIndex, found: FoundTools) -> Iterator[ToolFacts]:
    registry_form = project.catalog.tool_forms["registry"]
    registries = project.callees_matching(registry_form, resolved=True)
    for facts in project.modules.values():
        if facts.is_test:
            continue
        yield from _written_later(project, found, facts)
        for site in project.call_sites(facts):
            call, callee = site.call, site.callee
            if (
                callee in registries
                or (call.function and call.callee.startswith("super"))
                or inherited_registry(project, callee)
            ):
                yield from _listed_tools(project, found, call, facts, callee)
        for fn in facts.functions.values():
            for decorator in fn.decorators:
                if decorator.called and registry_form(decorator.qualname) is not None:
                    # @llm.call(provider="openai", model="gpt-4o-mini", tools=[search])
                    as_call = Call(
                        callee=decorator.qualname,
                        text=decorator.text,
                        method=decorator.qualname.rsplit(".", 1)[-1],
                        receiver=None,
                        span=decorator.span,
                        args=decorator.args,
                        kwargs=decorator.kwargs,
                        function=None,
                    )
                    yield from _listed_tools(project, found, as_call, facts, decorator.qualname)


def _listed_tools(
    project: ProjectIndex, found: FoundTools, call: Call, facts: ModuleFacts, callee: str
) -> Iterator[ToolFacts]:
    """The tools of the list a call hands over (``Agent(tools=[...])``), those no tool found
    so far runs."""
    registry = project.catalog.tool_forms["registry"](callee) or inherited_registry(project, callee)
    caller = project.function(call.function) if call.function else None
    if registry is None and caller is not None and call.callee.startswith("super"):
        # class SendEmailAgent(AssistantAgent): super().__init__(..., tools=[self.send_email])
        owner = project.classes.get(caller.class_name or "")
        for base in project.class_bases(owner[0]) if owner else []:
            registry = project.catalog.tool_forms["registry"](base)
            if registry is not None:
                break
    if registry is not None and registry.tools is not None:
        listed = argument_at(call.args, call.kwargs, registry.tools)
        yield from _tools_of(project, found, registry, listed, call, facts)


def inherited_registry(project: ProjectIndex, cls_qual: str) -> ToolForm | None:
    """The agent class of a framework that the project class ``cls_qual`` extends
    (``class DeskAgent(Agent)``), when the keywords it is built with reach that class: no
    project class on the way defines ``__init__``, or each hands them on through
    ``super().__init__``. None for a class that is no such agent. Worked out once per
    class: every construction of it asks."""
    if cls_qual not in project.classes:
        return None
    return project.remembered(
        ("inherited_registry", cls_qual), lambda: _inherited_registry(project, cls_qual)
    )


def _inherited_registry(project: ProjectIndex, cls_qual: str) -> ToolForm | None:
    registry_form = project.catalog.tool_forms["registry"]
    for current in project.lineage(cls_qual):
        entry = project.classes.get(current)
        if entry is None:
            registry = registry_form(current)
            if registry is not None and registry.tools is not None:
                return registry
            continue
        init = project.function(f"{current}.__init__")
        if init is not None and not any(
            call.callee.startswith("super") for call in project.calls_in(init.qualname)
        ):
            return None  # built with keywords of its own
    return None


def _written_later(
    project: ProjectIndex, found: FoundTools, facts: ModuleFacts
) -> Iterator[ToolFacts]:
    """The tools added to a framework agent's list after it is built: the receiver resolves
    to the keyword of the agent's class that holds its tools (``swarm.Agent.functions``)."""
    registry_form = project.catalog.tool_forms["registry"]

    def holder(written: str) -> ToolForm | None:
        owner, _, field_name = project.resolve_instance(written).rpartition(".")
        registry = registry_form(owner) if owner else None
        if registry is None or registry.tools is None:
            return None
        return registry if field_name in (registry.tools.kwarg or ()) else None

    for call in facts.calls:
        position = _ADDERS.get(call.method or "")
        if position is None or not call.receiver or len(call.args) <= position:
            continue
        registry = holder(call.receiver)
        if registry is not None:
            added = call.args[position]
            listed = (
                added
                if call.method == "extend"
                else Value(kind="list", text=added.text, elements=[added])
            )
            yield from _tools_of(project, found, registry, listed, call, facts)
    for assignment in facts.attribute_sets:
        registry = holder(f"{facts.module}.{assignment.target}")
        if registry is not None:
            as_call = Call(
                callee=assignment.target,
                text=assignment.target,
                method="",
                receiver=None,
                span=assignment.span,
                args=[],
                kwargs={},
                function=assignment.function,
                order=assignment.order,
            )
            yield from _tools_of(project, found, registry, assignment.value, as_call, facts)


def _tools_of(
    project: ProjectIndex,
    found: FoundTools,
    registry: ToolForm,
    listed: Value | None,
    call: Call,
    facts: ModuleFacts,
) -> Iterator[ToolFacts]:
    """The project functions (or methods of the calling class) of the list ``listed``."""
    for element in listed_elements(project, listed, call, facts).elements:
        for qual in named_functions(project, element, call, facts):
            if found.any_runs(qual):
                continue
            tool = function_tool(
                project,
                qual,
                registry,
                Location(facts.path, _site_span(element, listed, call.span)),
                None,
                {},
            )
            if tool:
                yield tool


def named_functions(
    project: ProjectIndex, value: Value, call: Call, facts: ModuleFacts
) -> tuple[str, ...]:
    """The project functions ``value``, handed over by ``call`` as a tool, names: a
    function (one nested in the calling function too), a bound method (``self.send``), a
    partial of one. Empty when it names none the scan can follow."""
    return project.handed_functions(value, call, facts)


def _site_span(element: Value, listed: Value | None, call_span: Span) -> Span:
    """The element's span when the call's own list holds it, else the call's: the list came
    from a variable, possibly in another module, whose positions are not in this file."""
    written = listed.elements if listed is not None and listed.kind == "list" else ()
    if element.span is not None and any(item is element for item in written):
        return element.span
    return call_span


class Listed(NamedTuple):
    """The items of a tool list, and whether those are all of them: False when a part of it
    is computed at run time (``*extra_tools()``, ``base + [x]`` with ``base`` a parameter)."""

    elements: list[Value]
    complete: bool


def listed_elements(
    project: ProjectIndex, value: Value | None, call: Call, facts: ModuleFacts, depth: int = 0
) -> Listed:
    """The items of a tool list: a literal, or a simple variable holding one (module level,
    possibly imported, or local to the calling function, with what the function appends to
    it), concatenations and ``*`` spreads included. Anything computed is not followed: the
    list is then not complete."""
    if value is None or depth > 4:
        return Listed([], False)
    if value.kind == "const" and value.const is None:
        return Listed([], True)  # ``tools=None``: no tool
    if value.kind == "list":
        elements: list[Value] = []
        complete = True
        for element in value.elements:
            if element.kind == "other" and element.text.startswith("*"):
                spread = _spread_elements(project, element.text[1:], call, facts, depth)
                elements += spread.elements
                complete = complete and spread.complete
            else:
                elements.append(element)
        return Listed(elements, complete)
    if value.kind in {"name", "attr"}:
        held = _variable_value(project, value, call, facts)
        listed = listed_elements(project, held, call, facts, depth + 1)
        if held is not None and held.kind == "list":
            added = _appended_elements(project, value, call, facts, depth)
            return Listed(listed.elements + added.elements, listed.complete and added.complete)
        return listed
    if value.op in {"+", "if"} and value.parts:
        # READ_TOOLS + WRITE_TOOLS  /  [a] + EXTRA  /  [a] if admin else []: either may be handed
        elements = []
        complete = True
        for part in value.parts:
            listed = listed_elements(project, part, call, facts, depth + 1)
            elements += listed.elements
            complete = complete and listed.complete
        return Listed(elements, complete)
    return Listed([], False)


def _appended_elements(
    project: ProjectIndex, value: Value, call: Call, facts: ModuleFacts, depth: int
) -> Listed:
    """What the calling function adds to a local list before handing it over: ``tools =
    []``, then ``tools.append(self.send)`` (often under an ``if`` an option guards) or
    ``tools.extend([...])``; each may be a tool."""
    if value.kind != "name" or call.function is None:
        return Listed([], True)
    added: list[Value] = []
    complete = True
    for other in project.calls_in(call.function):
        if other.order >= call.order or other.receiver != value.text or len(other.args) != 1:
            continue
        if other.method == "append":
            added.append(other.args[0])
        elif other.method == "extend":
            extended = listed_elements(project, other.args[0], call, facts, depth + 1)
            added += extended.elements
            complete = complete and extended.complete
    return Listed(added, complete)


def _spread_elements(
    project: ProjectIndex, name: str, call: Call, facts: ModuleFacts, depth: int
) -> Listed:
    """The items of the list ``*name`` spreads; a spread of anything else is not followed."""
    if not name.isidentifier():
        return Listed([], False)
    qualname = facts.imports.get(name) or f"{facts.module}.{name}"
    held = _variable_value(project, Value(kind="name", text=name, qualname=qualname), call, facts)
    return listed_elements(project, held, call, facts, depth + 1)


def _variable_value(
    project: ProjectIndex, value: Value, call: Call, facts: ModuleFacts
) -> Value | None:
    if value.kind == "name" and call.function is not None:
        local: Value | None = None
        for assignment in project.local_assignments(facts, call.function, value.text):
            if assignment.span.line < call.span.line:
                local = assignment.value
        if local is not None:
            return local
    return project.module_variable(value.qualname)
